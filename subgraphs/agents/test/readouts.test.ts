import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate, newId, type Principal } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../src/server.ts';

let svc: TestSubgraph;
beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

const records = (p: Principal, q: unknown) => svc.graphql('query($q: JSON!) { agentsRecords(query: $q) }', { q }, p);
const metric = (p: Principal, q: unknown) => svc.graphql('query($q: JSON!) { agentsMetric(query: $q) }', { q }, p);
const ok = async (r: Promise<{ body: any }>, field: string) => {
  const { body } = await r;
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data[field];
};
async function call(p: Principal, tool: string, input: unknown) {
  const r = await svc.call(tool, input, p);
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return r.output;
}

describe('agentsRecords (records.list for agents and policies)', () => {
  it('lists agents newest first and policies by priority, searching case-insensitively', async () => {
    const owner = testPrincipal();
    const gpt = (await call(owner, 'ai_models.create', { name: 'GPT', base_url: 'https://api.openai.com/v1', model: 'gpt-5', prices: { input: 125, output: 1000 } })).ai_model;
    await call(owner, 'agents.create', { name: 'Cobranza', model: 'embedded', description: 'Sigue facturas vencidas' });
    await call(owner, 'agents.create', { name: 'Compras', model: gpt.id, status: 'paused' });
    const all = await ok(records(owner, { source: 'agents' }), 'agentsRecords');
    expect(all).toMatchObject({ source: 'agents', total: 2 });
    expect(all.rows.map((r: any) => r.name)).toEqual(['Compras', 'Cobranza']);
    expect(all.rows[1]).toMatchObject({ name: 'Cobranza', model: 'embedded', status: 'active', tools: [] });
    expect((await ok(records(owner, { source: 'agents', search: 'FACTURAS' }), 'agentsRecords')).rows.map((r: any) => r.name)).toEqual(['Cobranza']);
    expect((await ok(records(owner, { source: 'agents', search: 'EMBED' }), 'agentsRecords')).rows.map((r: any) => r.name)).toEqual(['Cobranza']);
    // status is ignored for agents (specification §2.5).
    expect((await ok(records(owner, { source: 'agents', status: 'active' }), 'agentsRecords')).total).toBe(2);

    await call(owner, 'policies.create', { name: 'Pagos grandes', priority: 10, match: { tools: ['payments.%'] }, conditions: { amount_over: 100_000 }, effect: 'ask' });
    await call(owner, 'policies.create', { name: 'Sin borrar', priority: 50, match: { risk: ['destructive'] }, effect: 'deny' });
    const policies = await ok(records(owner, { source: 'policies' }), 'agentsRecords');
    expect(policies).toMatchObject({ source: 'policies', total: 2 });
    expect(policies.rows.map((r: any) => r.name)).toEqual(['Sin borrar', 'Pagos grandes']);
    expect(policies.rows[1]).toMatchObject({ name: 'Pagos grandes', priority: 10, effect: 'ask', match: { tools: ['payments.%'] }, conditions: { amount_over: 100_000 } });
    expect(policies.rows[1].workspace).toBeUndefined();
    expect((await ok(records(owner, { source: 'policies', search: 'PAGOS', limit: 1 }), 'agentsRecords')).rows.map((r: any) => r.name)).toEqual(['Pagos grandes']);
  });

  it('refuses what does not fit with the contract code and a JSON Pointer', async () => {
    const owner = testPrincipal();
    const cases: [unknown, string][] = [
      [{ source: 'agents', kind: 'x' }, '/kind'],
      [{ source: 'policies', ref: 'x' }, '/ref'],
      [{ source: 'policies', cursor: 'eyJwIjo1fQ.AAAAAAAAAAAAAAAAAAAAAA' }, '/cursor'],
      [{ source: 'agents', limit: 500 }, '/limit'],
      [{ source: 'hasOwnProperty' }, '/source'],
      [{ source: 'members' }, '/source'],
    ];
    for (const [q, field] of cases) {
      const r = await records(owner, q);
      expect(r.body.errors[0].extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field });
    }
  });

  it('answers only the caller\'s workspace, each source to callers who reach its module', async () => {
    const a = testPrincipal();
    const b = testPrincipal();
    await call(a, 'agents.create', { name: 'Solo A', model: 'embedded' });
    await call(a, 'policies.create', { name: 'Solo A', priority: 1, match: {}, effect: 'allow' });
    expect(await ok(records(b, { source: 'agents' }), 'agentsRecords')).toEqual({ source: 'agents', rows: [], total: 0 });
    expect(await ok(records(b, { source: 'policies' }), 'agentsRecords')).toEqual({ source: 'policies', rows: [], total: 0 });
    const agentsOnly = { ...a, patterns: ['agents.%'] };
    expect((await ok(records(agentsOnly, { source: 'agents' }), 'agentsRecords')).total).toBe(1);
    expect((await records(agentsOnly, { source: 'policies' })).body.errors[0].extensions.code).toBe('policy_denied');
    expect((await metric(agentsOnly, { metric: 'activity' })).body.errors[0].extensions.code).toBe('policy_denied');
    const ledgerOnly = { ...a, patterns: ['ledger.%'] };
    expect((await ok(metric(ledgerOnly, { metric: 'activity', days: 1 }), 'agentsMetric')).summary.value).toBeGreaterThan(0);
    expect((await metric(ledgerOnly, { metric: 'approvals_pending' })).body.errors[0].extensions.code).toBe('policy_denied');
  });
});

describe('agentsMetric (metrics.query approvals_pending and activity)', () => {
  it('counts the ledger entries of the window per day, with the top tools', async () => {
    const owner = testPrincipal();
    for (const n of ['Uno', 'Dos', 'Tres']) await call(owner, 'agents.create', { name: n, model: 'embedded' });
    await call(owner, 'agents.list', {});
    const refused = await svc.call('agents.create', { name: 'Uno', model: 'embedded' }, owner); // conflict: still an entry
    expect(refused.code).toBe('conflict');
    const r = await ok(metric(owner, { metric: 'activity', days: 7, limit: 2, target: 100 }), 'agentsMetric');
    const today = localDate(new Date());
    expect(r).toMatchObject({ metric: 'activity', unit: 'count', summary: { value: 5, target: 100 } });
    expect(r.rows).toEqual([{ tool: 'agents.create', count: 4, by_agent_runs: 0 }, { tool: 'agents.list', count: 1, by_agent_runs: 0 }]);
    expect(r.series).toHaveLength(7);
    expect(r.series.at(-1)).toEqual({ period: today, period_end: today, value: 5 });
    expect(r.series.slice(0, 6).every((p: any) => p.value === 0)).toBe(true);
    const compared = await ok(metric(owner, { metric: 'activity', days: 7, compare: 'previous_period' }), 'agentsMetric');
    expect(compared.summary).toEqual({ value: 5, previous: 0 });
    // A window before anything happened.
    const before = await ok(metric(owner, { metric: 'activity', from: '2020-01-01', to: '2020-01-31', interval: 'week' }), 'agentsMetric');
    expect(before.summary.value).toBe(0);
    expect(before.rows).toEqual([]);
  });

  it('counts approvals pending now, and approvals requested per bucket', async () => {
    const owner = testPrincipal();
    await call(owner, 'policies.create', { name: 'Retener agentes', priority: 1, match: { tools: ['agents.create'] }, effect: 'hold' });
    const held = await svc.call('agents.create', { name: 'Retenido', model: 'embedded' }, owner);
    expect(held.pending).toBe(true);
    // Two older requests, made straight in the store: one still pending (7 days not yet past), one decided.
    const base = { workspace: owner.workspace, subgraph: 'agents', mode: 'hold' as const, tool: 'agents.create', input: {}, inputDigest: 'x', principal: owner };
    const now = Date.now();
    await svc.governance.approvals.create({ ...base, id: newId('apr') }, new Date(now - 3 * 86_400_000));
    const old = await svc.governance.approvals.create({ ...base, id: newId('apr') }, new Date(now - 3 * 86_400_000));
    await svc.governance.approvals.decide(owner.workspace, old._id, 'rejected', { type: 'member', id: 'mem_x' }, null);
    const r = await ok(metric(owner, { metric: 'approvals_pending', days: 7 }), 'agentsMetric');
    expect(r).toMatchObject({ metric: 'approvals_pending', unit: 'count', summary: { value: 2 } });
    expect(r.series.map((p: any) => p.value)).toEqual([0, 0, 0, 2, 0, 0, 1]);
    expect((await ok(metric(testPrincipal(), { metric: 'approvals_pending' }), 'agentsMetric')).summary.value).toBe(0);
  });

  it('refuses what does not fit with the contract code and a JSON Pointer', async () => {
    const owner = testPrincipal();
    const cases: [unknown, string][] = [
      [{ metric: 'revenue' }, '/metric'],
      [{ metric: 'activity', to: '2026-01-01' }, '/from'],
      [{ metric: 'activity', from: '2026-01-01', to: '2027-06-01' }, '/to'],
      [{ metric: 'approvals_pending', compare: 'yesterday' }, '/compare'],
      [{ metric: 'activity', limit: 0 }, '/limit'],
    ];
    for (const [q, field] of cases) {
      const r = await metric(owner, q);
      expect(r.body.errors[0].extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field });
    }
  });
});
