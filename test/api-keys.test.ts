import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

// api_keys.* are tools the gateway owns; they go through the same pipeline (policies, ledger…).
let sys: TestSystem;
let owner: string;
let workspace: string;

beforeAll(async () => {
  sys = await startTestSystem('keys');
  const ws = await sys.workspace('Llaves SAS');
  owner = ws.api_key;
  workspace = ws.workspace_id;
});
afterAll(async () => {
  await sys?.stop();
});

describe('api_keys tools', () => {
  it('creates a narrowed key shown once, lists it without secrets, and revokes it at once', async () => {
    const created = await sys.invoke('api_keys.create', { name: 'Facturación', role: 'accountant', patterns: ['invoices.%:read'] }, owner);
    expect(created.status).toBe(200);
    const { api_key: key, key: stored } = created.body.output;
    expect(key).toMatch(/^nk_[0-9A-Za-z]{40}$/);
    expect(stored).toMatchObject({ name: 'Facturación', role: 'accountant', patterns: ['invoices.%:read'], prefix: key.slice(0, 10), revoked_at: null });

    const tools = await sys.fetch('/v1/tools', { key });
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['invoices.get', 'invoices.list']));
    expect(tools.body.tools.every((t: { name: string; risk: string }) => t.name.startsWith('invoices.') && t.risk === 'read')).toBe(true);
    expect((await sys.invoke('invoices.list', {}, key)).status).toBe(200);
    expect((await sys.invoke('invoices.create', { customer_id: 'pty_x', currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 1 }] }, key)).body.code).toBe('policy_denied');

    const listed = await sys.invoke('api_keys.list', {}, owner);
    expect(JSON.stringify(listed.body)).not.toContain(key.slice(10));
    expect(listed.body.output.rows.map((k: { id: string }) => k.id)).toContain(stored.id);

    const revoked = await sys.invoke('api_keys.revoke', { id: stored.id }, owner);
    expect(revoked.body.output).toEqual({ revoked: true, id: stored.id });
    expect((await sys.invoke('invoices.list', {}, key)).status).toBe(401);
    expect((await sys.invoke('api_keys.revoke', { id: stored.id }, owner)).status).toBe(404);
  });

  it('refuses keys above the caller’s role, bad patterns and past expiry', async () => {
    const admin = await sys.key(workspace, 'admin');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'owner' }, admin.api_key)).body.code).toBe('policy_denied');
    const viewer = await sys.key(workspace, 'viewer');
    expect((await sys.invoke('api_keys.create', { name: 'x', role: 'viewer' }, viewer.api_key)).body.code).toBe('policy_denied');
    const bad = await sys.invoke('api_keys.create', { name: 'x', role: 'viewer', patterns: ['Invoices.*'] }, owner);
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe('/patterns/0');
    const past = await sys.invoke('api_keys.create', { name: 'x', role: 'viewer', expires_at: '2020-01-01T00:00:00Z' }, owner);
    expect(past.body).toMatchObject({ code: 'invalid_input', field: '/expires_at' });
  });

  it('never reaches another workspace’s keys', async () => {
    const other = await sys.workspace('Vecina SAS');
    const theirs = await sys.invoke('api_keys.create', { name: 'suya', role: 'viewer' }, other.api_key);
    expect((await sys.invoke('api_keys.revoke', { id: theirs.body.output.key.id }, owner)).status).toBe(404);
    expect((await sys.invoke('invoices.list', {}, theirs.body.output.api_key)).status).toBe(200);
    const mine = await sys.invoke('api_keys.list', {}, owner);
    expect(mine.body.output.rows.map((k: { id: string }) => k.id)).not.toContain(theirs.body.output.key.id);
  });

  it('is held by a policy like any tool, and runs once approved (in the gateway)', async () => {
    const policy = await sys.invoke('policies.create', { name: 'Hold key creation', priority: 1, match: { tools: ['api_keys.create'] }, effect: 'hold' }, owner);
    const held = await sys.invoke('api_keys.create', { name: 'Retenida', role: 'viewer' }, owner);
    expect(held.status).toBe(202);
    // A person decides (CONTRACT §10): an admin's own key.
    const admin = await sys.person(workspace, 'admin');
    await sys.invoke('approvals.decide', { id: held.body.approval_id, decision: 'approve' }, admin.api_key);
    let approval;
    for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline;) {
      approval = (await sys.invoke('approvals.get', { id: held.body.approval_id }, admin.api_key)).body.output.approval;
      if (approval.status === 'executed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(approval.status).toBe('executed');
    expect(approval.result.body.output.key.name).toBe('Retenida');
    const ledger = await sys.invoke('ledger.list', { tool: 'api_keys.create' }, owner);
    expect(ledger.body.output.rows.map((e: { outcome: string }) => e.outcome)).toEqual(expect.arrayContaining(['ok', 'pending_approval']));
    await sys.invoke('policies.delete', { id: policy.body.output.policy.id }, owner);
  });
});
