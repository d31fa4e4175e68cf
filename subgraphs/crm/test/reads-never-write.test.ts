import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, writesOfEveryRead, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { createServer, name } from '../src/server.ts';
import { owned } from '../src/modules/index.ts';

// Every read crm answers (read tools, records sources, metrics, agenda lanes, the board) run with
// the driver's command monitoring on, over a workspace where a dead move left its column changes
// unapplied: no read writes; the owner's sweep (the deals module's maintenance hook) finishes it.
let crm: TestSubgraph;
beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer, { monitorCommands: true });
});
afterAll(async () => {
  await crm?.close();
});

async function ok(tool: string, input: unknown, who: Principal) {
  const r = await crm.call(tool, input, who);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.field ?? ''} ${r.message}`);
  return r.output;
}

describe('reads never write', () => {
  it('answers every read of a workspace a crash left half-moved without one write command; the sweep then finishes the move', async () => {
    const ws = testPrincipal();
    const { pipeline } = await ok('pipelines.create', { name: 'Ventas', stages: [{ name: 'Prospecto', kind: 'open', probability_ppm: 100_000 }, { name: 'Propuesta', kind: 'open', probability_ppm: 400_000 }, { name: 'Ganado', kind: 'won' }] }, ws);
    const [first, second] = pipeline.stages.map((s: { id: string }) => s.id);
    const party = (await ok('parties.create', { kind: 'customer', name: 'Tienda Andina SAS' }, ws)).party;
    const deal = (await ok('deals.create', { title: 'Interrumpido', amount: 300, party_id: party.id }, ws)).deal;
    // What a crash leaves: the deal moved, carrying its intent, the columns not yet changed.
    const intent = { id: 'drv_crash_reads', at: new Date(Date.now() - 60_000), changes: [
      { coll: 'crm_columns', id: `${ws.workspace}|${first}`, pull: [['cards', { i: deal.id }]], inc: [['count', -1], ['amount', -300]] },
      { coll: 'crm_columns', id: `${ws.workspace}|${second}`, push: [['cards', { k: 'a0', i: deal.id }, { k: 1, i: 1 }]], inc: [['count', 1], ['amount', 300]], init: [['workspace', ws.workspace], ['stage_id', second]] },
    ] };
    await crm.db.collection('derived_pending').insertOne({ _id: intent.id, workspace: ws.workspace, source: 'crm_deals', doc: deal.id, at: intent.at } as never);
    await crm.db.collection('crm_deals').updateOne({ _id: deal.id } as never, { $set: { stage_id: second, order_key: 'a0' }, $push: { pending_derived: intent } } as never);

    const { runs, writes } = await writesOfEveryRead(crm, owned, ws, {
      inputs: { 'deals.get': { id: deal.id }, 'parties.get': { id: party.id }, 'pipelines.get': { id: pipeline.id } },
      metric: { days: 30 },
      window: { from: '2026-11-01', to: '2026-12-31', limit: 50 },
      board: { pipeline: '', limit: 25 },
    });
    console.log('[crm reads-never-write]', { reads: runs.length, answered: runs.filter((r) => r.ok).length, refused: runs.filter((r) => !r.ok).map((r) => `${r.read}: ${r.code}`) });
    expect(runs.find((r) => r.read === 'board pipeline')).toEqual({ read: 'board pipeline', ok: true });
    expect(runs.find((r) => r.read === 'tool deals.get')).toEqual({ read: 'tool deals.get', ok: true });
    expect(writes).toEqual([]);

    expect(await crm.db.collection('derived_pending').countDocuments({ workspace: ws.workspace })).toBe(1);
    await crm.sweep();
    expect(await crm.db.collection('derived_pending').countDocuments({ workspace: ws.workspace })).toBe(0);
    const columns = await crm.db.collection('crm_columns').find({ workspace: ws.workspace }).toArray();
    expect(Object.fromEntries(columns.map((c) => [c.stage_id, [c.count, c.amount]]))).toEqual({ [first]: [0, 0], [second]: [1, 300] });
  }, 60_000);
});
