import { defineTool, toolMutationName, type Tool } from '@cuadra/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSubgraphSources } from '../../scripts/build.ts';
import { composeSupergraph, type BuildOutput, type SubgraphSource } from '../src/compose.ts';
import { SUBGRAPHS } from '../src/subgraphs.ts';

const FEDERATION = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key", "@shareable"])';

function tool(name: string): Tool<any, any> {
  return defineTool({ name, description: `Test tool ${name} for composition.`, risk: 'read', input: { type: 'object', additionalProperties: false, properties: {} }, handler: async () => ({}) });
}

/** A small valid subgraph: one query field of its own and its tool mutation. */
function source(name: string, body: string, tools: Tool<any, any>[] = []): SubgraphSource {
  return {
    name,
    tools,
    typeDefs: `${FEDERATION}
${body}
scalar JSON
type Mutation { ${toolMutationName(name)}(tool: String!, input: JSON!): JSON! }
`,
  };
}

describe('composeSupergraph on the real subgraphs', () => {
  let sources: SubgraphSource[];
  let output: BuildOutput;

  beforeAll(async () => {
    sources = await loadSubgraphSources();
    output = composeSupergraph(sources);
  });

  it('loads the seven subgraphs', () => {
    expect(sources.map((s) => s.name).sort()).toEqual(['agents', 'crm', 'inventory', 'invoices', 'marketing', 'payroll', 'projects']);
    expect(SUBGRAPHS.map((s) => s.name).sort()).toEqual(sources.map((s) => s.name).sort());
  });

  it('yields a supergraph SDL with every subgraph and its tool mutation', () => {
    const sdl = output.supergraphSdl;
    expect(sdl).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/join\/v0\.\d+"/);
    for (const { name } of sources) {
      expect(sdl).toContain(`${toolMutationName(name)}(tool: String!, input: JSON!, idempotencyKey: String, approvalId: String, dryRun: Boolean): JSON!`);
      expect(sdl).toContain(`url: "http://${name}:4000/graphql"`);
    }
    expect(sdl).toContain('invokeCrmTool');
    expect(sdl).toContain('invokeInvoicesTool');
    expect(sdl).toContain('invokePayrollTool');
    expect(sdl).toContain('invokeProjectsTool');
    expect(sdl).toContain('invokeAgentsTool');
  });

  it('yields a catalog with tools of all six subgraphs, each owned by the subgraph that declares it', () => {
    const { catalog } = output;
    expect(new Set(catalog.map((e) => e.subgraph))).toEqual(new Set(['crm', 'invoices', 'payroll', 'projects', 'agents', 'marketing', 'inventory']));
    const declared = sources.flatMap((s) => s.tools.map((t) => [t.name, s.name] as const));
    expect(catalog).toHaveLength(declared.length);
    for (const [name, subgraph] of declared) expect(catalog.find((e) => e.name === name)?.subgraph).toBe(subgraph);
    expect(catalog.find((e) => e.name === 'parties.list')?.subgraph).toBe('crm');
  });

  it('catalog entries are complete, unique and sorted by name', () => {
    const { catalog } = output;
    const names = catalog.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort((a, b) => a.localeCompare(b))).toEqual(names);
    for (const e of catalog) {
      expect(e.module).toBe(e.name.split('.')[0]);
      expect(e.scope).toBe(e.module === 'sites' ? 'sites.edit' : e.risk === 'read' ? 'tools:read' : 'tools');
      expect(e.input_schema.type).toBe('object');
      expect(e.annotations.readOnlyHint).toBe(e.risk === 'read');
      expect(e.max_input_bytes).toBeGreaterThan(0);
    }
  });
});

describe('composeSupergraph refuses a broken set', () => {
  it('a small valid set composes (the broken cases below differ only in what breaks them)', () => {
    const out = composeSupergraph([
      source('crm', 'type Query { party(id: ID!): String }', [tool('parties.get')]),
      source('invoices', 'type Query { invoice(id: ID!): String }', [tool('invoices.get')]),
    ]);
    expect(out.catalog.map((e) => e.name)).toEqual(['invoices.get', 'parties.get']);
    expect(out.supergraphSdl).toContain('invokeInvoicesTool');
  });

  it('two subgraphs defining the non-shareable field Query.party with different types', () => {
    expect(() => composeSupergraph([
      source('crm', 'type Query { party(id: ID!): String }'),
      source('invoices', 'type Query { party(id: ID!): Int }'),
    ])).toThrow(/^Supergraph composition failed:\n- .*party/s);
  });

  it('two subgraphs defining the same non-shareable field with the same type', () => {
    expect(() => composeSupergraph([
      source('crm', 'type Query { party(id: ID!): String }'),
      source('invoices', 'type Query { party(id: ID!): String }'),
    ])).toThrow(/Supergraph composition failed/);
  });

  it('an SDL naming a type that exists nowhere', () => {
    expect(() => composeSupergraph([
      source('crm', 'type Query { party(id: ID!): Partyy }'),
      source('invoices', 'type Query { invoice(id: ID!): String }'),
    ])).toThrow(/Supergraph composition failed[\s\S]*Partyy/);
  });

  it('an SDL that does not parse, naming the subgraph', () => {
    let message = '';
    try {
      composeSupergraph([
        source('crm', 'type Query { party(id: ID!): String }'),
        { name: 'invoices', tools: [], typeDefs: 'type Query { invoice(id: ID!: String' },
      ]);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^Supergraph composition failed/);
    expect(message).toContain('invoices');
  });

  it('two subgraphs with the same tool mutation name', () => {
    const a = source('crm', 'type Query { party(id: ID!): String }');
    const invoices = source('invoices', 'type Query { invoice(id: ID!): String }');
    const b = { ...invoices, typeDefs: invoices.typeDefs.replace('invokeInvoicesTool', 'invokeCrmTool') };
    expect(b.typeDefs).toContain('invokeCrmTool');
    expect(() => composeSupergraph([a, b])).toThrow(/Supergraph composition failed/);
  });

  it('a tool name declared by two subgraphs', () => {
    expect(() => composeSupergraph([
      source('crm', 'type Query { party(id: ID!): String }', [tool('parties.get')]),
      source('invoices', 'type Query { invoice(id: ID!): String }', [tool('invoices.get'), tool('parties.get')]),
    ])).toThrow('Tool parties.get is declared by both crm and invoices.');
  });

  it('a real tool copied into a second real subgraph', async () => {
    const sources = await loadSubgraphSources();
    const crm = sources.find((s) => s.name === 'crm')!;
    const invoices = sources.find((s) => s.name === 'invoices')!;
    const stolen = crm.tools[0];
    const broken = sources.map((s) => (s === invoices ? { ...s, tools: [...s.tools, stolen] } : s));
    expect(() => composeSupergraph(broken)).toThrow(`Tool ${stolen.name} is declared by both crm and invoices.`);
  });
});
