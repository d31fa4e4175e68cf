import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { rollupId } from '../src/lib/rollup.ts';
import { applyRollupIntent, markIntent, REPAIR_AFTER_MS, repairPendingRollups, rollupIntent } from '../src/lib/rollups.ts';
import { configuredWorkspace, draft, startInvoices } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

describe('rollup intents', () => {
  it('are applied once even when applied twice, and a dead handler’s intent is finished by the repair', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const model = invoices(sg.db);
    const day = '2026-11-02';
    const total = () => sg.db.collection('rollups').findOne({ _id: rollupId(owner.workspace, 'COP', 'd', day) } as never);
    const before = (await total())?.v.revenue ?? 0;
    // A handler marked its intent, wrote its change with it, then died before touching the rollups.
    const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: 1234 } }], new Date(Date.now() - REPAIR_AFTER_MS - 1000))!;
    await markIntent(sg.db, owner.workspace, model, inv.id, intent);
    // Another marked a change that never happened (it lost its race): the repair just drops the marker.
    const lost = rollupIntent([{ day, currency: 'COP', inc: { revenue: 99 } }], intent.at)!;
    await markIntent(sg.db, owner.workspace, model, inv.id, lost);
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    // Too fresh for the repair: it belongs to a live handler.
    expect(await repairPendingRollups(sg.db, owner.workspace, [model], new Date(intent.at.getTime() + 1000))).toBe(0);
    expect(await repairPendingRollups(sg.db, owner.workspace, [model])).toBe(1);
    expect((await total())!.v.revenue).toBe(before + 1234);
    expect(await sg.db.collection('pending_changes').countDocuments({ workspace: owner.workspace })).toBe(0);
    // Applying the same intent again (a repair racing the handler) changes nothing.
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    await sg.db.collection('rollups').updateOne({ _id: rollupId(owner.workspace, 'COP', 'd', day) } as never, { $addToSet: { applied: `${intent.id}#0` } });
    await applyRollupIntent(sg.db, model, inv.id, owner.workspace, intent);
    expect((await total())!.v.revenue).toBe(before + 1234);
    expect((await model.findById(inv.id).lean())!.pending_count).toBe(0);
    expect((await total())!.applied).toEqual([]);
  });
});
