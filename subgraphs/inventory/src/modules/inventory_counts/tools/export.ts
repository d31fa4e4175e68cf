import { CuadraError, defineTool } from '@cuadra/shared';
import { inventoryCounts, type CountDoc } from '../model.ts';
import { sheetOf } from '../sheet.ts';

/** A count sheet as a spreadsheet. */
export const exportSheet = defineTool({
  name: 'inventory_counts.export',
  description: 'Export a count sheet as an XLSX spreadsheet (base64): columns item_id, SKU, Producto, Unidad, Esperado, Contado — fill in Contado and import it back with inventory_counts.import.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  output: {
    type: 'object', additionalProperties: false, required: ['filename', 'content_type', 'size', 'base64'],
    properties: { filename: { type: 'string' }, content_type: { const: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }, size: { type: 'integer', minimum: 1 }, base64: { type: 'string' } },
  },
  async handler(input, ctx) {
    const count = await inventoryCounts(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean<CountDoc>();
    if (!count) throw new CuadraError('not_found', `No count sheet ${input.id}.`);
    const file = await sheetOf(count);
    return { filename: `conteo-${count.warehouse_code}-${count.date}.xlsx`, content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' as const, size: file.length, base64: file.toString('base64') };
  },
});
