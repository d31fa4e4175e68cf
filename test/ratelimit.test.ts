import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// Two gateway instances on one Redis enforce one limit per credential and per workspace.
let sys: TestSystem;
let second: { url: string };

beforeAll(async () => {
  sys = await startTestSystem('limits', { RATE_LIMIT_PER_CREDENTIAL: '6/60', RATE_LIMIT_PER_WORKSPACE: '10/60' });
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
});
