import { describe, expect, it } from 'vitest';
import { collectReads, onceInRead, readModule, type Governance, type MetricReader } from '../src/index.ts';
import { compositeResolvers } from '../src/composite.ts';

const sdl = (fields: string) => `type Query {\n${fields}\n}`;

describe('composite reads declared by subgraphs', () => {
  it('collects each subgraph’s sources, metrics and lanes with their owner', () => {
    const reads = collectReads([
      { name: 'crm', typeDefs: sdl('crmRecords(query: JSON!): JSON!'), reads: { sources: { parties: { field: 'crmRecords', module: 'parties' } } } },
      { name: 'finance', typeDefs: sdl('financeRecords(query: JSON!): JSON!\n  financeMetric(query: JSON!): JSON!'), reads: {
        sources: { bills: { field: 'financeRecords', module: 'bills' } },
        metrics: { expenses: { field: 'financeMetric', module: 'bills' } },
      } },
      { name: 'empty', typeDefs: sdl('x: Int') },
    ]);
    expect(reads).toEqual({
      sources: { parties: { field: 'crmRecords', module: 'parties', subgraph: 'crm' }, bills: { field: 'financeRecords', module: 'bills', subgraph: 'finance' } },
      metrics: { expenses: { field: 'financeMetric', module: 'bills', subgraph: 'finance' } },
      agenda: {},
      boards: {},
    });
    expect(readModule(reads.sources, 'bills', 'x')).toBe('bills');
    expect(readModule(reads.sources, 'constructor', 'x')).toBe('x');
    expect(readModule(reads.sources, 42, 'x')).toBe('x');
  });

  it('fails the build on a name claimed twice or a field the schema lacks', () => {
    const one = { name: 'a', typeDefs: sdl('aRecords(query: JSON!): JSON!'), reads: { sources: { parties: { field: 'aRecords', module: 'm' } } } };
    expect(() => collectReads([one, { ...one, name: 'b' }])).toThrow(/"parties" is declared by both a and b/);
    expect(() => collectReads([{ ...one, reads: { sources: { parties: { field: 'nowhere', module: 'm' } } } }])).toThrow(/nowhere, which its schema does not define/);
  });

  it('lets several subgraphs answer one agenda lane (the gateway merges them), but not one subgraph twice', () => {
    const lane = (name: string, module: string) => ({ name, typeDefs: sdl(`${name}Agenda(lane: String!, window: JSON!): JSON!`), reads: { agenda: { recurring: { field: `${name}Agenda`, module } } } });
    const reads = collectReads([lane('invoices', 'invoices'), lane('payroll', 'payroll')]);
    expect(reads.agenda).toEqual({ recurring: { field: 'invoicesAgenda', module: 'invoices', subgraph: 'invoices', also: [{ field: 'payrollAgenda', module: 'payroll', subgraph: 'payroll' }] } });
    expect(() => collectReads([lane('invoices', 'invoices'), lane('invoices', 'bills')])).toThrow(/"recurring" is declared by both invoices and invoices/);
    expect(() => collectReads([lane('invoices', 'invoices'), { ...lane('payroll', 'payroll'), typeDefs: sdl('x: Int') }])).toThrow(/payrollAgenda, which its schema does not define/);
  });

  it('runs the work a read shares with its operation once per operation, and keeps no failure', async () => {
    let runs = 0;
    let fail = false;
    const read: MetricReader = async (q, ctx) => {
      const n = await onceInRead(ctx, 'repair', async () => {
        runs += 1;
        await new Promise((r) => setTimeout(r, 5));
        if (fail) throw new Error('store down');
        return runs;
      });
      return { metric: q.metric, n };
    };
    const fields = compositeResolvers('finance', { sources: {}, metrics: { revenue: { module: 'invoices', read }, expenses: { module: 'bills', read } }, agenda: {}, boards: {} }, {} as Governance);
    const field = fields.financeMetric;
    const operation = { db: {} as never, workspace: 'ws_a', principal: {} as never };
    // Three fields of one operation (a dashboard's reads), concurrently: one run.
    const answers = await Promise.all(['revenue', 'expenses', 'revenue'].map((metric) => field(null, { query: { metric } }, operation)));
    expect(runs).toBe(1);
    expect(answers.map((a) => (a as { n: number }).n)).toEqual([1, 1, 1]);
    // Another operation runs it again.
    await field(null, { query: { metric: 'revenue' } }, { ...operation });
    expect(runs).toBe(2);
    // A failure is shared by the fields waiting on it, then forgotten: the next field of the same operation tries again.
    const failing = { ...operation };
    fail = true;
    await expect(Promise.all([field(null, { query: { metric: 'revenue' } }, failing), field(null, { query: { metric: 'expenses' } }, failing)])).rejects.toThrow('store down');
    expect(runs).toBe(3);
    fail = false;
    expect(await field(null, { query: { metric: 'revenue' } }, failing)).toEqual({ metric: 'revenue', n: 4 });
    // Outside an operation (a tool calling a reader directly) the work simply runs.
    expect(await onceInRead({}, 'repair', async () => 'ran')).toBe('ran');
  });
});
