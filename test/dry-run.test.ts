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
});
