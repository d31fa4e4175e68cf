import { describe, expect, it } from 'vitest';
import { collectReads, readModule } from '../src/index.ts';

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
});
