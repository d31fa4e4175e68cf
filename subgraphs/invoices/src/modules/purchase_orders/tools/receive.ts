import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, localDate, newId, QUANTITY_SCHEMA, quantityMicros, recordOutput } from '@cuadra/shared';
import { changePurchaseOrder, PURCHASE_ORDER_VIEW_SCHEMA, purchaseOrderView } from '../model.ts';

/**
 * Records goods or services received against a sent order, line by line. Quantities are added as
 * integer millionths (exact); receiving more than was ordered on a line is refused. The order
 * becomes received when every line is complete, partially_received before.
 */
export const receive = defineTool({
  name: 'purchase_orders.receive',
  description: 'Record what arrived of a sent purchase order: per line (its index from 0), the quantity received now (up to 6 decimals). Partial receipts add up; a line cannot receive more than was ordered. The order becomes partially_received or received.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'lines'],
    properties: {
      id: ID_SCHEMA, date: DATE_SCHEMA,
      lines: {
        type: 'array', minItems: 1, maxItems: 500,
        items: { type: 'object', additionalProperties: false, required: ['line', 'quantity'], properties: { line: { type: 'integer', minimum: 0, maximum: 499 }, quantity: QUANTITY_SCHEMA } },
      },
    },
  },
  output: recordOutput('purchase_order', PURCHASE_ORDER_VIEW_SCHEMA),
  async handler(input, ctx) {
    const seen = new Set<number>();
    const adds = input.lines.map((l, i) => {
      if (seen.has(l.line)) throw new CuadraError('invalid_input', `Line ${l.line} is named twice.`, { field: `/lines/${i}/line` });
      seen.add(l.line);
      return { line: l.line, micros: quantityMicros(l.quantity, `/lines/${i}/quantity`), quantity: l.quantity, at: i };
    });
    const date = input.date ?? localDate(ctx.now);
    const after = await changePurchaseOrder(ctx, input.id, ['sent', 'partially_received'], (doc) => {
      const received = doc.lines.map((l) => BigInt(l.received_micros));
      for (const a of adds) {
        const line = doc.lines[a.line];
        if (!line) throw new CuadraError('invalid_input', `The order has no line ${a.line} (it has ${doc.lines.length}).`, { field: `/lines/${a.at}/line` });
        const ordered = quantityMicros(line.quantity, `/lines/${a.at}/quantity`);
        const total = received[a.line] + a.micros;
        if (total > ordered) {
          throw new CuadraError('invalid_input', `Line ${a.line} (${line.description}) would receive ${Number(total) / 1e6} of ${line.quantity} ordered.`, { field: `/lines/${a.at}/quantity` });
        }
        received[a.line] = total;
      }
      const complete = doc.lines.every((l, i) => received[i] === quantityMicros(l.quantity, '/lines'));
      return {
        set: { status: complete ? 'received' : 'partially_received', lines: doc.lines.map((l, i) => ({ ...l, received_micros: Number(received[i]) })) },
        push: { receipts: { id: newId('rcp'), date, lines: adds.map((a) => ({ line: a.line, quantity: a.quantity })) } },
      };
    });
    return { purchase_order: purchaseOrderView(after) };
  },
});
