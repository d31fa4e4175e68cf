import type { Connection } from 'mongoose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeopleStore } from '../gateway/src/identity/people.ts';
import { authorizeThroughForms, FormAgent, formFields, peopleOf } from './helpers/oauth.ts';
import { claimCodeFor, uniqueAddress } from './helpers/mail.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let people: PeopleStore;
let db: Connection;
// People and the mailbox are shared by every file of the system: addresses no other test uses.
const lucia = uniqueAddress('lucia@andes.example');
const nadie = uniqueAddress('nadie@andes.example');

beforeAll(async () => {
  // The production sign-up quota (10 an hour per client address) is low enough to show within the
  // file; the file's connections leave from an address of its own, so only its sign-ups count.
  sys = await startTestSystem('signup');
  ({ people, db } = await peopleOf(sys));
});
afterAll(async () => {
  await db?.close();
  await sys?.stop();
});

const signup = (body: unknown) => sys.fetch('/v1/auth/agent-signup', { body });

describe('agent sign-up and claim', () => {
  let opened: { workspace_id: string; api_key: string; role: string; claim_url: string };

  it('opens a workspace and an agent key for the person the agent works for', async () => {
    const r = await signup({ email: lucia.replace('lucia', 'Lucia').replace('andes', 'Andes'), workspace_name: 'Panadería Lucía', agent_name: 'Contador IA', name: 'Lucía', country: 'MX' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['api_key', 'claim_url', 'role', 'workspace_id']);
    expect(r.body.role).toBe('agent');
    expect(r.body.api_key).toMatch(/^nk_[0-9A-Za-z]{40}$/);
    expect(r.body.claim_url).toMatch(new RegExp(`^${sys.gatewayUrl}/claim\\?token=[A-Za-z0-9_-]{43}$`));
    expect(r.headers.get('cache-control')).toBe('no-store');
    opened = r.body;
    const ws = await sys.identity.workspace(opened.workspace_id);
    expect(ws).toMatchObject({ name: 'Panadería Lucía', country: 'MX', currency: 'MXN', owner_email: lucia, opened_by: 'agent' });
    // The key acts as the agent: reads work; the role reaches only what `agent` reaches.
    const read = await sys.invoke('parties.list', {}, opened.api_key);
    expect(read.status).toBe(200);
    const tools = await sys.fetch('/v1/tools', { key: opened.api_key });
    expect(tools.body.tools.map((t: { name: string }) => t.name)).not.toContain('agents.create');
  });

  it('holds every non-read call of the agent key (202) until the owner relaxes the policies', async () => {
    const held = await sys.invoke('parties.create', { name: 'Harinas del Valle', kind: 'vendor' }, opened.api_key);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ tool: 'parties.create', status: 'pending_approval', approval_id: expect.stringMatching(/^apr_/) });
    // The agent decides nothing, not even its own request.
    expect((await sys.invoke('approvals.decide', { id: held.body.approval_id, decision: 'approve' }, opened.api_key)).status).toBe(403);
    // The owner relaxes the policy (here through an owner key of the same workspace): the agent's writes run.
    const owner = await sys.key(opened.workspace_id, 'owner');
    const policies = await sys.invoke('policies.list', {}, owner.api_key);
    expect(policies.body.output.rows).toHaveLength(1);
    expect(policies.body.output.rows[0]).toMatchObject({ effect: 'hold', match: { actors: ['agent'], risk: ['write', 'external', 'destructive'] } });
    expect((await sys.invoke('policies.delete', { id: policies.body.output.rows[0].id }, owner.api_key)).status).toBe(200);
    expect((await sys.invoke('parties.create', { name: 'Harinas del Valle', kind: 'vendor' }, opened.api_key)).status).toBe(200);
  });

  it('refuses malformed sign-ups with the offending field', async () => {
    const cases: [unknown, string][] = [
      [{ workspace_name: 'X', agent_name: 'A' }, '/email'],
      [{ email: 'not-an-email', workspace_name: 'X', agent_name: 'A' }, '/email'],
      [{ email: 'a@b.example', agent_name: 'A' }, '/workspace_name'],
      [{ email: 'a@b.example', workspace_name: 'X' }, '/agent_name'],
      [{ email: 'a@b.example', workspace_name: 'X', agent_name: 'A', country: 'Colombia' }, '/country'],
      [{ email: 'a@b.example', workspace_name: 'X', agent_name: 'A', role: 'owner' }, '/role'],
      [[1, 2], ''],
    ];
    for (const [body, field] of cases) {
      const r = await signup(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body).toMatchObject({ code: 'invalid_input', field });
    }
  });

  it('shows the claim form, refuses a short password, makes the person owner once', async () => {
    const agent = new FormAgent(sys.gatewayUrl);
    const page = await agent.get(opened.claim_url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Reclama Panadería Lucía');
    expect(page.text).toContain(lucia);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");

    // The code went to the person's mailbox on the real SMTP server, never to the agent.
    const code = await claimCodeFor(lucia);
    expect(JSON.stringify(opened)).not.toContain(code);
    const short = await agent.post('/claim', { ...formFields(page.text), code, name: 'Lucía Pérez', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('al menos 12 caracteres');

    const noCsrf = await new FormAgent(sys.gatewayUrl).post('/claim', { token: new URL(opened.claim_url).searchParams.get('token')!, name: 'Mallory', password: 'mallory password 1' });
    expect(noCsrf.status).toBe(403);

    // Without the code (what the agent alone can do), the claim is refused.
    const noCode = await agent.post('/claim', { ...formFields(page.text), name: 'Agente', password: 'agent password 12' });
    expect(noCode.status).toBe(400);
    expect(noCode.text).toContain('código no es correcto');
    const done = await agent.post('/claim', { ...formFields(page.text), code, name: 'Lucía Pérez', password: 'pan de yuca 2026' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Panadería Lucía es tuyo');
    const user = await people.userByEmail(lucia);
    expect(user?.name).toBe('Lucía Pérez');
    expect(user?.password_hash).toMatch(/^scrypt\$17\$8\$1\$/);
    expect(await people.roleIn(opened.workspace_id, user!._id)).toBe('owner');

    // Single use: the link no longer works, shown or posted.
    expect((await agent.get(opened.claim_url)).status).toBe(400);
    const again = await agent.post('/claim', { ...formFields(page.text), name: 'Someone', password: 'another password 9' });
    expect(again.status).toBe(400);
    expect(await people.roleIn(opened.workspace_id, user!._id)).toBe('owner');
  });

  it('locks a claim after 5 wrong codes: the agent cannot guess its way to owner', async () => {
    const r = await sys.fetch('/v1/auth/agent-signup', { body: { email: nadie, workspace_name: 'Intento SAS', agent_name: 'Bot' } });
    expect(r.status).toBe(201);
    const agent = new FormAgent(sys.gatewayUrl);
    let page = await agent.get(r.body.claim_url);
    for (let i = 0; i < 5; i++) {
      const wrong = await agent.post('/claim', { ...formFields(page.text), code: String(10_000_000 + i), name: 'Bot', password: 'guessing password 1' });
      if (i < 4) {
        expect(wrong.status).toBe(400);
        page = wrong;
      } else expect(wrong.status).toBe(403);
    }
    const code = await claimCodeFor(nadie);
    page = await agent.get(r.body.claim_url);
    const late = await agent.post('/claim', { ...formFields(page.text), code, name: 'Nadie', password: 'the right code 2026' });
    expect(late.status).toBe(403);
    expect(late.text).toContain('bloqueado');
  });

  it('lets the owner sign in to an app after claiming', async () => {
    const issuer = new URL(sys.gatewayUrl);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    const redirectUri = 'http://127.0.0.1:53682/cb';
    const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Caja', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }, insecure));
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: 'tools:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const wrong = await authorizeThroughForms(sys.gatewayUrl, url, { email: lucia, password: 'not the password' });
    expect(wrong.status).toBe(401);
    const answer = await authorizeThroughForms(sys.gatewayUrl, url, { email: lucia, password: 'pan de yuca 2026' });
    expect(answer.status).toBe(303);
    expect(answer.consentPage).toContain('Panadería Lucía');
    const params = oauth.validateAuthResponse(as, client, new URL(answer.location!), oauth.expectNoState);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure));
    const r = await sys.invoke('parties.list', {}, tokens.access_token);
    expect(r.status).toBe(200);
  });

  it('limits sign-ups per client address', async () => {
    // Nine sign-ups so far in this file (every attempt counts, valid or not); the quota is 10 per hour.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await signup({ email: `p${i}@andes.example`, workspace_name: `WS ${i}`, agent_name: 'Bot' })).status);
    expect(statuses).toEqual([201, 429, 429, 429, 429, 429]);
    const limited = await signup({ email: 'late@andes.example', workspace_name: 'Late', agent_name: 'Bot' });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
