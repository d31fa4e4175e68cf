// Redis is a cache that can be emptied at any moment without opening a door (issue 12, holes 7–9):
// revoked access tokens stay revoked and deny policies keep denying after Redis restarts empty;
// while Redis is down every surface answers 503 unavailable; an open event stream ends when its
// credential is revoked. This file runs its own Redis (the shared one is never killed).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RunningServer } from '../scripts/infra.ts';
import { authorizeThroughForms, FormAgent, formFields } from './helpers/oauth.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-redis-'));
let redis: RunningServer;
let sys: TestSystem;
let owner: string;
let workspace: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  redis = await startRedis({ dir });
  sys = await startTestSystem('redis', { REDIS_URL: redis.url, EVENTS_RECHECK_MS: '500' });
  ({ api_key: owner, workspace_id: workspace } = await sys.workspace('Reinicio SAS'));
}, 180_000);
afterAll(async () => {
  await sys?.stop();
  await redis?.stop();
});

async function restartRedis() {
  process.kill(redis.pid, 'SIGKILL');
  await sleep(300);
  redis = await startRedis({ dir, port: redis.port });
  // Let every service reconnect.
  for (let i = 0; i < 100 && (await sys.fetch('/healthz')).status !== 200; i++) await sleep(100);
}

const insecure = { [oauth.allowInsecureRequests]: true };
const redirectUri = 'http://127.0.0.1:53682/cb';

describe('after Redis restarts empty', () => {
  it('a revoked access token stays revoked', async () => {
    const eva = { email: 'eva@reinicio.example', password: 'eva contraseña 2026' };
    const invite = await sys.invoke('members.invite', { email: eva.email, role: 'member', name: 'Eva' }, owner);
    const agent = new FormAgent(sys.gatewayUrl);
    const page = await agent.get(invite.body.output.invite_url);
    await agent.post('/claim', { ...formFields(page.text), name: 'Eva', password: eva.password });
    const issuer = new URL(sys.gatewayUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Caja', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }, insecure));
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: 'tools', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const answer = await authorizeThroughForms(sys.gatewayUrl, url, eva);
    const params = oauth.validateAuthResponse(as, client, new URL(answer.location!), oauth.expectNoState);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure));
    expect((await sys.invoke('parties.list', {}, tokens.access_token)).status).toBe(200);
    const revoked = await fetch(`${sys.gatewayUrl}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: tokens.access_token, client_id: client.client_id }) });
    expect(revoked.status).toBe(200);
    expect((await sys.invoke('parties.list', {}, tokens.access_token)).status).toBe(401);
    await restartRedis();
    expect((await sys.invoke('parties.list', {}, tokens.access_token)).status).toBe(401);
  }, 60_000);

  it('a deny policy keeps denying: cache versions never repeat after a restart', async () => {
    // Two changes, then crm caches the (empty) policies at that version.
    const a = await sys.invoke('policies.create', { name: 'a', priority: 1, match: { tools: ['projects.create'] }, effect: 'allow' }, owner);
    await sys.invoke('policies.delete', { id: a.body.output.policy.id }, owner);
    expect((await sys.invoke('parties.create', { name: 'antes', kind: 'customer' }, owner)).status).toBe(200);
    await restartRedis();
    // Two changes again: a counter would be back at the version crm's cache holds.
    expect((await sys.invoke('policies.create', { name: 'no parties', priority: 90, match: { tools: ['parties.create'] }, effect: 'deny' }, owner)).status).toBe(200);
    expect((await sys.invoke('policies.create', { name: 'b', priority: 1, match: { tools: ['projects.create'] }, effect: 'allow' }, owner)).status).toBe(200);
    const denied = await sys.invoke('parties.create', { name: 'después', kind: 'customer' }, owner);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('policy_denied');
  }, 60_000);
});

describe('while Redis is down', () => {
  it('every surface answers 503 unavailable and /healthz says so; afterwards all works again', async () => {
    process.kill(redis.pid, 'SIGKILL');
    await sleep(300);
    const rest = await sys.invoke('parties.list', {}, owner);
    expect(rest.status).toBe(503);
    expect(rest.body.code).toBe('unavailable');
    const graph = await sys.fetch('/graphql', { key: owner, body: { query: '{ parties { id } }' } });
    expect(graph.status).toBe(503);
    const health = await sys.fetch('/healthz');
    expect(health.status).toBe(503);
    expect(health.body.redis).toBe('unavailable');
    redis = await startRedis({ dir, port: redis.port });
    for (let i = 0; i < 100 && (await sys.fetch('/healthz')).status !== 200; i++) await sleep(100);
    expect((await sys.invoke('parties.list', {}, owner)).status).toBe(200);
  }, 60_000);
});

describe('an open event stream', () => {
  it('ends within seconds of its key being revoked', async () => {
    const made = await sys.key(workspace, 'viewer');
    const controller = new AbortController();
    const res = await fetch(`${sys.gatewayUrl}/v1/events`, { headers: { authorization: `Bearer ${made.api_key}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const ended = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value);
      }
    })();
    await sleep(300);
    expect((await sys.invoke('api_keys.revoke', { id: made.id }, owner)).status).toBe(200);
    const t0 = Date.now();
    const result = await Promise.race([ended, sleep(8_000).then(() => 'still open')]);
    controller.abort();
    expect(result).not.toBe('still open');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(String(result)).toContain('credential revoked or expired');
  }, 30_000);
});
