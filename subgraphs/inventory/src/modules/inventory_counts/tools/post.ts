import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { movementIdFor, writeMovement } from '../../stock/ledger.ts';
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
    const model = inventoryCounts(ctx.db);
    const count = await model.findOne({ _id: input.id, workspace: ctx.workspace }).lean<CountDoc>();
    if (!count) throw new CuadraError('not_found', `No count sheet ${input.id}.`);
    if (count.status === 'posted') throw new CuadraError('conflict', 'The count sheet is already posted.');
    const lines = [...count.lines];
    // Every line tried first without writing (stock, closed months), so a refusal leaves the sheet wholly unposted.
    for (const dryRun of [true, false]) {
      for (const [i, l] of lines.entries()) {
        if (l.counted === null || l.counted === l.expected) continue;
        const diff = l.counted - l.expected;
        const place = await balanceFor(ctx, l.item_id, count.warehouse_id);
        const value = diff > 0 ? ((await surplusValue(ctx.db, place._id, diff)) ?? 0) : 0;
        const source = { kind: 'inventory_count', id: count._id, line: i };
        const id = movementIdFor(ctx.workspace, 'count', l.item_id, count.warehouse_id, source);
        await writeMovement(ctx.db, ctx.graph, place, { type: 'count', date: count.date, qty: diff, value, source, reason: `Conteo ${count._id}: contado ${l.counted / 1e6}, esperado ${l.expected / 1e6}`, id }, { now: ctx.now, dryRun });
        if (!dryRun) lines[i] = { ...l, movement_id: id };
      }
    }
    await model.updateOne({ _id: count._id, status: 'open' }, { $set: { status: 'posted', lines, posted_at: ctx.now } });
    return { count: countView({ ...count, lines, status: 'posted', posted_at: ctx.now }) };
  },
});
