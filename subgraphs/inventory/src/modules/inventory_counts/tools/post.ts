import { CuadraError, defineTool, recordOutput, type ToolContext } from '@cuadra/shared';
import { movementIdFor, writeMovement, type MovementOutcome } from '../../stock/ledger.ts';
import { balanceFor, surplusValue } from '../../stock/place.ts';
import { inventoryCounts, type CountDoc } from '../model.ts';
import { COUNT_VIEW_SCHEMA, countView } from '../view.ts';

/** The differences of a count are posted. */
export const post = defineTool({
  name: 'inventory_counts.post',
  description: 'Post a count sheet: each counted line whose count differs from what the books expected becomes a `count` movement dated the count\'s day (a shortage leaves at its cost by the item\'s formula: debit 5295 diversos, credit 1435; a surplus comes in at the current unit cost: debit 1435, credit 4250 recuperaciones). Lines not counted are left as they are. Every line is posted once, whatever happens: a post cut short is finished by posting again. Refused 409 conflict when a line\'s month is closed or a shortage is more than is on hand.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  output: recordOutput('count', COUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const count = await openCount(ctx, input.id);
    // Every line tried first without writing (stock, closed months), so a refusal leaves the sheet wholly unposted.
    await countMovements(ctx, count, true);
    const lines = [...count.lines];
    for (const { line, outcome } of await countMovements(ctx, count, false)) lines[line] = { ...lines[line], movement_id: outcome.movement._id };
    await inventoryCounts(ctx.db).updateOne({ _id: count._id, status: 'open' }, { $set: { status: 'posted', lines, posted_at: ctx.now } });
    return { count: countView({ ...count, lines, status: 'posted', posted_at: ctx.now }) };
  },
  // Its dry run, and what a held post shows the person deciding: the very pass the post makes first
  // without writing — each difference's movement and journal lines, the stock and closed-month refusals.
  async preview(input, ctx) {
    const count = await openCount(ctx, input.id);
    const outcomes = await countMovements(ctx, count, true);
    return {
      changes: [
        { source: 'inventory_counts', id: count._id, op: 'update', before: { status: 'open' }, after: { status: 'posted' } },
        ...outcomes.map(({ outcome: { movement: m } }) => ({ source: 'stock_movements', id: m._id, op: 'insert', after: { type: m.type, item_id: m.item_id, warehouse_id: m.warehouse_id, date: m.date, qty: m.qty, value: m.value, journal: m.journal } })),
      ],
      journal_lines: outcomes.flatMap(({ outcome }) => outcome.movement.journal?.lines ?? []),
      movements: outcomes.map(({ line, outcome }) => ({ line, cost_of_sales_change: outcome.cost_of_sales_change, revalued: outcome.affected.length })),
    };
  },
});

/** The workspace's count sheet, refused when it does not exist or is posted already. */
async function openCount(ctx: ToolContext, id: string): Promise<CountDoc> {
  const count = await inventoryCounts(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean<CountDoc>();
  if (!count) throw new CuadraError('not_found', `No count sheet ${id}.`);
  if (count.status === 'posted') throw new CuadraError('conflict', 'The count sheet is already posted.');
  return count;
}

/** One `count` movement per counted line that differs from the books (each once: its id comes from the sheet's line), or with `dryRun` what each would be. */
async function countMovements(ctx: ToolContext, count: CountDoc, dryRun: boolean): Promise<{ line: number; outcome: MovementOutcome }[]> {
  const done: { line: number; outcome: MovementOutcome }[] = [];
  for (const [i, l] of count.lines.entries()) {
    if (l.counted === null || l.counted === l.expected) continue;
    const diff = l.counted - l.expected;
    const place = await balanceFor(ctx, l.item_id, count.warehouse_id, { dryRun });
    const value = diff > 0 ? ((await surplusValue(ctx.db, place._id, diff)) ?? 0) : 0;
    const source = { kind: 'inventory_count', id: count._id, line: i };
    const id = movementIdFor(ctx.workspace, 'count', l.item_id, count.warehouse_id, source);
    const outcome = await writeMovement(ctx.db, ctx.graph, place, { type: 'count', date: count.date, qty: diff, value, source, reason: `Conteo ${count._id}: contado ${l.counted / 1e6}, esperado ${l.expected / 1e6}`, id }, { now: ctx.now, dryRun });
    done.push({ line: i, outcome });
  }
  return done;
}
