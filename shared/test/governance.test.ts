import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { canonicalJson, inputDigest } from '../src/governance/digest.ts';
import { Governance } from '../src/governance/index.ts';
import { Ledger } from '../src/governance/ledger.ts';
import { decide, type Policy } from '../src/governance/policies.ts';
import type { Principal } from '../src/principal.ts';

const dbName = `test_governance_${randomBytes(4).toString('hex')}`;
let a: Connection;
let b: Connection;

beforeAll(async () => {
  // Two connections stand for two processes writing one chain.
  a = await connectDatabase(process.env.MONGO_URL!, dbName);
  b = await connectDatabase(process.env.MONGO_URL!, dbName);
  await new Governance(a).init();
});
afterAll(async () => {
  await a.dropDatabase().catch(() => undefined);
  await Promise.all([a.close(), b.close()]);
});

const principal = (workspace: string, overrides: Partial<Principal> = {}): Principal => ({
  workspace, role: 'owner', actor: { type: 'api_key', id: 'key_1' }, credential_id: 'key_1', scopes: null, patterns: null, ...overrides,
});

describe('canonical JSON and digests', () => {
  it('ignores key order and undefined, not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe('{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(inputDigest({ a: 1, b: 2 })).toBe(inputDigest({ b: 2, a: 1 }));
    expect(inputDigest({ a: 1 })).not.toBe(inputDigest({ a: '1' }));
  });
});

describe('the ledger chain under concurrency', () => {
  it('keeps one unbroken chain when two processes append 150 entries each at once', async () => {
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    const la = new Ledger(a);
    const lb = new Ledger(b);
    const rec = (i: number) => ({ principal: principal(ws), tool: 'parties.create', risk: 'write' as const, input_digest: String(i), outcome: 'ok', duration_ms: 1 });
    const entries = await Promise.all([
      ...Array.from({ length: 150 }, (_, i) => la.append(rec(i))),
      ...Array.from({ length: 150 }, (_, i) => lb.append(rec(1000 + i))),
    ]);
    expect(new Set(entries.map((e) => e.seq)).size).toBe(300);
    expect(Math.max(...entries.map((e) => e.seq))).toBe(300);
    const verified = await la.verify(ws);
    expect(verified).toMatchObject({ ok: true, entries: 300, head: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // Another workspace's chain is its own.
    const other = await la.append({ ...rec(1), principal: principal(`${ws}_other`) });
    expect(other.seq).toBe(1);
    const listed = await lb.list(ws, { limit: 5 });
    expect(listed.rows.map((e) => e.seq)).toEqual([300, 299, 298, 297, 296]);
    // Pages continue below the last seq, and end (no next_before) at the chain's start.
    const next = await lb.list(ws, { limit: 5, before: listed.next_before });
    expect(next.rows.map((e) => e.seq)).toEqual([295, 294, 293, 292, 291]);
    const last = await lb.list(ws, { limit: 200, before: 101 });
    expect(last.rows.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 100 - i));
    expect(last.next_before).toBeUndefined();
    // A filter that matches nothing reads a bounded number of windows, then says where to go on.
    const rare = await lb.list(ws, { tool: 'nothing.matches' });
    expect(rare.rows).toEqual([]);
    expect(rare.next_before).toBeUndefined(); // 300 entries fit in one page's windows
  });
});

describe('idempotency records', () => {
  it('lets exactly one of 30 concurrent first uses run, and the other 29 replay its answer', async () => {
    const g = new Governance(a);
    const g2 = new Governance(b);
    const begins = Array.from({ length: 30 }, (_, i) => (i % 2 ? g : g2).idempotency.begin('ws_i', 'key-1', 'parties.create', 'd1'));
    const first = await Promise.race(begins);
    expect(first.kind).toBe('run');
    await new Promise((r) => setTimeout(r, 300));
    if (first.kind === 'run') await first.complete({ status: 200, body: { tool: 'parties.create', output: { n: 1 } } });
    const all = await Promise.all(begins);
    expect(all.filter((s) => s.kind === 'run')).toHaveLength(1);
    const replays = all.filter((s) => s.kind === 'replay');
    expect(replays).toHaveLength(29);
    expect(replays[0]).toEqual({ kind: 'replay', answer: { status: 200, body: { tool: 'parties.create', output: { n: 1 } } } });
    await expect(g2.idempotency.begin('ws_i', 'key-1', 'parties.create', 'other')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    await expect(g2.idempotency.begin('ws_i', 'key-1', 'parties.update', 'd1')).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });

  it('replays the bytes that were sent: a key left undefined in the answer is absent, not null', async () => {
    const g = new Governance(a);
    const first = await g.idempotency.begin('ws_i', 'key-3', 'parties.list', 'd');
    const answer = { status: 422, body: { error: 'x', code: 'invalid_input', field: undefined, extra: { rows: [1, undefined], note: undefined } } };
    if (first.kind === 'run') await first.complete(answer as never);
    const again = await g.idempotency.begin('ws_i', 'key-3', 'parties.list', 'd');
    expect(again.kind).toBe('replay');
    if (again.kind === 'replay') expect(JSON.stringify(again.answer)).toBe(JSON.stringify(answer));
  });

  it('stores an answer as the JSON text sent, one value, and still replays a record stored as a tree before', async () => {
    const g = new Governance(a);
    const first = await g.idempotency.begin('ws_i', 'key-4', 'parties.list', 'd');
    const body = { tool: 'parties.list', output: { rows: [{ id: 'p1', name: 'Ñandú S.A.S.' }], total: 1 } };
    if (first.kind === 'run') await first.complete({ status: 200, body });
    const stored = await g.db.collection('idempotency').findOne({ _id: 'ws_i:key-4' as never });
    expect(stored?.answer).toEqual({ status: 200, json: JSON.stringify(body) });
    // A record from before this change holds the body as a document: it replays unchanged.
    await g.db.collection('idempotency').insertOne({
      _id: 'ws_i:key-5' as never, workspace: 'ws_i', tool: 'parties.list', input_digest: 'd', state: 'done', answer: { status: 200, body }, run: 'r5',
      lease_until: new Date(), created_at: new Date(), expires_at: new Date(Date.now() + 3600_000),
    });
    const legacy = await g.idempotency.begin('ws_i', 'key-5', 'parties.list', 'd');
    expect(legacy).toEqual({ kind: 'replay', answer: { status: 200, body } });
  });

  it('lets a key run again when the first run released it (a server failure is not kept)', async () => {
    const g = new Governance(a);
    const first = await g.idempotency.begin('ws_i', 'key-2', 'parties.create', 'd');
    if (first.kind === 'run') await first.release();
    expect((await g.idempotency.begin('ws_i', 'key-2', 'parties.create', 'd')).kind).toBe('run');
  });
});

describe('policy decisions', () => {
  const base = { workspace: 'w', created_at: '', updated_at: '', conditions: {} };
  const p = (over: Partial<Policy>): Policy => ({ id: 'p', name: 'n', priority: 0, match: {}, effect: 'allow', ...base, ...over });
  const call = (over: Partial<Parameters<typeof decide>[1]> = {}) => ({ tool: 'invoices.post', risk: 'write' as const, principal: principal('w'), amount: null, ...over });

  it('allows when nothing matches, and the highest priority wins', () => {
    expect(decide([], call()).effect).toBe('allow');
    const policies = [p({ priority: 1, effect: 'hold', match: { tools: ['invoices.%'] } }), p({ priority: 5, effect: 'deny', match: { risk: ['write'] } })];
    expect(decide(policies, call()).effect).toBe('deny');
    expect(decide(policies, call({ risk: 'read', tool: 'invoices.list' })).effect).toBe('hold');
  });

  it('breaks priority ties towards caution', () => {
    expect(decide([p({ effect: 'allow' }), p({ effect: 'ask' }), p({ effect: 'hold' })], call()).effect).toBe('ask');
  });

  it('matches actors, roles and amounts over a threshold', () => {
    const agentHold = p({ effect: 'hold', match: { actors: ['agent'] } });
    expect(decide([agentHold], call()).effect).toBe('allow');
    expect(decide([agentHold], call({ principal: principal('w', { actor: { type: 'agent', id: 'a' } }) })).effect).toBe('hold');
    const big = p({ effect: 'ask', conditions: { amount_over: 1_000_000 } });
    expect(decide([big], call({ amount: 1_000_000 })).effect).toBe('allow');
    expect(decide([big], call({ amount: 1_000_001 })).effect).toBe('ask');
    expect(decide([big], call({ amount: null })).effect).toBe('allow');
    expect(decide([p({ effect: 'deny', match: { roles: ['viewer'] } })], call()).effect).toBe('allow');
  });

  it('matches the facts a tool declares about a call (a deal moving into a won stage), each among its listed values', () => {
    const wins = p({ effect: 'hold', conditions: { amount_over: 500, facts: { stage_kind: ['won'] } } });
    expect(decide([wins], call({ amount: 501, facts: { stage_kind: 'won' } })).effect).toBe('hold');
    expect(decide([wins], call({ amount: 501, facts: { stage_kind: 'open' } })).effect).toBe('allow');
    expect(decide([wins], call({ amount: 500, facts: { stage_kind: 'won' } })).effect).toBe('allow');
    // A tool that declares no such fact is never selected by it.
    expect(decide([wins], call({ amount: 501 })).effect).toBe('allow');
    expect(decide([wins], call({ amount: 501, facts: { stage_kind: null } })).effect).toBe('allow');
    const either = p({ effect: 'deny', conditions: { facts: { stage_kind: ['won', 'lost'], pipeline: ['ventas'] } } });
    expect(decide([either], call({ facts: { stage_kind: 'lost', pipeline: 'ventas' } })).effect).toBe('deny');
    expect(decide([either], call({ facts: { stage_kind: 'lost', pipeline: 'renov' } })).effect).toBe('allow');
  });

  it('never takes from an owner the governance floor: policies.list/update/delete, approvals.list/get/decide (issue 31, finding 12)', () => {
    const lockOut = [p({ priority: 1_000_000, effect: 'ask' }), p({ priority: 1_000_000, effect: 'deny', match: { roles: ['owner'] } }), p({ priority: 1_000_000, effect: 'hold', match: { actors: ['api_key'] } })];
    const owner = principal('w', { role: 'owner' });
    for (const tool of ['policies.list', 'policies.update', 'policies.delete', 'approvals.list', 'approvals.get', 'approvals.decide']) {
      expect(decide(lockOut, call({ tool, principal: owner })), tool).toEqual({ effect: 'allow', policy: null });
      // Everyone else, and every other tool, stays under the policies.
      expect(decide(lockOut, call({ tool, principal: principal('w', { role: 'admin' }) })).effect, tool).toBe('ask');
    }
    expect(decide(lockOut, call({ tool: 'policies.create', principal: owner })).effect).toBe('deny');
    expect(decide(lockOut, call({ tool: 'invoices.post', principal: owner })).effect).toBe('deny');
  });
});

describe('approval expiry', () => {
  it('expires pending approvals after 7 days and fails approved ones nobody ran within a day', async () => {
    const g = new Governance(a);
    const ws = `ws_${randomBytes(4).toString('hex')}`;
    const now = new Date('2026-11-01T12:00:00Z');
    const create = (id: string) => g.approvals.create({ id, workspace: ws, subgraph: 'crm', mode: 'hold', tool: 'parties.create', input: {}, inputDigest: 'd', principal: principal(ws) }, now);
    await create('apr_old');
    await create('apr_stale');
    await create('apr_fresh');
    const decidedAt = new Date(now.getTime() + 3600_000);
    expect(await g.approvals.decide(ws, 'apr_stale', 'approved', { type: 'api_key', id: 'key_2' }, null, decidedAt)).not.toBeNull();

    const sixDays = new Date(now.getTime() + 6 * 86400_000);
    await g.approvals.expire(new Date(now.getTime() + 3600_000 * 12));
    expect((await g.approvals.get(ws, 'apr_stale'))!.status).toBe('approved');
    await g.approvals.expire(sixDays);
    expect((await g.approvals.get(ws, 'apr_stale'))!.status).toBe('failed');
    expect((await g.approvals.get(ws, 'apr_stale'))!.reason).toMatch(/24 hours/);
    expect((await g.approvals.get(ws, 'apr_old'))!.status).toBe('pending');

    const eightDays = new Date(now.getTime() + 8 * 86400_000);
    // Past its time it reads as expired even before the sweep, and cannot be decided.
    const { approvalView } = await import('../src/governance/approvals.ts');
    expect(approvalView((await g.approvals.get(ws, 'apr_old'))!, eightDays).status).toBe('expired');
    expect(await g.approvals.decide(ws, 'apr_old', 'approved', { type: 'api_key', id: 'key_2' }, null, eightDays)).toBeNull();
    expect(await g.approvals.expire(eightDays)).toBe(2);
    expect((await g.approvals.get(ws, 'apr_old'))!.status).toBe('expired');
    expect((await g.approvals.get(ws, 'apr_fresh'))!.status).toBe('expired');
  });
});
