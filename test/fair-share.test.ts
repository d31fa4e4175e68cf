import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAIR_SHARE_DEFAULTS } from '@cuadra/shared';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// A fair share per workspace (issue 33), over real HTTP on the worker's shared system with the
// default limits (4 calls of a workspace at once per process, 64 waiting): one workspace bursting
// far past its share gets its surplus refused 429 `rate_limited` with Retry-After — refused calls
// do nothing —, and another workspace calling meanwhile is served, never behind the burst.
let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem('fairshare');
});
afterAll(async () => {
  await sys?.stop();
});

describe('a fair share per workspace', () => {
  it('refuses a burst past its share with rate_limited and Retry-After, does nothing for the refused calls, and serves another workspace throughout', async () => {
    const busy = await sys.workspace('Ráfaga SAS');
    const other = await sys.workspace('Vecina SAS');
    const burst = 2 * (FAIR_SHARE_DEFAULTS.slots + FAIR_SHARE_DEFAULTS.queue);
    let settled = 0;
    const answers = Array.from({ length: burst }, (_, i) => sys.invoke('parties.create', { kind: 'customer', name: `Ráfaga ${i} SAS` }, busy.api_key).finally(() => { settled++; }));
    // Meanwhile the other workspace calls one after another: each answered while the burst is still being served.
    const otherAnswers: { status: number; burstSettledBefore: number }[] = [];
    while (otherAnswers.length < 3) {
      const r = await sys.invoke('parties.list', { limit: 5 }, other.api_key);
      otherAnswers.push({ status: r.status, burstSettledBefore: settled });
    }
    const all = await Promise.all(answers);
    expect(otherAnswers.map((a) => a.status)).toEqual([200, 200, 200]);
    // Ordering, not timing: the other workspace's third answer came before the burst's last one.
    expect(otherAnswers[2].burstSettledBefore).toBeLessThan(burst);

    const created = all.filter((r) => r.status === 200);
    const refused = all.filter((r) => r.status !== 200);
    expect(created.length + refused.length).toBe(burst);
    // At least the calls past `slots + queue` of the first wave were refused; at least that many ran.
    expect(refused.length).toBeGreaterThan(0);
    expect(created.length).toBeGreaterThanOrEqual(FAIR_SHARE_DEFAULTS.slots + FAIR_SHARE_DEFAULTS.queue);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: expect.any(String), code: 'rate_limited' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The contract's RateLimit headers are on every invoke answer, this refusal's included.
      expect(r.headers.get('ratelimit-policy')).toMatch(/"credential";q=\d+;w=\d+/);
    }
    // Nothing of a refused call was done: the workspace holds exactly the parties answered 200.
    const names = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await sys.output('parties.list', { limit: 100, ...(cursor ? { cursor } : {}) }, busy.api_key);
      for (const p of page.rows) names.add(p.name);
      cursor = page.next_cursor;
    } while (cursor);
    expect([...names].sort()).toEqual(created.map((r) => r.body.output.party.name).sort());
    // Each refusal is on the workspace's ledger as what it was.
    const outcomes: string[] = [];
    cursor = undefined;
    do {
      const page = await sys.output('ledger.list', { tool: 'parties.create', limit: 200, ...(cursor ? { cursor } : {}) }, busy.api_key);
      outcomes.push(...page.rows.map((e: { outcome: string }) => e.outcome));
      cursor = page.next_cursor;
    } while (cursor);
    expect(outcomes.filter((o) => o === 'rate_limited').length).toBe(refused.length);
    expect(outcomes.filter((o) => o === 'ok').length).toBe(created.length);
  });
});
