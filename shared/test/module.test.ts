import { describe, expect, it } from 'vitest';
import { defineModule, defineTool, fromModules } from '../src/index.ts';

const tool = (name: string) => defineTool({ name, description: `${name} does one thing.`, risk: 'read', input: { type: 'object', additionalProperties: false, properties: {} }, handler: async () => ({}) });

describe('module manifests', () => {
  it('sums a subgraph from its modules: tools, module list with the planned ones, reads and guards', () => {
    const bills = defineModule({ name: 'bills', tools: [tool('bills.list'), tool('bills.get')], reads: { sources: { bills: { field: 'financeRecords', module: 'bills' } } }, readGuards: { Bill: 'bills' } });
    const bank = defineModule({ name: 'bank', tools: [tool('bank.import')], reads: { metrics: { bank_reconciliation: { field: 'financeMetric', module: 'bank' } } } });
    const owned = fromModules([bills, bank], ['tax', 'bank']);
    expect(owned.modules).toEqual(['bills', 'bank', 'tax']);
    expect(owned.tools.map((t) => t.name)).toEqual(['bills.list', 'bills.get', 'bank.import']);
    expect(owned.reads).toEqual({ sources: { bills: { field: 'financeRecords', module: 'bills' } }, metrics: { bank_reconciliation: { field: 'financeMetric', module: 'bank' } } });
    expect(owned.readGuards).toEqual({ Bill: 'bills' });
  });

  it('refuses a tool outside its module and anything claimed twice', () => {
    expect(() => defineModule({ name: 'bills', tools: [tool('bank.import')] })).toThrow(/bank.import is not in the module bills/);
    const a = defineModule({ name: 'a', tools: [], reads: { sources: { s: { field: 'f', module: 'a' } } }, readGuards: { X: 'a' } });
    expect(() => fromModules([a, a])).toThrow(/declared twice/);
    expect(() => fromModules([a, { ...a, name: 'b', readGuards: {} }])).toThrow(/"s" is declared by two modules/);
    expect(() => fromModules([a, { ...a, name: 'b', reads: {} }])).toThrow(/read guard of X/);
  });
});
