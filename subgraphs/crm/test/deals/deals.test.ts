import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { applyIntent, repairDerived, type Principal } from '@cuadra/shared';
import { generateKeyBetween } from 'fractional-indexing';
import { createServer, name } from '../../src/server.ts';
import { deals } from '../../src/modules/deals/model.ts';

let crm: TestSubgraph;

beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await crm?.close();
});

const STAGES = [
  { name: 'Prospecto', kind: 'open', probability_ppm: 100_000, rotting_days: 7 },
  { name: 'Propuesta', kind: 'open', probability_ppm: 400_000 },
  { name: 'Negociación', kind: 'open', probability_ppm: 700_000 },
  { name: 'Ganado', kind: 'won' },
  { name: 'Perdido', kind: 'lost' },
];

async function ok(tool: string, input: unknown, who: Principal) {
  const r = await crm.call(tool, input, who);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.field ?? ''} ${r.message}`);
  return r.output;
}

async function setup() {
  const ws = testPrincipal();
  const { pipeline } = await ok('pipelines.create', { name: 'Ventas', stages: STAGES }, ws);
  return { ws, pipeline, stage: (n: string) => pipeline.stages.find((s: { name: string }) => s.name === n).id as string };
}

/** Every column document of a workspace, by its `_id` (a document made by a stray `$pull` upsert carries no `workspace` field). */
async function columnsOf(ws: Principal) {
  return crm.db.collection('crm_columns').find({ _id: { $regex: `^${ws.workspace}\\|` } } as never).toArray();
}

/** The board through the graph field the kanban block reads. */
async function board(ws: Principal, pipeline = '', limit = 25) {
  const r = await crm.graphql('query($q: JSON!) { crmBoard(query: $q) }', { q: { board: 'pipeline', pipeline, limit } }, ws);
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data.crmBoard;
}

describe('pipelines', () => {
  it('keeps stages in order by fractional keys: adding and moving a stage changes only its own key', async () => {
    const { ws, pipeline, stage } = await setup();
    expect(pipeline.default).toBe(true);
    expect(pipeline.stages.map((s: { name: string }) => s.name)).toEqual(STAGES.map((s) => s.name));
    const before = Object.fromEntries(pipeline.stages.map((s: { id: string; sort_key: string }) => [s.id, s.sort_key]));
    const added = await ok('pipelines.add_stage', { pipeline_id: pipeline.id, stage: { name: 'Demo', kind: 'open', probability_ppm: 250_000 }, place: { after: stage('Prospecto') } }, ws);
    expect(added.pipeline.stages.map((s: { name: string }) => s.name)).toEqual(['Prospecto', 'Demo', 'Propuesta', 'Negociación', 'Ganado', 'Perdido']);
    const moved = await ok('pipelines.update_stage', { id: stage('Negociación'), place: { before: stage('Prospecto') } }, ws);
    expect(moved.pipeline.stages.map((s: { name: string }) => s.name)).toEqual(['Negociación', 'Prospecto', 'Demo', 'Propuesta', 'Ganado', 'Perdido']);
    // Nobody else was renumbered: every stage but the moved one keeps the key it had.
    for (const s of moved.pipeline.stages) if (s.id !== stage('Negociación') && before[s.id]) expect(s.sort_key).toBe(before[s.id]);
    // The moved key is what fractional-indexing puts before the first one.
    expect(moved.pipeline.stages[0].sort_key).toBe(generateKeyBetween(null, before[stage('Prospecto')]));
    // Won and lost stages have fixed probabilities.
    expect(moved.pipeline.stages.find((s: { kind: string }) => s.kind === 'won').probability_ppm).toBe(1_000_000);
  });

  it('makes the first pipeline the default, and another one default on request', async () => {
    const { ws, pipeline } = await setup();
    const second = await ok('pipelines.create', { name: 'Renovaciones', key: 'renov', stages: [{ name: 'Abierto', kind: 'open' }, { name: 'Renovado', kind: 'won' }] }, ws);
    expect(second.pipeline.default).toBe(false);
    expect((await ok('pipelines.get', { id: '' }, ws)).pipeline.id).toBe(pipeline.id);
    await ok('pipelines.update', { id: second.pipeline.id, default: true }, ws);
    expect((await ok('pipelines.get', { id: '' }, ws)).pipeline.key).toBe('renov');
    expect((await ok('pipelines.list', {}, ws)).rows.map((p: { key: string }) => p.key)).toEqual(['renov', 'ventas']);
  });

  it('refuses what would break a pipeline, at the field', async () => {
    const ws = testPrincipal();
    expect(await crm.call('pipelines.create', { name: 'X', stages: [{ name: 'W', kind: 'won' }] }, ws)).toMatchObject({ code: 'invalid_input', field: '/stages' });
    expect(await crm.call('pipelines.create', { name: 'X', stages: [{ name: 'A', kind: 'maybe' }] }, ws)).toMatchObject({ code: 'invalid_input', field: '/stages/0/kind' });
    const { pipeline } = await ok('pipelines.create', { name: 'X', stages: [{ name: 'A', kind: 'open' }] }, ws);
    expect(await crm.call('pipelines.create', { name: 'Y', key: pipeline.key, stages: [{ name: 'A', kind: 'open' }] }, ws)).toMatchObject({ code: 'invalid_input', field: '/key' });
    expect(await crm.call('pipelines.archive', { id: pipeline.id }, ws)).toMatchObject({ code: 'conflict' });
    expect(await crm.call('pipelines.update', { id: 'pip_nope', name: 'Z' }, ws)).toMatchObject({ code: 'not_found' });
    expect(await crm.call('pipelines.create', { name: 'V', stages: [{ name: 'A', kind: 'open' }] }, { ...ws, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
  });
});

describe('custom fields', () => {
  it('validates deal values with the workspace schema and refuses a wrong type at its pointer', async () => {
    const { ws } = await setup();
    await ok('crm_fields.create', { entity: 'deal', key: 'budget', label: 'Presupuesto', type: 'money' }, ws);
    await ok('crm_fields.create', { entity: 'deal', key: 'source', label: 'Origen', type: 'select', options: ['web', 'referido', 'feria'] }, ws);
    const wrong = await crm.call('deals.create', { title: 'Licencias', amount: 100, custom: { budget: 'mucho' } }, ws);
    expect(wrong).toMatchObject({ ok: false, code: 'invalid_input', field: '/custom/budget', httpStatus: 422 });
    expect(await crm.call('deals.create', { title: 'L', custom: { source: 'radio' } }, ws)).toMatchObject({ code: 'invalid_input', field: '/custom/source' });
    expect(await crm.call('deals.create', { title: 'L', custom: { color: 'red' } }, ws)).toMatchObject({ code: 'invalid_input', field: '/custom/color' });
    const { deal } = await ok('deals.create', { title: 'Licencias anuales', amount: 500_000_00, custom: { budget: 600_000_00, source: 'feria' } }, ws);
    expect(deal.custom).toEqual({ budget: 600_000_00, source: 'feria' });
    // The value is searchable (select values are), through the index.
    const found = await ok('deals.list', { search: 'FERIA' }, ws);
    expect(found.rows.map((d: { id: string }) => d.id)).toEqual([deal.id]);
  });

  it('keeps an archived field\'s values, refuses new ones, and compiles a new schema per version', async () => {
    const { ws } = await setup();
    const { field } = await ok('crm_fields.create', { entity: 'deal', key: 'region', label: 'Región', type: 'text', required: true }, ws);
    expect(await crm.call('deals.create', { title: 'Sin región' }, ws)).toMatchObject({ code: 'invalid_input', field: '/custom' });
    const { deal } = await ok('deals.create', { title: 'Con región', custom: { region: 'Antioquia' } }, ws);
    await ok('crm_fields.archive', { id: field.id }, ws);
    expect(await crm.call('deals.update', { id: deal.id, custom: { region: 'Cundinamarca' } }, ws)).toMatchObject({ code: 'invalid_input', field: '/custom/region' });
    const kept = await ok('deals.update', { id: deal.id, title: 'Con región (editado)' }, ws);
    expect(kept.deal.custom).toEqual({ region: 'Antioquia' });
    // No longer required once archived.
    expect((await crm.call('deals.create', { title: 'Ahora sin región' }, ws)).ok).toBe(true);
    // Still found by its archived value.
    expect((await ok('deals.list', { search: 'antioquia' }, ws)).rows.map((d: { id: string }) => d.id)).toEqual([deal.id]);
  });
});

describe('deals on the board', () => {
  it('moves cards between columns with history, counts and sums kept on write', async () => {
    const { ws, stage } = await setup();
    const party = (await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer' }, ws)).party;
    const a = (await ok('deals.create', { title: 'A', party_id: party.id, amount: 1_000_00 }, ws)).deal;
    const b = (await ok('deals.create', { title: 'B', amount: 2_000_00 }, ws)).deal;
    const c = (await ok('deals.create', { title: 'C', amount: 4_000_00 }, ws)).deal;
    let bd = await board(ws);
    // New cards go on top: C, B, A.
    expect(bd.columns[0].deals.map((d: { title: string }) => d.title)).toEqual(['C', 'B', 'A']);
    expect(bd.columns[0]).toMatchObject({ count: 3, amount: 7_000_00, weighted_amount: 70_000 }); // 700,000 × 10 % = 70,000
    await ok('deals.move', { id: a.id, stage_id: stage('Propuesta') }, ws);
    await ok('deals.move', { id: b.id, place: { after: c.id } }, ws);
    await ok('deals.move', { id: c.id, place: { after: b.id } }, ws);
    bd = await board(ws);
    expect(bd.columns[0].deals.map((d: { title: string }) => d.title)).toEqual(['B', 'C']);
    expect(bd.columns[1]).toMatchObject({ count: 1, amount: 1_000_00, weighted_amount: 40_000 });
    const got = (await ok('deals.get', { id: a.id }, ws)).deal;
    expect(got.history.map((h: { from: string | null; to: string }) => [h.from, h.to])).toEqual([[null, stage('Prospecto')], [stage('Prospecto'), stage('Propuesta')]]);
    // A reorder within a column is not a stage change: no history entry.
    expect((await ok('deals.get', { id: c.id }, ws)).deal.history).toHaveLength(1);
    // Lost needs a reason from the pipeline's list; won and lost columns hold closed deals.
    expect(await crm.call('deals.lose', { id: b.id, reason: 'Porque sí' }, ws)).toMatchObject({ code: 'invalid_input', field: '/reason' });
    expect(await crm.call('deals.move', { id: b.id, stage_id: stage('Perdido') }, ws)).toMatchObject({ code: 'invalid_input', field: '/lost_reason' });
    await ok('deals.lose', { id: b.id, reason: 'Precio', note: 'Más barato en otra parte' }, ws);
    await ok('deals.win', { id: c.id }, ws);
    expect(await crm.call('deals.win', { id: c.id }, ws)).toMatchObject({ code: 'conflict' });
    bd = await board(ws);
    expect(bd.columns.map((col: { count: number; amount: number }) => [col.count, col.amount])).toEqual([[0, 0], [1, 1_000_00], [0, 0], [1, 4_000_00], [1, 2_000_00]]);
    const reopened = (await ok('deals.reopen', { id: c.id }, ws)).deal;
    expect(reopened).toMatchObject({ status: 'open', stage_id: stage('Prospecto'), closed_at: null });
    expect(await crm.call('deals.move', { id: 'dl_nope', stage_id: stage('Propuesta') }, ws)).toMatchObject({ code: 'not_found' });
    expect(await crm.call('deals.move', { id: a.id, stage_id: 'stg_nope' }, ws)).toMatchObject({ code: 'invalid_input', field: '/stage_id' });
    expect(await crm.call('deals.create', { title: 'X', party_id: 'pty_nope' }, ws)).toMatchObject({ code: 'invalid_input', field: '/party_id' });
  });

  it('ten concurrent moves of one card leave one history entry per stage change and one consistent order', async () => {
    const { ws, stage } = await setup();
    const open = ['Prospecto', 'Propuesta', 'Negociación'].map(stage);
    const others = [];
    for (let i = 0; i < 4; i++) others.push((await ok('deals.create', { title: `Otro ${i}`, amount: 100 }, ws)).deal);
    const card = (await ok('deals.create', { title: 'La tarjeta', amount: 5_000 }, ws)).deal;
    const moves = Array.from({ length: 10 }, (_, i) => ({ id: card.id, stage_id: open[(i % 2) + 1], ...(i % 3 === 0 ? { place: {} } : {}) }));
    const answers = await Promise.all(moves.map((m) => crm.call('deals.move', m, ws)));
    expect(answers.every((a) => a.ok)).toBe(true);
    const final = (await ok('deals.get', { id: card.id }, ws)).deal;
    // Each applied stage change is one entry, and the chain is unbroken (each from is the previous to).
    const h = final.history as { from: string | null; to: string }[];
    for (let i = 1; i < h.length; i++) expect(h[i].from).toBe(h[i - 1].to);
    expect(h.at(-1)!.to).toBe(final.stage_id);
    const applied = answers.filter((a, i) => a.output.deal.history.length > 0 && i >= 0).length;
    expect(applied).toBe(10);
    expect(h.length - 1).toBeLessThanOrEqual(10);
    expect(new Set(answers.map((a) => a.output.deal.history.length)).size).toBe(h.length - 1); // every stage change was answered once
    // The columns: the card once, in its stage; counts and sums match their cards.
    const raw = await columnsOf(ws);
    const where = raw.filter((c) => c.cards.some((x: { i: string }) => x.i === card.id));
    expect(where.map((c) => c.stage_id)).toEqual([final.stage_id]);
    for (const col of raw) {
      expect(col.count).toBe(col.cards.length);
      const keys = col.cards.map((x: { k: string; i: string }) => `${x.k}|${x.i}`);
      expect(keys).toEqual([...keys].sort());
      expect(col.applied ?? []).toEqual([]);
    }
    expect(raw.find((c) => c.stage_id === final.stage_id)!.amount).toBe(final.stage_id === open[0] ? 4 * 100 + 5_000 : 5_000);
  });

  it('rounds of concurrent moves of several cards across four columns never leave a card in two columns or in none', async () => {
    const { ws, stage } = await setup();
    const targets = ['Prospecto', 'Propuesta', 'Negociación', 'Ganado'].map(stage);
    const cards: { id: string; amount: number }[] = [];
    for (let i = 0; i < 4; i++) cards.push({ id: (await ok('deals.create', { title: `Carrera ${i}`, amount: (i + 1) * 1_000 }, ws)).deal.id, amount: (i + 1) * 1_000 });
    await ok('deals.create', { title: 'Quieta', amount: 7 }, ws);
    // A fixed pseudo-random sequence (LCG) so a failure replays the same moves.
    let seed = 34;
    const next = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % n);
    for (let round = 0; round < 12; round++) {
      // Four moves per card at once: to another column, or a reorder in place (place: {}), in any order.
      const moves = cards.flatMap((c) => Array.from({ length: 6 }, () => ({ id: c.id, stage_id: targets[next(4)], ...(next(3) === 0 ? { place: {} } : {}) })));
      const answers = await Promise.all(moves.map((m) => crm.call('deals.move', m, ws)));
      expect(answers.filter((a) => !a.ok).map((a) => `${a.code} ${a.message}`)).toEqual([]);
      const stored = await crm.db.collection('crm_deals').find({ workspace: ws.workspace }).toArray();
      const columns = await columnsOf(ws);
      for (const d of stored) {
        // Each card in exactly the column of its deal's stage, once; nothing left in flight.
        const holding = columns.flatMap((col) => col.cards.filter((x: { i: string }) => x.i === String(d._id)).map(() => col.stage_id));
        expect({ round, deal: d.title, holding }).toEqual({ round, deal: d.title, holding: [d.stage_id] });
        expect(d.pending_derived).toEqual([]);
        const h = d.history as { from: string | null; to: string }[];
        for (let i = 1; i < h.length; i++) expect(h[i].from).toBe(h[i - 1].to);
        expect(h.at(-1)!.to).toBe(d.stage_id);
      }
      for (const col of columns) {
        const here = stored.filter((d) => d.stage_id === col.stage_id);
        expect({ round, stage: col.stage_id, count: col.count, amount: col.amount, cards: col.cards.length })
          .toEqual({ round, stage: col.stage_id, count: here.length, amount: here.reduce((a, d) => a + d.amount, 0), cards: here.length });
        const keys = col.cards.map((x: { k: string; i: string }) => `${x.k}|${x.i}`);
        expect(keys).toEqual([...keys].sort());
        expect(col.applied ?? []).toEqual([]);
      }
      expect(await crm.db.collection('derived_pending').countDocuments({ workspace: ws.workspace })).toBe(0);
    }
  });

  it('a move while an earlier one is still writing its columns waits for it: the card ends in one column', async () => {
    const { ws, stage } = await setup();
    const d = (await ok('deals.create', { title: 'Pausada', amount: 300 }, ws)).deal;
    // What a writer paused between its two steps leaves (a GC pause, a slow socket): the deal moved
    // to Propuesta and carrying its intent, the columns not yet changed. It is alive: no repair may take it over.
    const intent = { id: 'drv_paused1', at: new Date(), changes: [
      { coll: 'crm_columns', id: `${ws.workspace}|${stage('Prospecto')}`, pull: [['cards', { i: d.id }]], inc: [['count', -1], ['amount', -300]] },
      { coll: 'crm_columns', id: `${ws.workspace}|${stage('Propuesta')}`, push: [['cards', { k: 'a0', i: d.id }, { k: 1, i: 1 }]], inc: [['count', 1], ['amount', 300]], init: [['workspace', ws.workspace], ['stage_id', stage('Propuesta')]] },
    ] };
    await crm.db.collection('derived_pending').insertOne({ _id: intent.id, workspace: ws.workspace, source: 'crm_deals', doc: d.id, at: intent.at } as never);
    await crm.db.collection('crm_deals').updateOne({ _id: d.id } as never, {
      $set: { stage_id: stage('Propuesta'), order_key: 'a0', version: 2 },
      $push: { pending_derived: intent, history: { from: stage('Prospecto'), to: stage('Propuesta'), at: new Date(), by: 'paused' } },
    } as never);
    // The next move starts, then the paused writer resumes and applies its columns.
    const moving = crm.call('deals.move', { id: d.id, stage_id: stage('Negociación') }, ws);
    await new Promise((r) => setTimeout(r, 300));
    await applyIntent(crm.db, deals(crm.db), d.id, intent as never);
    const moved = await moving;
    expect(moved).toMatchObject({ ok: true });
    const columns = await columnsOf(ws);
    expect(columns.filter((c) => c.cards.some((x: { i: string }) => x.i === d.id)).map((c) => c.stage_id)).toEqual([stage('Negociación')]);
    expect(columns.map((c) => [c.stage_id, c.count, c.amount]).sort()).toEqual([[stage('Negociación'), 1, 300], [stage('Propuesta'), 0, 0], [stage('Prospecto'), 0, 0]].sort());
    const stored = await crm.db.collection('crm_deals').findOne({ _id: d.id } as never);
    expect(stored!.history.map((x: { from: string | null; to: string }) => [x.from, x.to])).toEqual([[null, stage('Prospecto')], [stage('Prospecto'), stage('Propuesta')], [stage('Propuesta'), stage('Negociación')]]);
    expect(stored!.pending_derived).toEqual([]);
  });

  it('moves a card whose last mover died between the deal and its columns: the next moves take its intent over first', async () => {
    const { ws, stage } = await setup();
    const d = (await ok('deals.create', { title: 'Huérfana', amount: 300 }, ws)).deal;
    // A writer dead for a minute (past the repair's wait) left the deal moved to Propuesta, its columns unchanged.
    const intent = { id: 'drv_dead1', at: new Date(Date.now() - 60_000), changes: [
      { coll: 'crm_columns', id: `${ws.workspace}|${stage('Prospecto')}`, pull: [['cards', { i: d.id }]], inc: [['count', -1], ['amount', -300]] },
      { coll: 'crm_columns', id: `${ws.workspace}|${stage('Propuesta')}`, push: [['cards', { k: 'a0', i: d.id }, { k: 1, i: 1 }]], inc: [['count', 1], ['amount', 300]], init: [['workspace', ws.workspace], ['stage_id', stage('Propuesta')]] },
    ] };
    await crm.db.collection('derived_pending').insertOne({ _id: intent.id, workspace: ws.workspace, source: 'crm_deals', doc: d.id, at: intent.at } as never);
    await crm.db.collection('crm_deals').updateOne({ _id: d.id } as never, {
      $set: { stage_id: stage('Propuesta'), order_key: 'a0', version: 2 },
      $push: { pending_derived: intent, history: { from: stage('Prospecto'), to: stage('Propuesta'), at: intent.at, by: 'dead' } },
    } as never);
    // Five moves at once, and no read (a board read would repair first): the columns as stored must be right.
    const answers = await Promise.all(['Negociación', 'Prospecto', 'Negociación', 'Propuesta', 'Negociación'].map((n) => crm.call('deals.move', { id: d.id, stage_id: stage(n) }, ws)));
    expect(answers.filter((a) => !a.ok)).toEqual([]);
    const stored = (await crm.db.collection('crm_deals').findOne({ _id: d.id } as never))!;
    const columns = await columnsOf(ws);
    expect(columns.filter((c) => c.cards.some((x: { i: string }) => x.i === d.id)).map((c) => c.stage_id)).toEqual([stored.stage_id]);
    for (const c of columns) expect([c.stage_id, c.count, c.amount, c.cards.length]).toEqual(c.stage_id === stored.stage_id ? [c.stage_id, 1, 300, 1] : [c.stage_id, 0, 0, 0]);
    expect(stored.pending_derived).toEqual([]);
    expect(await crm.db.collection('derived_pending').countDocuments({ workspace: ws.workspace })).toBe(0);
    const h = stored.history as { from: string | null; to: string }[];
    for (let i = 1; i < h.length; i++) expect(h[i].from).toBe(h[i - 1].to);
  });

  it('finishes a move whose process died between the deal and its columns (repair from the intent)', async () => {
    const { ws, stage } = await setup();
    const d = (await ok('deals.create', { title: 'Interrumpido', amount: 300 }, ws)).deal;
    // What a crash leaves: the deal already moved, carrying its intent, and the columns not yet changed.
    const intent = { id: 'drv_crash1', at: new Date(Date.now() - 60_000), changes: [
      { coll: 'crm_columns', id: `${ws.workspace}|${stage('Prospecto')}`, pull: [['cards', { i: d.id }]], inc: [['count', -1], ['amount', -300]] },
      { coll: 'crm_columns', id: `${ws.workspace}|${stage('Propuesta')}`, push: [['cards', { k: 'a0', i: d.id }, { k: 1, i: 1 }]], inc: [['count', 1], ['amount', 300]], init: [['workspace', ws.workspace], ['stage_id', stage('Propuesta')]] },
    ] };
    await crm.db.collection('derived_pending').insertOne({ _id: intent.id, workspace: ws.workspace, source: 'crm_deals', doc: d.id, at: intent.at } as never);
    await crm.db.collection('crm_deals').updateOne({ _id: d.id } as never, { $set: { stage_id: stage('Propuesta'), order_key: 'a0' }, $push: { pending_derived: intent } } as never);
    // Six repairs at once (six board reads) and one more after: one takes it over, the counters change once.
    const repaired = await Promise.all(Array.from({ length: 6 }, () => repairDerived(crm.db, ws.workspace, [deals(crm.db)])));
    expect(repaired.reduce((a, n) => a + n, 0)).toBe(1);
    expect(await repairDerived(crm.db, ws.workspace, [deals(crm.db)])).toBe(0);
    expect((await columnsOf(ws)).map((c) => [c.stage_id, c.count, c.amount, c.cards.length, c.applied]).sort()).toEqual([[stage('Propuesta'), 1, 300, 1, []], [stage('Prospecto'), 0, 0, 0, []]].sort());
    const bd = await board(ws);
    expect(bd.columns.slice(0, 2).map((c: { count: number; amount: number }) => [c.count, c.amount])).toEqual([[0, 0], [1, 300]]);
    expect((await crm.db.collection('crm_deals').findOne({ _id: d.id } as never))!.pending_derived).toEqual([]);
    // A process that died after taking an intent off the deal, before forgetting its marks: the marker names them, the repair forgets them.
    const column = `${ws.workspace}|${stage('Propuesta')}`;
    await crm.db.collection('crm_columns').updateOne({ _id: column } as never, { $addToSet: { applied: 'drv_crash2#0' } } as never);
    await crm.db.collection('derived_pending').insertOne({ _id: 'drv_crash2', workspace: ws.workspace, source: 'crm_deals', doc: d.id, at: intent.at, marks: [{ coll: 'crm_columns', id: column, mark: 'drv_crash2#0' }] } as never);
    expect(await repairDerived(crm.db, ws.workspace, [deals(crm.db)])).toBe(0);
    expect((await crm.db.collection('crm_columns').findOne({ _id: column } as never))!.applied).toEqual([]);
    expect(await crm.db.collection('derived_pending').countDocuments({ workspace: ws.workspace })).toBe(0);
  });

  it('reads the board of 1 to 100 cards per column and flags rotting deals', async () => {
    const { ws } = await setup();
    for (let i = 0; i < 5; i++) await ok('deals.create', { title: `D${i}`, amount: 10 }, ws);
    // Make one idle for 8 days (the first stage rots after 7).
    const idle = (await ok('deals.create', { title: 'Quieto', amount: 10 }, ws)).deal;
    const old = new Date(Date.now() - 8 * 86_400_000);
    await crm.db.collection('crm_deals').updateOne({ _id: idle.id } as never, { $set: { stage_entered_at: old, updated_at: old } } as never);
    const bd = await board(ws, 'ventas', 2);
    expect(bd.columns[0]).toMatchObject({ count: 6, more: true });
    expect(bd.columns[0].deals).toHaveLength(2);
    const all = await board(ws, '', 100);
    expect(all.columns[0].deals.filter((d: { rotting: boolean }) => d.rotting).map((d: { id: string }) => d.id)).toEqual([idle.id]);
    const bad = await crm.graphql('query($q: JSON!) { crmBoard(query: $q) }', { q: { board: 'pipeline', limit: 101 } }, ws);
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/limit' });
    const none = await crm.graphql('query($q: JSON!) { crmBoard(query: $q) }', { q: { board: 'pipeline', pipeline: 'nope' } }, ws);
    expect(none.body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/pipeline' });
  });
});

describe('parties', () => {
  it('validates party custom fields and shows a party\'s open deals and latest activities', async () => {
    const { ws, stage } = await setup();
    await ok('crm_fields.create', { entity: 'party', key: 'sector', label: 'Sector', type: 'select', options: ['retail', 'industria'] }, ws);
    expect(await crm.call('parties.create', { name: 'X', kind: 'customer', custom: { sector: 42 } }, ws)).toMatchObject({ code: 'invalid_input', field: '/custom/sector' });
    const p = (await ok('parties.create', { name: 'Ferretería Sur', kind: 'customer', custom: { sector: 'retail' } }, ws)).party;
    expect(p.custom).toEqual({ sector: 'retail' });
    expect((await ok('parties.update', { id: p.id, custom: { sector: 'industria' } }, ws)).party.custom).toEqual({ sector: 'industria' });
    const open = (await ok('deals.create', { title: 'Abierto', amount: 10, party_id: p.id }, ws)).deal;
    const won = (await ok('deals.create', { title: 'Ganado', amount: 10, party_id: p.id }, ws)).deal;
    await ok('deals.win', { id: won.id, stage_id: stage('Ganado') }, ws);
    await ok('activities.create', { kind: 'call', subject: 'Llamada', party_id: p.id }, ws);
    const got = await ok('parties.get', { id: p.id }, ws);
    expect(got.open_deals.map((d: { id: string }) => d.id)).toEqual([open.id]);
    expect(got.activities.map((a: { subject: string }) => a.subject)).toEqual(['Llamada']);
    expect(got.open_invoices).toBeNull(); // no finance in this test: said so, not faked
  });
});

describe('refusals', () => {
  it('refuses each tool\'s wrong calls with the contract code and field, changing nothing', async () => {
    const { ws, pipeline, stage } = await setup();
    const d = (await ok('deals.create', { title: 'Base', amount: 100 }, ws)).deal;
    // A stage holding deals cannot be archived; an empty one can, and a pipeline keeps an open stage.
    expect(await crm.call('pipelines.update_stage', { id: stage('Prospecto'), status: 'archived' }, ws)).toMatchObject({ code: 'conflict' });
    expect((await ok('pipelines.update_stage', { id: stage('Negociación'), status: 'archived' }, ws)).pipeline.stages.find((s: { id: string }) => s.id === stage('Negociación')).status).toBe('archived');
    expect(await crm.call('deals.move', { id: d.id, stage_id: stage('Negociación') }, ws)).toMatchObject({ code: 'invalid_input', field: '/stage_id' });
    expect(await crm.call('pipelines.update_stage', { id: stage('Ganado'), probability_ppm: 500_000 }, ws)).toMatchObject({ code: 'invalid_input', field: '/probability_ppm' });
    expect(await crm.call('pipelines.update_stage', { id: stage('Perdido'), rotting_days: 3 }, ws)).toMatchObject({ code: 'invalid_input', field: '/rotting_days' });
    expect(await crm.call('pipelines.update_stage', { id: stage('Prospecto'), place: { before: 'stg_nope' } }, ws)).toMatchObject({ code: 'invalid_input', field: '/place/before' });
    expect(await crm.call('pipelines.add_stage', { pipeline_id: 'pip_nope', stage: { name: 'X', kind: 'open' } }, ws)).toMatchObject({ code: 'not_found' });
    expect(await crm.call('pipelines.add_stage', { pipeline_id: pipeline.id, stage: { name: 'X', kind: 'open' }, place: { before: 'a', after: 'b' } }, ws)).toMatchObject({ code: 'invalid_input', field: '/place' });
    // Custom fields: options only for choices, not removed once given, keys unique per entity.
    expect(await crm.call('crm_fields.create', { entity: 'deal', key: 'tier', label: 'Nivel', type: 'select' }, ws)).toMatchObject({ code: 'invalid_input', field: '/options' });
    expect(await crm.call('crm_fields.create', { entity: 'deal', key: 'n', label: 'N', type: 'number', options: ['a'] }, ws)).toMatchObject({ code: 'invalid_input', field: '/options' });
    const { field } = await ok('crm_fields.create', { entity: 'deal', key: 'tier', label: 'Nivel', type: 'select', options: ['oro', 'plata'] }, ws);
    expect(await crm.call('crm_fields.create', { entity: 'deal', key: 'tier', label: 'Otra', type: 'text' }, ws)).toMatchObject({ code: 'invalid_input', field: '/key' });
    expect(await crm.call('crm_fields.update', { id: field.id, options: ['oro'] }, ws)).toMatchObject({ code: 'invalid_input', field: '/options' });
    expect((await ok('crm_fields.update', { id: field.id, options: ['oro', 'plata', 'bronce'] }, ws)).field.options).toEqual(['oro', 'plata', 'bronce']);
    expect(await crm.call('crm_fields.archive', { id: 'fld_nope' }, ws)).toMatchObject({ code: 'not_found' });
    // Deals: amount or lines, a lines deal's amount is theirs, a closed deal's amount is fixed until reopened.
    expect(await crm.call('deals.create', { title: 'X', amount: 5, lines: [{ description: 'a', quantity: 1, unit_price: 5 }] }, ws)).toMatchObject({ code: 'invalid_input', field: '/amount' });
    const withLines = (await ok('deals.create', { title: 'Con líneas', lines: [{ description: 'Horas', quantity: 2.5, unit_price: 80_000_00, discount_bps: 1_000 }] }, ws)).deal;
    expect(withLines.amount).toBe(180_000_00); // 2.5 × 8,000,000 × (1 − 10 %) = 18,000,000
    expect(await crm.call('deals.update', { id: withLines.id, amount: 1 }, ws)).toMatchObject({ code: 'invalid_input', field: '/amount' });
    await ok('deals.win', { id: d.id }, ws);
    expect(await crm.call('deals.update', { id: d.id, amount: 999 }, ws)).toMatchObject({ code: 'conflict' });
    expect(await crm.call('deals.lose', { id: d.id, reason: 'Precio' }, ws)).toMatchObject({ code: 'conflict' });
    expect(await crm.call('deals.reopen', { id: withLines.id }, ws)).toMatchObject({ code: 'conflict' });
    expect(await crm.call('deals.create', { title: 'X', pipeline: 'nope' }, ws)).toMatchObject({ code: 'invalid_input', field: '/pipeline' });
    expect(await crm.call('deals.create', { title: 'X', currency: 'USD' }, ws)).toMatchObject({ code: 'invalid_input', field: '/currency' });
    expect(await crm.call('deals.create', { title: 'X', stage_id: stage('Ganado') }, ws)).toMatchObject({ code: 'invalid_input', field: '/stage_id' });
    expect(await crm.call('deals.move', { id: withLines.id, place: { after: 'dl_nope' } }, ws)).toMatchObject({ code: 'invalid_input', field: '/place/after' });
    expect(await crm.call('deals.list', { pipeline: 'nope' }, ws)).toMatchObject({ code: 'invalid_input', field: '/pipeline' });
    expect(await crm.call('deals.move', { id: withLines.id, stage_id: stage('Propuesta') }, { ...ws, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    // Another workspace's deal is not there.
    expect(await crm.call('deals.get', { id: d.id }, testPrincipal())).toMatchObject({ code: 'not_found' });
    // Activities.
    const act = (await ok('activities.create', { kind: 'task', subject: 'Enviar propuesta', deal_id: withLines.id, due_date: '2026-12-01' }, ws)).activity;
    await ok('activities.complete', { id: act.id }, ws);
    expect(await crm.call('activities.complete', { id: act.id }, ws)).toMatchObject({ code: 'conflict' });
    expect(await crm.call('activities.complete', { id: 'act_nope' }, ws)).toMatchObject({ code: 'not_found' });
    expect(await crm.call('activities.create', { kind: 'call', subject: 'X', deal_id: 'dl_nope' }, ws)).toMatchObject({ code: 'invalid_input', field: '/deal_id' });
    expect(await crm.call('activities.create', { kind: 'call', subject: 'X', party_id: 'pty_nope' }, ws)).toMatchObject({ code: 'invalid_input', field: '/party_id' });
    expect(await crm.call('activities.create', { kind: 'call', subject: 'X', deal_id: withLines.id, due_time: '10:00' }, ws)).toMatchObject({ code: 'invalid_input', field: '/due_date' });
  });
});

describe('activities', () => {
  it('puts open activities in the agenda events lane until they are done', async () => {
    const { ws } = await setup();
    const d = (await ok('deals.create', { title: 'Con llamada', amount: 10 }, ws)).deal;
    const call = (await ok('activities.create', { kind: 'call', subject: 'Llamar a compras', deal_id: d.id, due_date: '2026-12-03', due_time: '10:30' }, ws)).activity;
    await ok('activities.create', { kind: 'note', subject: 'Nota', deal_id: d.id }, ws);
    expect(await crm.call('activities.create', { kind: 'task', subject: 'Sin nada' }, ws)).toMatchObject({ code: 'invalid_input', field: '/deal_id' });
    const lane = async () => (await crm.graphql('query($w: JSON!) { crmAgenda(lane: "events", window: $w) }', { w: { from: '2026-12-01', to: '2026-12-31', limit: 100, overdue: false } }, ws)).body.data.crmAgenda;
    expect(await lane()).toMatchObject([{ date: '2026-12-03', source: 'events', title: 'Llamar a compras', time: '10:30', deal_id: d.id }]);
    await ok('activities.complete', { id: call.id }, ws);
    expect(await lane()).toEqual([]);
    expect((await ok('activities.list', { deal_id: d.id }, ws)).rows).toHaveLength(2);
  });
});
