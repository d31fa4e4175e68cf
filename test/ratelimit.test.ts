import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

// Two gateway instances on one Redis enforce one limit per credential and per workspace. The quotas
// are the gateway's alone: the file is lent a system and both its gateways run them.
let sys: TestSystem;
let second: { url: string };

beforeAll(async () => {
  sys = await startTestSystem('limits', OWN_SYSTEM_SETTINGS, { gatewayEnv: { RATE_LIMIT_PER_CREDENTIAL: '6/60', RATE_LIMIT_PER_WORKSPACE: '10/60' } });
  second = await sys.startAnotherGateway();
});
afterAll(async () => {
  await sys?.stop();
});

async function invokeAt(base: string, key: string) {
  const res = await fetch(`${base}/v1/tools/parties.list:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('rate limits shared by every gateway', () => {
  it('counts one credential across two gateway instances, with the contract headers', async () => {
    const ws = await sys.workspace('Limitada SAS');
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await invokeAt(sys.gatewayUrl, ws.api_key));
    for (let i = 0; i < 3; i++) answers.push(await invokeAt(second.url, ws.api_key));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers[0].headers.get('ratelimit-policy')).toBe('"credential";q=6;w=60, "workspace";q=10;w=60');
    expect(answers[0].headers.get('ratelimit')).toMatch(/^"credential";r=5;t=\d+$/);
    expect(answers[5].headers.get('ratelimit')).toMatch(/^"credential";r=0;t=\d+$/);
    const limited = await invokeAt(second.url, ws.api_key);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: expect.any(String), code: 'rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit')).toMatch(/^"credential";r=0;t=\d+$/);
    const limitedToo = await invokeAt(sys.gatewayUrl, ws.api_key);
    expect(limitedToo.status).toBe(429);
    // The refusal is on the ledger of the workspace (another key reads it).
    const reader = await sys.key(ws.workspace_id, 'owner');
    const ledger = await invokeAt(sys.gatewayUrl, reader.api_key).then(() => fetch(`${sys.gatewayUrl}/v1/tools/ledger.list:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${reader.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ tool: 'parties.list' }),
    })).then((r) => r.json() as Promise<any>);
    expect(ledger.output.rows.filter((e: { outcome: string }) => e.outcome === 'rate_limited')).toHaveLength(2);
  });

  it('counts the workspace across its credentials', async () => {
    const ws = await sys.workspace('Cupo Compartido SAS');
    const keys = [ws.api_key, (await sys.key(ws.workspace_id, 'owner')).api_key];
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await invokeAt(sys.gatewayUrl, keys[0])).status, (await invokeAt(second.url, keys[1])).status);
    expect(statuses).toEqual(Array(10).fill(200));
    const next = await invokeAt(sys.gatewayUrl, (await sys.key(ws.workspace_id, 'owner')).api_key);
    expect(next.status).toBe(429);
    expect(next.body.error).toMatch(/workspace/);
  });

  // A gateway that has checked a key counts its later calls in one round trip, only while the
  // shared cache entry is the one it checked: an entry gone or overwritten is seen on that call.
  it('counts each call once, and sees an expired cache entry and a revocation on the very next call', async () => {
    const ws = await sys.workspace('Una Vuelta SAS');
    const r = (a: { headers: Headers }) => a.headers.get('ratelimit');
    expect(r(await invokeAt(sys.gatewayUrl, ws.api_key))).toMatch(/^"credential";r=5;/);
    expect(r(await invokeAt(sys.gatewayUrl, ws.api_key))).toMatch(/^"credential";r=4;/);
    // The shared entry expires (deleted here, independently of the gateway's code): read again, counted once.
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      const entry = `cred:${createHash('sha256').update(ws.api_key).digest('hex')}`;
      expect(await redis.del(entry)).toBe(1);
      expect(r(await invokeAt(sys.gatewayUrl, ws.api_key))).toMatch(/^"credential";r=3;/);
      expect(await redis.exists(entry)).toBe(1);
      expect(r(await invokeAt(sys.gatewayUrl, ws.api_key))).toMatch(/^"credential";r=2;/);
    } finally {
      redis.disconnect();
    }
    // Revoked through the other gateway: refused at once here, and not counted against the workspace.
    const owner = await sys.key(ws.workspace_id, 'owner');
    const revoked = await fetch(`${second.url}/v1/tools/api_keys.revoke:invoke`, {
      method: 'POST', headers: { authorization: `Bearer ${owner.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: ws.key_id }),
    });
    expect(revoked.status).toBe(200);
    const refused = await invokeAt(sys.gatewayUrl, ws.api_key);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('unauthenticated');
    // Workspace: 4 calls of the first key + the revocation + this call = 6 of 10 (r=4); the refused call counted nothing.
    const fresh = await sys.key(ws.workspace_id, 'owner');
    expect(r(await invokeAt(sys.gatewayUrl, fresh.api_key))).toMatch(/^"workspace";r=4;t=\d+$/);
  });
});
