import { ASSERTION_HEADER, signAssertion, type Principal } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// roles.* are tools the gateway owns. A custom role's patterns are resolved by the gateway at
// every authentication and carried in the assertion, so each subgraph checks them again.
let sys: TestSystem;
let owner: string;
let workspace: string;

beforeAll(async () => {
  sys = await startTestSystem('roles');
  const ws = await sys.workspace('Roles SAS');
  owner = ws.api_key;
  workspace = ws.workspace_id;
});
afterAll(async () => {
  await sys?.stop();
});

const names = (r: { body: { tools: { name: string }[] } }) => r.body.tools.map((t) => t.name).sort();

describe('roles tools', () => {
  it('lists the built-in roles with their patterns', async () => {
    const r = await sys.invoke('roles.list', {}, owner);
    expect(r.status).toBe(200);
    const keys = r.body.output.rows.map((x: { key: string }) => x.key);
    expect(keys).toEqual(['owner', 'admin', 'accountant', 'member', 'viewer', 'agent']);
    expect(r.body.output.rows[0]).toEqual({ key: 'owner', name: 'Owner', patterns: ['%'], built_in: true });
    expect(r.body.output.rows.find((x: { key: string }) => x.key === 'viewer').patterns).toEqual(['%:read']);
  });

  it('refuses built-in names, duplicates, malformed keys and patterns', async () => {
    expect((await sys.invoke('roles.create', { key: 'admin', name: 'Admin 2', patterns: ['%:read'] }, owner)).body.code).toBe('conflict');
    const badKey = await sys.invoke('roles.create', { key: 'Billing', name: 'x', patterns: ['%:read'] }, owner);
    expect(badKey.body).toMatchObject({ code: 'invalid_input', field: '/key' });
    const badPattern = await sys.invoke('roles.create', { key: 'clerk', name: 'x', patterns: ['invoices.*'] }, owner);
    expect(badPattern.body).toMatchObject({ code: 'invalid_input', field: '/patterns/0' });
    expect((await sys.invoke('roles.create', { key: 'dup_role', name: 'Dup', patterns: ['%:read'] }, owner)).status).toBe(200);
    expect((await sys.invoke('roles.create', { key: 'dup_role', name: 'Dup', patterns: ['%:read'] }, owner)).body.code).toBe('conflict');
    expect((await sys.invoke('roles.delete', { key: 'dup_role' }, owner)).status).toBe(200);
    // Built-in roles are neither changed nor deleted; unknown ones are not found.
    expect((await sys.invoke('roles.update', { key: 'viewer', patterns: ['%'] }, owner)).body.code).toBe('conflict');
    expect((await sys.invoke('roles.delete', { key: 'owner' }, owner)).body.code).toBe('conflict');
    expect((await sys.invoke('roles.update', { key: 'ghost', name: 'Ghost' }, owner)).body.code).toBe('not_found');
    expect((await sys.invoke('roles.delete', { key: 'ghost' }, owner)).body.code).toBe('not_found');
    // A viewer key reaches roles.list (read) but not roles.create (write).
    const viewer = await sys.key(workspace, 'viewer');
    expect((await sys.invoke('roles.list', {}, viewer.api_key)).status).toBe(200);
    expect((await sys.invoke('roles.create', { key: 'sneaky', name: 'x', patterns: ['%'] }, viewer.api_key)).body.code).toBe('policy_denied');
  });

  let clerkKey: string;
  let clerkKeyId: string;

  it('gives a key with a custom role exactly the role’s patterns, in the gateway and in the subgraphs', async () => {
    const created = await sys.invoke('roles.create', { key: 'billing_clerk', name: 'Billing clerk', patterns: ['invoices.%:read', 'parties.%:read'] }, owner);
    expect(created.status).toBe(200);
    expect(created.body.output.role).toMatchObject({ key: 'billing_clerk', name: 'Billing clerk', patterns: ['invoices.%:read', 'parties.%:read'], built_in: false });
    const listed = await sys.invoke('roles.list', {}, owner);
    expect(listed.body.output.rows.at(-1)).toMatchObject({ key: 'billing_clerk', built_in: false });

    const unknown = await sys.invoke('api_keys.create', { name: 'x', role: 'ghost_role' }, owner);
    expect(unknown.body).toMatchObject({ code: 'invalid_input', field: '/role' });
    const key = await sys.invoke('api_keys.create', { name: 'Clerk', role: 'billing_clerk' }, owner);
    expect(key.status).toBe(200);
    expect(key.body.output.key.role).toBe('billing_clerk');
    clerkKey = key.body.output.api_key;
    clerkKeyId = key.body.output.key.id;

    const tools = await sys.fetch('/v1/tools', { key: clerkKey });
    expect(tools.status).toBe(200);
    expect(tools.body.tools.length).toBeGreaterThan(2);
    expect(tools.body.tools.every((t: { name: string; risk: string }) => /^(invoices|parties)\./.test(t.name) && t.risk === 'read')).toBe(true);
    expect(names(tools)).toEqual(expect.arrayContaining(['invoices.list', 'parties.list']));

    // Both calls run in their subgraphs, which re-check the role from the assertion's role_patterns.
    expect((await sys.invoke('invoices.list', {}, clerkKey)).status).toBe(200);
    expect((await sys.invoke('parties.list', {}, clerkKey)).status).toBe(200);
    const write = await sys.invoke('parties.create', { name: 'No', kind: 'customer' }, clerkKey);
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('policy_denied');
    expect((await sys.invoke('employees.list', {}, clerkKey)).body.code).toBe('policy_denied');

    // /graphql is checked only in the subgraphs (the gateway checks the credential, not reach).
    const graph = await sys.fetch('/graphql', { key: clerkKey, body: { query: '{ parties(limit: 1) { id } }' } });
    expect(graph.body.errors).toBeUndefined();
    const employees = await sys.fetch('/graphql', { key: clerkKey, body: { query: '{ employees { id } }' } });
    expect(employees.body.errors[0].extensions.code).toBe('policy_denied');
  });

  it('makes a subgraph check role_patterns itself (an assertion signed with the gateway key)', async () => {
    const call = async (principal: Principal, tool: string) => {
      const res = await fetch(`${sys.subgraphs.crm.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: signAssertion(principal, sys.keys.privateKey) },
        body: JSON.stringify({ query: `mutation { invokeCrmTool(tool: "${tool}", input: {}) }` }),
      });
      const body = (await res.json()) as { data?: { invokeCrmTool: { status: number; body: { code?: string } } } };
      return body.data!.invokeCrmTool;
    };
    const base: Principal = { workspace, role: 'billing_clerk', actor: { type: 'api_key', id: 'key_direct' }, credential_id: 'key_direct', scopes: null, patterns: null };
    expect((await call({ ...base, role_patterns: ['parties.%:read'] }, 'parties.list')).status).toBe(200);
    expect((await call({ ...base, role_patterns: ['invoices.%:read'] }, 'parties.list')).body.code).toBe('policy_denied');
    // Without role_patterns a custom role reaches nothing there.
    expect((await call(base, 'parties.list')).body.code).toBe('policy_denied');
  });

  it('applies a role change on the very next call, through REST and through the graph', async () => {
    const updated = await sys.invoke('roles.update', { key: 'billing_clerk', patterns: ['invoices.%:read'] }, owner);
    expect(updated.status).toBe(200);
    expect(updated.body.output.role.patterns).toEqual(['invoices.%:read']);
    // No wait: the gateway resolves a custom role's patterns at every authentication.
    const refused = await sys.invoke('parties.list', {}, clerkKey);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('policy_denied');
    expect((await sys.invoke('invoices.list', {}, clerkKey)).status).toBe(200);
    const graph = await sys.fetch('/graphql', { key: clerkKey, body: { query: '{ parties(limit: 1) { id } }' } });
    expect(graph.body.errors[0].extensions.code).toBe('policy_denied');
    expect(names(await sys.fetch('/v1/tools', { key: clerkKey })).every((n: string) => n.startsWith('invoices.'))).toBe(true);

    const renamed = await sys.invoke('roles.update', { key: 'billing_clerk', name: 'Invoice reader' }, owner);
    expect(renamed.body.output.role).toMatchObject({ name: 'Invoice reader', patterns: ['invoices.%:read'] });
    // Back to both modules: the next call reaches parties again.
    await sys.invoke('roles.update', { key: 'billing_clerk', patterns: ['invoices.%:read', 'parties.%:read'] }, owner);
    expect((await sys.invoke('parties.list', {}, clerkKey)).status).toBe(200);
  });

  it('lets nobody hand out a role, or a key, that reaches more than their own', async () => {
    await sys.invoke('roles.create', { key: 'key_maker', name: 'Key maker', patterns: ['api_keys.%', 'roles.%:read', 'parties.%:read'] }, owner);
    await sys.invoke('roles.create', { key: 'party_reader', name: 'Party reader', patterns: ['parties.%:read'] }, owner);
    const maker = (await sys.invoke('api_keys.create', { name: 'Maker', role: 'key_maker' }, owner)).body.output.api_key;
    // viewer (%:read) and billing_clerk (invoices reads) reach beyond the maker's patterns.
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'viewer' }, maker)).body.code).toBe('policy_denied');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'billing_clerk' }, maker)).body.code).toBe('policy_denied');
    const ok = await sys.invoke('api_keys.create', { name: 'Parties only', role: 'party_reader' }, maker);
    expect(ok.status).toBe(200);
    expect((await sys.invoke('parties.list', {}, ok.body.output.api_key)).status).toBe(200);
    expect((await sys.invoke('invoices.list', {}, ok.body.output.api_key)).body.code).toBe('policy_denied');
    // An admin may define any role, but an admin key is still not an owner key.
    const admin = await sys.key(workspace, 'admin');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'owner' }, admin.api_key)).body.code).toBe('policy_denied');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'party_reader' }, admin.api_key)).status).toBe(200);
    // A role reaching more than its creator is refused too (it could be handed out next).
    const accountant = await sys.key(workspace, 'accountant');
    await sys.invoke('roles.update', { key: 'key_maker', patterns: ['api_keys.%', 'roles.%', 'parties.%:read'] }, owner);
    expect((await sys.invoke('roles.create', { key: 'too_big', name: 'x', patterns: ['%'] }, maker)).body.code).toBe('policy_denied');
    expect((await sys.invoke('roles.create', { key: 'too_big', name: 'x', patterns: ['%'] }, accountant.api_key)).body.code).toBe('policy_denied');
  });

  it('refuses to delete a role a key still has, then deletes it', async () => {
    const inUse = await sys.invoke('roles.delete', { key: 'billing_clerk' }, owner);
    expect(inUse.status).toBe(409);
    expect(inUse.body.code).toBe('conflict');
    expect((await sys.invoke('api_keys.revoke', { id: clerkKeyId }, owner)).status).toBe(200);
    const deleted = await sys.invoke('roles.delete', { key: 'billing_clerk' }, owner);
    expect(deleted.body.output).toEqual({ deleted: true, key: 'billing_clerk' });
    const keys = (await sys.invoke('roles.list', {}, owner)).body.output.rows.map((r: { key: string }) => r.key);
    expect(keys).not.toContain('billing_clerk');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'billing_clerk' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/role' });
  });

  it('keeps roles per workspace', async () => {
    const other = await sys.workspace('Vecina Roles SAS');
    expect((await sys.invoke('roles.list', {}, other.api_key)).body.output.rows.map((r: { key: string }) => r.key)).not.toContain('party_reader');
    expect((await sys.invoke('roles.update', { key: 'party_reader', name: 'Mine now' }, other.api_key)).body.code).toBe('not_found');
    expect((await sys.invoke('roles.delete', { key: 'party_reader' }, other.api_key)).body.code).toBe('not_found');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'party_reader' }, other.api_key)).body).toMatchObject({ code: 'invalid_input', field: '/role' });
    // The same key may name a different role there.
    const theirs = await sys.invoke('roles.create', { key: 'party_reader', name: 'Their reader', patterns: ['invoices.%:read'] }, other.api_key);
    expect(theirs.status).toBe(200);
    const mine = (await sys.invoke('roles.list', {}, owner)).body.output.rows.find((r: { key: string }) => r.key === 'party_reader');
    expect(mine).toMatchObject({ name: 'Party reader', patterns: ['parties.%:read'] });
  });
});
