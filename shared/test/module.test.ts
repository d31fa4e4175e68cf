import { describe, expect, it } from 'vitest';
import { defineModule, defineTool, fromModules } from '../src/index.ts';
import { compositeResolvers } from '../src/composite.ts';

const tool = (name: string) => defineTool({ name, description: `${name} does one thing.`, risk: 'read', input: { type: 'object', additionalProperties: false, properties: {} }, handler: async () => ({}) });
const source = async () => ({ rows: [] });
const metric = async () => ({ metric: 'bank_reconciliation', unit: 'count', series: [], summary: { value: 0 } });

describe('module manifests', () => {
  it('sums a subgraph from its modules: tools, module list with the planned ones, routes of the readers and guards', () => {
    const bills = defineModule({ name: 'bills', tools: [tool('bills.list'), tool('bills.get')], reads: { sources: { bills: source } }, readGuards: { Bill: 'bills' } });
    const bank = defineModule({ name: 'bank', tools: [tool('bank.import')], reads: { metrics: { bank_reconciliation: metric } } });
    const owned = fromModules('finance', [bills, bank], ['tax', 'bank']);
    expect(owned.modules).toEqual(['bills', 'bank', 'tax']);
    expect(owned.tools.map((t) => t.name)).toEqual(['bills.list', 'bills.get', 'bank.import']);
    // One shared field per kind, named after the subgraph; the module is the one that declared the reader.
    expect(owned.reads).toEqual({ sources: { bills: { field: 'financeRecords', module: 'bills' } }, metrics: { bank_reconciliation: { field: 'financeMetric', module: 'bank' } } });
    expect(owned.readers.sources.bills).toEqual({ module: 'bills', read: source });
    expect(Object.keys(owned.readGuards).sort()).toEqual(['Bill', 'Query.financeMetric', 'Query.financeRecords']);
    // The shared fields guard each call by the module owning what is asked for.
    const guard = owned.readGuards['Query.financeMetric'] as (args: unknown) => string;
    expect(guard({ query: { metric: 'bank_reconciliation' } })).toBe('bank');
    expect((owned.readGuards['Query.financeRecords'] as (args: unknown) => string)({ query: { source: 'bills' } })).toBe('bills');
  });

  it('refuses a tool outside its module and anything claimed twice', () => {
    expect(() => defineModule({ name: 'bills', tools: [tool('bank.import')] })).toThrow(/bank.import is not in the module bills/);
    const a = defineModule({ name: 'a', tools: [], reads: { sources: { s: source } }, readGuards: { X: 'a' } });
    expect(() => fromModules('sg', [a, a])).toThrow(/declared twice/);
    expect(() => fromModules('sg', [a, { ...a, name: 'b', readGuards: {} }])).toThrow(/"s" is declared by two modules/);
    expect(() => fromModules('sg', [a, { ...a, name: 'b', reads: {} }])).toThrow(/read guard of X/);
    // A route of the old shape ({field, module}) is not a reader.
    expect(() => fromModules('sg', [{ name: 'c', tools: [], reads: { sources: { s: { field: 'f', module: 'c' } as never } } }])).toThrow(/not a reader function/);
    // A name the subgraph does not answer is guarded by its first module (the field then refuses the name).
    expect((fromModules('sg', [a]).readGuards['Query.sgRecords'] as (args: unknown) => string)({ query: { source: 'elsewhere' } })).toBe('a');
  });

  it('reads a lane two modules answer through the owner\'s field, merged by date as the gateway merges, leaving out a part out of reach', async () => {
    const entry = (date: string, source: string) => ({ date, kind: 'due', source, title: `${source} ${date}` });
    const calendar = async () => [entry('2026-03-10', 'tax'), entry('2026-03-20', 'tax'), entry('2026-04-01', 'tax')];
    const warnings = async () => [entry('2026-03-10', 'einvoicing'), entry('2026-03-15', 'einvoicing')];
    // The part is declared first: the lane is still the owner's (its route and guard).
    const einvoicing = defineModule({ name: 'einvoicing', tools: [], reads: { agendaParts: { tax: warnings } } });
    const tax = defineModule({ name: 'tax', tools: [], reads: { agenda: { tax: calendar } } });
    const owned = fromModules('finance', [einvoicing, tax]);
    expect(owned.reads).toEqual({ agenda: { tax: { field: 'financeAgenda', module: 'tax' } } });
    expect((owned.readGuards['Query.financeAgenda'] as (args: unknown) => string)({ lane: 'tax' })).toBe('tax');
    const read = (reach: string[]) => compositeResolvers('finance', owned.readers, {} as never, undefined, (_p, module) => reach.includes(module)).financeAgenda(
      null, { lane: 'tax', window: { from: '2026-03-01', to: '2026-04-30', limit: 4 } }, { db: {} as never, workspace: 'ws', principal: {} as never },
    ) as Promise<{ date: string; source: string }[]>;
    // By date, each answerer's order kept within a day (the owner's first), within the limit.
    expect((await read(['tax', 'einvoicing'])).map((e) => `${e.date} ${e.source}`)).toEqual(['2026-03-10 tax', '2026-03-10 einvoicing', '2026-03-15 einvoicing', '2026-03-20 tax']);
    expect((await read(['tax'])).map((e) => e.source)).toEqual(['tax', 'tax', 'tax']);
    // A part of a lane no module answers fails at start-up.
    expect(() => fromModules('finance', [einvoicing])).toThrow(/adds to the agenda lane "tax", which no module of finance answers/);
  });
});
