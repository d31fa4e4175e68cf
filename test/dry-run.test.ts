import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// X-Dry-Run over REST (issue 39), end to end through the gateway and the hop to the owner.
let sys: TestSystem;
let key: string;
let workspace: string;

beforeAll(async () => {
  sys = await startTestSystem('dry-run');
  ({ api_key: key, workspace_id: workspace } = await sys.workspace('Dry Run SAS'));
});
afterAll(async () => {
  await sys?.stop();
});

describe('X-Dry-Run over REST', () => {
  it('refuses a write tool without a preview (dry_run_unsupported), a header that is not true/false, and answers the preview\'s refusal — none of it runs or reaches the ledger', async () => {
    const ledger = sys.governanceFor().ledger;
    const before = await ledger.entries.countDocuments({ workspace });
    const unsupported = await sys.invoke('pipelines.create', { name: 'Ventas', key: 'ventas', stages: [{ name: 'Nuevo', kind: 'open' }, { name: 'Ganado', kind: 'won' }] }, key, { 'X-Dry-Run': 'true' });
    expect(unsupported.status, JSON.stringify(unsupported.body)).toBe(400);
    expect(unsupported.body).toMatchObject({ code: 'dry_run_unsupported' });
    expect(unsupported.headers.get('ledger-receipt')).toBeNull();
    const mistyped = await sys.invoke('invoices.post', { id: 'inv_x' }, key, { 'X-Dry-Run': 'yes' });
    expect(mistyped.status).toBe(422);
    expect(mistyped.body).toMatchObject({ code: 'invalid_input', field: '' });
    const missing = await sys.invoke('invoices.post', { id: 'inv_x' }, key, { 'X-Dry-Run': 'true' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });
    // sys.fetch, not sys.invoke: a dry run's 200 carries no tool output to check against the schema.
    const read = await sys.fetch('/v1/tools/invoices.list:invoke', { method: 'POST', key, body: {}, headers: { 'X-Dry-Run': 'true' } });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ tool: 'invoices.list', dry_run: { decision: { effect: 'allow', policy: null }, would: null } });
    expect((await sys.output('pipelines.list', {}, key)).rows.filter((p: { key: string }) => p.key === 'ventas')).toEqual([]);
    // The one entry since is pipelines.list's own (a real call); no dry run wrote one.
    const since = await ledger.entries.find({ workspace, seq: { $gt: before } }).lean();
    expect(since.map((e) => e.tool)).toEqual(['pipelines.list']);
  });

  /** One 2026-07-28 MCP request, stateless, as the specification's client sends it (the envelope in `_meta`). */
  async function mcpCall(name: string, args: Record<string, unknown>, meta: Record<string, unknown>) {
    const body = {
      jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name, arguments: args, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'dry-run-test', version: '1' }, ...meta } },
    };
    const res = await fetch(`${sys.gatewayUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return JSON.parse(text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1]).result as { isError?: boolean; structuredContent: any };
  }

  it('answers alike over REST (X-Dry-Run), MCP (_meta "io.cuadra/dry-run") and GraphQL (dryRun), and none of them posts or reaches the ledger', async () => {
    const ledger = sys.governanceFor().ledger;
    const { entry } = await sys.output('journal.create', { date: '2026-11-03', memo: 'Caja menor', lines: [{ account: '5195', debit: 40_000 }, { account: '110505', credit: 40_000 }] }, key);
    const before = await ledger.entries.countDocuments({ workspace });
    const rest = await sys.fetch('/v1/tools/journal.post:invoke', { method: 'POST', key, body: { id: entry.id }, headers: { 'X-Dry-Run': 'true' } });
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    expect(rest.body.dry_run.would.journal_lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['5195', 40_000, 0], ['110505', 0, 40_000]]);
    const mcp = await mcpCall('journal.post', { id: entry.id }, { 'io.cuadra/dry-run': true });
    expect(mcp.isError ?? false, JSON.stringify(mcp)).toBe(false);
    expect(mcp.structuredContent).toEqual(rest.body);
    const graph = await sys.fetch('/graphql', { method: 'POST', key, body: { query: 'mutation($input: JSON!) { invokeInvoicesTool(tool: "journal.post", input: $input, dryRun: true) }', variables: { input: { id: entry.id } } } });
    expect(graph.body.data.invokeInvoicesTool, JSON.stringify(graph.body)).toEqual({ status: 200, body: rest.body });
    // Anything but true/false is refused on each surface, never taken for the call itself.
    expect(await mcpCall('journal.post', { id: entry.id }, { 'io.cuadra/dry-run': 'yes' })).toMatchObject({ isError: true, structuredContent: { code: 'invalid_input', field: '/_meta/io.cuadra~1dry-run' } });
    const typo = await sys.fetch('/graphql', { method: 'POST', key, body: { query: 'mutation($input: JSON!) { invokeInvoicesTool(tool: "journal.post", input: $input, dryRun: "yes") }', variables: { input: { id: entry.id } } } });
    expect(typo.body.data?.invokeInvoicesTool ?? typo.body, JSON.stringify(typo.body)).toMatchObject({ body: { code: 'invalid_input' } });
    expect((await sys.output('journal.get', { id: entry.id }, key)).entry.status).toBe('draft');
    const since = await ledger.entries.find({ workspace, seq: { $gt: before } }).lean();
    expect(since.map((e) => e.tool)).toEqual(['journal.get']);
  });
});
