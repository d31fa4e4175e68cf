import { CuadraError, createPositioned, defineTool, newId, recordOutput } from '@cuadra/shared';
import { stockBalances } from '../../stock/model.ts';
import { movementDate } from '../../stock/place.ts';
import { warehouses } from '../../warehouses/model.ts';
import { inventoryCounts, type CountDoc } from '../model.ts';
import { COUNT_VIEW_SCHEMA, countView } from '../view.ts';

/** Most items one sheet holds (a warehouse with more is counted in parts, by search). */
const MAX_LINES = 1_000;

/** A count sheet of a warehouse. */
export const create = defineTool({
  name: 'inventory_counts.create',
  description: 'Make a count sheet of a warehouse for a day (default today): one line per product kept there, with what the books expect on hand. Export it (inventory_counts.export), fill in the Contado column, import it, then post the differences (inventory_counts.post).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['warehouse_id'],
    properties: { warehouse_id: { type: 'string', minLength: 1, maxLength: 64 }, date: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } },
  },
  output: recordOutput('count', COUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const date = movementDate(ctx, input.date);
    const wh = await warehouses(ctx.db).findOne({ _id: input.warehouse_id, workspace: ctx.workspace }).lean();
    if (!wh) throw new CuadraError('invalid_input', `No warehouse ${input.warehouse_id} in the workspace.`, { field: '/warehouse_id' });
    const held = await stockBalances(ctx.db).find({ workspace: ctx.workspace, warehouse_id: wh._id }, { item_id: 1, item_name: 1, item_sku: 1, unit: 1, qty: 1, last_date: 1 }).limit(MAX_LINES + 1).lean();
    if (held.length > MAX_LINES) throw new CuadraError('conflict', `The warehouse holds more than ${MAX_LINES} products: count it in parts.`);
    const late = held.find((b) => b.last_date && b.last_date > date);
    if (late) throw new CuadraError('invalid_input', `${late.item_name} moved on ${late.last_date}, after ${date}: a count sheet is made on or after the latest movement.`, { field: '/date' });
    const doc: CountDoc = {
      _id: newId('cnt'), workspace: ctx.workspace, warehouse_id: wh._id, warehouse_code: wh.code, date, status: 'open', created_at: ctx.now, posted_at: null,
      lines: held.sort((a, b) => a.item_name.localeCompare(b.item_name)).map((b) => ({ item_id: b.item_id, item: b.item_name, sku: b.item_sku, unit: b.unit, expected: b.qty, counted: null, movement_id: null })),
    };
    await createPositioned(inventoryCounts(ctx.db), doc);
    return { count: countView(doc) };
  },
});
