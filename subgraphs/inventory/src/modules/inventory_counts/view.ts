import { fromMicro } from '../stock/valuation.ts';
import type { CountDoc } from './model.ts';

/** JSON Schema of {@link countView}. */
export const COUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'warehouse_id', 'warehouse', 'date', 'status', 'lines', 'created_at'],
  properties: {
    id: { type: 'string' }, warehouse_id: { type: 'string' }, warehouse: { type: 'string' }, date: { type: 'string' }, status: { enum: ['open', 'posted'] },
    lines: { type: 'array', items: { type: 'object' } }, created_at: { type: 'string' },
  },
} as const;

/** The public shape of a count sheet. */
export function countView(c: CountDoc) {
  return {
    id: c._id, warehouse_id: c.warehouse_id, warehouse: c.warehouse_code, date: c.date, status: c.status, created_at: c.created_at.toISOString(),
    lines: c.lines.map((l) => ({ item_id: l.item_id, item: l.item, sku: l.sku, unit: l.unit, expected: fromMicro(l.expected), counted: l.counted === null ? null : fromMicro(l.counted), difference: l.counted === null ? null : fromMicro(l.counted - l.expected), movement_id: l.movement_id })),
  };
}
