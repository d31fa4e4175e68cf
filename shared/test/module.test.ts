import { describe, expect, it } from 'vitest';
import { defineModule, defineTool, fromModules } from '../src/index.ts';

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
});
