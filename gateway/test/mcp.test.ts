import { annotationsFor, type Risk } from '@cuadra/shared';
import { describe, expect, it } from 'vitest';
import type { PublicTool } from '../src/catalog.ts';
import { scoreTool, searchTools } from '../src/mcp/catalogTools.ts';
import { originAllowed } from '../src/mcp/router.ts';

function tool(name: string, risk: Risk, description: string): PublicTool {
  return { name, module: name.split('.')[0], risk, scope: risk === 'read' ? 'tools:read' : 'tools', description, input_schema: { type: 'object' }, annotations: annotationsFor(risk) };
}

const tools = [
  tool('invoices.create', 'write', 'Create a draft invoice for a customer, with lines priced from items or given by hand. Totals are computed.'),
  tool('invoices.list', 'read', 'List the invoices of the workspace, newest first.'),
  tool('invoices.get', 'read', 'One invoice with its lines.'),
  tool('invoices.recurring_create', 'write', 'Schedule a recurring invoice for a customer: the lines, every N weeks or months until an optional end date.'),
  tool('parties.create', 'write', 'Create a customer or vendor.'),
  tool('parties.list', 'read', 'List customers and vendors; filter by kind or search by name.'),
  tool('employees.list', 'read', 'List the employees of the workspace.'),
  tool('payroll.run', 'write', 'Run the payroll of a period for every active employee.'),
];

const names = (query: string, limit = 10) => searchTools(tools, query, limit).hits.map((h) => h.name);

describe('tools.search ranking', () => {
  it('puts the tool whose name says the task first, whatever the word order or plural', () => {
    expect(names('create invoice')[0]).toBe('invoices.create');
    expect(names('invoice create')[0]).toBe('invoices.create');
    expect(names('make an invoice for a customer')[0]).toBe('invoices.create');
    expect(names('list customers')[0]).toBe('parties.list');
    expect(names('invoices.get')[0]).toBe('invoices.get');
  });

  it('finds by description words when the name does not say it', () => {
    expect(names('vendor')).toEqual(expect.arrayContaining(['parties.create', 'parties.list']));
    expect(names('payroll employees').slice(0, 2).sort()).toEqual(['employees.list', 'payroll.run']);
  });

  it('returns nothing for words that match nothing, and honours the limit', () => {
    expect(names('teleport')).toEqual([]);
    expect(names('list', 2)).toHaveLength(2);
    expect(searchTools(tools, 'list', 2).total).toBeGreaterThan(2);
  });

  it('gives compact entries: name, module, risk and the first sentence', () => {
    const [hit] = searchTools(tools, 'create invoice', 1).hits;
    expect(hit).toEqual({ name: 'invoices.create', module: 'invoices', risk: 'write', summary: 'Create a draft invoice for a customer, with lines priced from items or given by hand.' });
  });

  it('scores an exact name above everything', () => {
    expect(scoreTool(tools[1], 'invoices.list')).toBeGreaterThan(scoreTool(tools[0], 'invoices.list'));
  });
});

describe('originAllowed', () => {
  const publicUrl = 'https://api.cuadra.example';
  it('allows no Origin (programs), the service\'s own origin and loopback', () => {
    expect(originAllowed(undefined, publicUrl)).toBe(true);
    expect(originAllowed('https://api.cuadra.example', publicUrl)).toBe(true);
    expect(originAllowed('http://localhost:6274', publicUrl)).toBe(true);
    expect(originAllowed('http://127.0.0.1:3000', publicUrl)).toBe(true);
    expect(originAllowed('http://[::1]:3000', publicUrl)).toBe(true);
  });

  it('refuses other origins, look-alikes, the opaque origin and other schemes', () => {
    expect(originAllowed('http://api.cuadra.example', publicUrl)).toBe(false);
    expect(originAllowed('https://api.cuadra.example.evil.com', publicUrl)).toBe(false);
    expect(originAllowed('https://evil.example', publicUrl)).toBe(false);
    expect(originAllowed('http://localhost.evil.example', publicUrl)).toBe(false);
    expect(originAllowed('null', publicUrl)).toBe(false);
    expect(originAllowed('file://localhost', publicUrl)).toBe(false);
  });
});

describe('McpSessions', () => {
  it('keeps a session to its credential and closes the least recently used beyond the limits', async () => {
    const { McpSessions } = await import('../src/mcp/sessions.ts');
    const { Server } = await import('@modelcontextprotocol/server');
    const sessions = new McpSessions({ perCredential: 2, total: 3 });
    const ids: string[] = [];
    async function openOne(credential: string): Promise<string> {
      const transport = await sessions.open(credential, new Server({ name: 't', version: '1' }, { capabilities: {} }));
      const res = await transport.handleRequest(new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      }));
      await res.text();
      ids.push(transport.sessionId!);
      return transport.sessionId!;
    }
    try {
      const a1 = await openOne('key_a');
      expect(sessions.find(a1, 'key_b')).toBeUndefined();
      expect(sessions.find(a1, 'key_a')).toBeDefined();
      const a2 = await openOne('key_a');
      const a3 = await openOne('key_a'); // a1 goes: two per credential
      expect(sessions.find(a1, 'key_a')).toBeUndefined();
      expect(sessions.find(a2, 'key_a')).toBeDefined();
      await openOne('key_b');
      await openOne('key_c'); // three in all: the least recently used (a3, untouched since opened) goes
      expect(sessions.size).toBe(3);
      expect(sessions.find(a3, 'key_a')).toBeUndefined();
      expect(sessions.find(a2, 'key_a')).toBeDefined();
    } finally {
      await sessions.closeAll();
    }
  });
});

describe('tools.search and tools.describe as declared tools (for the gateway\'s own tool owner)', () => {
  it('register with the gateway\'s owner and answer from services.catalog, seeing only what the caller reaches', async () => {
    const { createRegistry, catalogEntry, defineTool } = await import('@cuadra/shared');
    const { Catalog } = await import('../src/catalog.ts');
    const { searchTool, describeTool } = await import('../src/mcp/catalogTools.ts');
    const registry = createRegistry('gateway', ['tools'], [searchTool, describeTool]);
    expect(registry.get('tools.search')).toBeDefined();
    const declared = (name: string, risk: Risk, description: string) =>
      catalogEntry(defineTool({ name, risk, description, input: { type: 'object', additionalProperties: false, properties: {} }, handler: async () => ({}) }), name.split('.')[0]);
    const catalog = new Catalog([declared('invoices.create', 'write', 'Create a draft invoice.'), declared('invoices.list', 'read', 'List invoices.')]);
    const viewer = { workspace: 'ws_1', role: 'viewer', actor: { type: 'api_key' as const, id: 'k' }, credential_id: 'k', scopes: null, patterns: null };
    const ctx = { principal: viewer, workspace: 'ws_1', services: { catalog } } as never;
    const found = await searchTool.handler({ query: 'invoice' }, ctx);
    expect((found.tools as { name: string }[]).map((t) => t.name)).toEqual(['invoices.list']);
    await expect(describeTool.handler({ name: 'invoices.create' }, ctx)).rejects.toMatchObject({ code: 'not_found' });
    expect((await describeTool.handler({ name: 'invoices.list' }, ctx)).tool).toMatchObject({ name: 'invoices.list', risk: 'read' });
  });
});
