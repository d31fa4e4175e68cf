import { catalogEntry, defineTool, type Principal, type Risk } from '@cuadra/shared';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog.ts';

function entry(name: string, risk: Risk, subgraph: string, description = `Does ${name} for the workspace.`, maxInputBytes?: number) {
  return catalogEntry(
    defineTool({ name, description, risk, maxInputBytes, input: { type: 'object', additionalProperties: false, properties: {} }, handler: async () => ({}) }),
    subgraph,
  );
}

const catalog = new Catalog([
  entry('invoices.list', 'read', 'invoices', 'List the invoices of the workspace.'),
  entry('invoices.create', 'write', 'invoices', 'Create a draft invoice for a customer.', 1024),
  entry('invoices.send', 'external', 'invoices', 'Send an invoice to the tax authority (DIAN) and the customer.'),
  entry('invoices.void', 'destructive', 'invoices', 'Void a posted invoice; cannot be undone.'),
  entry('parties.list', 'read', 'crm', 'List customers and vendors.'),
  entry('parties.create', 'write', 'crm', 'Create a customer or vendor.'),
  entry('projects.list', 'read', 'projects', 'List projects.'),
  entry('payroll.run', 'write', 'payroll', 'Run the payroll of a period.'),
  entry('sites.publish', 'write', 'crm', 'Publish the workspace site.'),
]);

function principal(overrides: Partial<Principal> = {}): Principal {
  return { workspace: 'ws_1', role: 'owner', actor: { type: 'api_key', id: 'key_1' }, credential_id: 'key_1', scopes: null, patterns: null, ...overrides };
}

const names = (p: Principal, filter?: { module?: string; search?: string }) => catalog.listFor(p, filter).map((t) => t.name).sort();

const ALL = ['invoices.create', 'invoices.list', 'invoices.send', 'invoices.void', 'parties.create', 'parties.list', 'payroll.run', 'projects.list', 'sites.publish'];

describe('Catalog.listFor', () => {
  it('gives an owner API key every tool', () => {
    expect(names(principal())).toEqual(ALL);
  });

  it('filters by OAuth scope: tools:read sees only read tools', () => {
    expect(names(principal({ actor: { type: 'oauth_app', id: 'app_1' }, scopes: ['tools:read'] }))).toEqual(['invoices.list', 'parties.list', 'projects.list']);
  });

  it('filters by OAuth scope: tools sees every tool but the sites tools', () => {
    expect(names(principal({ scopes: ['tools'] }))).toEqual(ALL.filter((n) => !n.startsWith('sites.')));
  });

  it('filters by OAuth scope: sites.edit sees only the sites tools; sites.login sees none', () => {
    expect(names(principal({ scopes: ['sites.edit'] }))).toEqual(['sites.publish']);
    expect(names(principal({ scopes: ['sites.login'] }))).toEqual([]);
  });

  it('filters by role', () => {
    expect(names(principal({ role: 'viewer' }))).toEqual(['invoices.list', 'parties.list', 'projects.list']);
    expect(names(principal({ role: 'member' }))).toEqual(['invoices.create', 'invoices.list', 'parties.create', 'parties.list', 'projects.list']);
    expect(names(principal({ role: 'accountant' }))).toEqual(['invoices.create', 'invoices.list', 'invoices.send', 'invoices.void', 'parties.create', 'parties.list', 'payroll.run', 'projects.list']);
    expect(names(principal({ role: 'nobody' }))).toEqual([]);
  });

  it('filters by key patterns', () => {
    expect(names(principal({ patterns: ['invoices.%'] }))).toEqual(['invoices.create', 'invoices.list', 'invoices.send', 'invoices.void']);
    expect(names(principal({ patterns: ['%:read'] }))).toEqual(['invoices.list', 'parties.list', 'projects.list']);
    expect(names(principal({ patterns: ['invoices.%:write', 'parties.list'] }))).toEqual(['invoices.create', 'parties.list']);
  });

  it('scope, role and patterns all apply at once', () => {
    expect(names(principal({ role: 'member', scopes: ['tools'], patterns: ['invoices.%'] }))).toEqual(['invoices.create', 'invoices.list']);
  });

  it('filters by module', () => {
    expect(names(principal(), { module: 'parties' })).toEqual(['parties.create', 'parties.list']);
    expect(names(principal(), { module: 'crm' })).toEqual([]); // a subgraph is not a module
    expect(names(principal({ role: 'viewer' }), { module: 'invoices' })).toEqual(['invoices.list']);
  });

  it('filters by search over name and description, ignoring case', () => {
    expect(names(principal(), { search: 'void' })).toEqual(['invoices.void']);
    expect(names(principal(), { search: 'DIAN' })).toEqual(['invoices.send']);
    expect(names(principal(), { search: 'vendor' })).toEqual(['parties.create', 'parties.list']);
    expect(names(principal(), { search: 'PARTIES.' })).toEqual(['parties.create', 'parties.list']);
    expect(names(principal(), { search: 'nothing matches this' })).toEqual([]);
  });

  it('does not read regex metacharacters in search', () => {
    expect(names(principal(), { search: '.*' })).toEqual([]);
    expect(() => catalog.listFor(principal(), { search: '(' })).not.toThrow();
  });

  it('combines module and search', () => {
    expect(names(principal(), { module: 'invoices', search: 'customer' })).toEqual(['invoices.create', 'invoices.send']);
  });

  it('never returns subgraph or max_input_bytes, and returns the public fields', () => {
    const tools = catalog.listFor(principal());
    expect(tools).toHaveLength(ALL.length);
    for (const t of tools) {
      expect(t).not.toHaveProperty('subgraph');
      expect(t).not.toHaveProperty('max_input_bytes');
      expect(Object.keys(t).sort()).toEqual(['annotations', 'description', 'input_schema', 'module', 'name', 'risk', 'scope']);
    }
    const text = JSON.stringify(tools);
    expect(text).not.toContain('subgraph');
    expect(text).not.toContain('max_input_bytes');
    expect(tools.find((t) => t.name === 'invoices.void')).toMatchObject({
      module: 'invoices', risk: 'destructive', scope: 'tools',
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    });
  });

  it('does not strip routing facts from the catalog itself', () => {
    catalog.listFor(principal());
    expect(catalog.get('invoices.create')).toMatchObject({ subgraph: 'invoices', max_input_bytes: 1024 });
    expect(catalog.get('invoices.list')?.max_input_bytes).toBe(256 * 1024);
  });
});

describe('Catalog.validate', () => {
  it('throws invalid_input with the pointer of an additional property', () => {
    expect(() => catalog.validate('invoices.list', { extra: 1 })).toThrow(expect.objectContaining({ code: 'invalid_input', field: '/extra' }));
    expect(() => catalog.validate('invoices.list', {})).not.toThrow();
  });
});
