import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { approvedAndKilled, killedAndSettled, landBeforeRerun, type TestSubgraph } from '@cuadra/shared/testing';
import { startInvoices } from './setup.ts';
import { workspace } from './bills-helpers.ts';

// The double payment after a kill (payments-late-write.test.ts, drafts-late-write.test.ts), for a
// fixed asset: a keyed assets.create whose process dies with its insert sent. The store applies that
// insert late — after recovery settled the dead attempt as having written nothing and handed its
// Idempotency-Key back. Under a random id the retry recorded a second asset: two acquisition
// entries, and every month depreciated twice. Under the call's repeatable id (repeatableId, runs.ts)
// the two inserts collide on `_id` and the retry finishes and answers the one asset.

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

/** A keyed assets.create killed inside its insert, settled by recovery as having written nothing (its key handed back). */
const killed = (owner: Principal, input: Record<string, unknown>, key: string) => killedAndSettled(sg, owner, { tool: 'assets.create', collection: 'fixed_assets', input, key });

const input = { name: 'Torno CNC', class: 'machinery', cost: 80_000_000, acquisition_date: '2026-09-01', useful_life_months: 120, credit_account: '220505' };

async function assetsOf(owner: Principal) {
  return sg.db.collection('fixed_assets').find({ workspace: owner.workspace }).toArray();
}

async function acquisitionsOf(owner: Principal) {
  return sg.db.collection('journal_entries').find({ workspace: owner.workspace, 'source.kind': 'asset_acquisition' }).toArray();
}

describe('a keyed assets.create whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('lands before the retry: the retry finishes that asset — one asset, one acquisition entry', async () => {
    const owner = workspace();
    const held = await killed(owner, input, 'asset-1');
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('assets.create', input, owner, { idempotencyKey: 'asset-1' });
    expect(retry).toMatchObject({ ok: true });
    expect(retry.output.asset.status).toBe('active');
    await sg.sweep();
    expect((await assetsOf(owner)).map((a) => [a._id, a.status])).toEqual([[retry.output.asset.id, 'active']]);
    const entries = await acquisitionsOf(owner);
    expect(entries.map((e) => e.source.id)).toEqual([retry.output.asset.id]);
    expect((await sg.output('assets.list', {}, owner)).rows.map((r: { id: string }) => r.id)).toEqual([retry.output.asset.id]);
    // The acquisition's one marker, begun by the dead attempt and finished by the retry.
    const markers = await sg.db.collection('operations').find({ workspace: owner.workspace, kind: 'asset_acquisition' }).toArray();
    expect(markers.map((m) => [m._id, m.status])).toEqual([[`asset_acquisition:${retry.output.asset.id}`, 'done']]);
  });

  it('lands after the retry recorded the asset: refused as the same asset, one asset stays', async () => {
    const owner = workspace();
    const held = await killed(owner, input, 'asset-2');
    const retry = await sg.call('assets.create', input, owner, { idempotencyKey: 'asset-2' });
    expect(retry).toMatchObject({ ok: true });
    expect(await held.land()).toBe('duplicate');
    await sg.sweep();
    expect((await assetsOf(owner)).map((a) => [a._id, a.status])).toEqual([[retry.output.asset.id, 'active']]);
    expect((await acquisitionsOf(owner)).map((e) => e.source.id)).toEqual([retry.output.asset.id]);
  });
});

describe('a keyed assets.create whose insert lands after recovery and whose caller never retries', () => {
  it('the asset is finished by the sweep: active, one acquisition entry, no marker left; a later retry answers it', async () => {
    const owner = workspace();
    const held = await killed(owner, input, 'asset-3');
    // Recovery found no asset and dropped the acquisition's marker; the dead attempt's insert lands now.
    expect(await sg.db.collection('operations').countDocuments({ workspace: owner.workspace, kind: 'asset_acquisition' })).toBe(0);
    expect(await held.land()).toBe('stored');
    const [landed] = await assetsOf(owner);
    expect(landed.status).toBe('recording');
    // A `recording` asset always has a marker: the sweep adopts one for it and, past the lease, runs the steps.
    await sg.db.collection('fixed_assets').updateOne({ _id: landed._id }, { $set: { updated_at: new Date(Date.now() - 10 * 60_000) } });
    await sg.sweep();
    expect((await assetsOf(owner)).map((a) => [a._id, a.status])).toEqual([[landed._id, 'active']]);
    const entries = await acquisitionsOf(owner);
    expect(entries.map((e) => [e._id, e.source.id])).toEqual([[`je_acq_${landed._id}`, landed._id]]);
    expect((await sg.db.collection('operations').find({ workspace: owner.workspace, kind: 'asset_acquisition' }).toArray()).map((m) => m.status)).toEqual(['done']);
    // Another pass changes nothing.
    await sg.sweep();
    expect(await acquisitionsOf(owner)).toHaveLength(1);
    // The key, handed back by recovery, now runs the call again: the same asset, not a second.
    const retry = await sg.call('assets.create', input, owner, { idempotencyKey: 'asset-3' });
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    expect(retry.output.asset).toMatchObject({ id: landed._id, status: 'active' });
    expect((await assetsOf(owner)).map((a) => a._id)).toEqual([landed._id]);
    expect(await acquisitionsOf(owner)).toHaveLength(1);
    expect((await sg.output('assets.list', {}, owner)).rows.map((r: { id: string }) => r.id)).toEqual([landed._id]);
  });
});

describe('an approved assets.create run again after its first attempt died inside its insert', () => {
  it('the late insert lands between recovery and the rerun: the rerun finishes that asset, the approval executed with it', async () => {
    const owner = workspace();
    const { held, approvalId } = await approvedAndKilled(sg, owner, { tool: 'assets.create', collection: 'fixed_assets', input });
    // The sweep settles the dead attempt (nothing carries its run: the approval goes back to approved),
    // then runs the approved call again; the dead attempt's insert reaches the store in between.
    const landed = landBeforeRerun(sg, held);
    await sg.sweep();
    expect(landed()).toBe('stored');
    const approval = await sg.governance.approvals.get(owner.workspace, approvalId);
    expect(approval?.status).toBe('executed');
    const stored = await assetsOf(owner);
    expect(stored.map((a) => a.status)).toEqual(['active']);
    expect((await acquisitionsOf(owner)).map((e) => e.source.id)).toEqual([stored[0]._id]);
    expect((approval?.result as { body?: { output?: { asset?: { id?: string } } } } | null)?.body?.output?.asset?.id).toBe(stored[0]._id);
  });
});
