import { CuadraError, createPositioned, defineTool, newId, recordOutput } from '@cuadra/shared';
import { WAREHOUSE_VIEW_SCHEMA, warehouses, warehouseView, type WarehouseDoc } from '../model.ts';

/** Creates a warehouse. */
export const create = defineTool({
  name: 'warehouses.create',
  description: 'Create a warehouse (a place stock is kept) with a short code unique in the workspace, e.g. "BOG" or "MED-1".',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['code', 'name'],
    properties: {
      code: { type: 'string', minLength: 1, maxLength: 20, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' },
      name: { type: 'string', minLength: 1, maxLength: 200 },
      address: { type: 'string', minLength: 1, maxLength: 500 },
    },
  },
  output: recordOutput('warehouse', WAREHOUSE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const code = input.code.trim();
    const doc: WarehouseDoc = {
      _id: newId('wh'), workspace: ctx.workspace, code, code_key: `${ctx.workspace}|${code.toLowerCase()}`, name: input.name.trim(), name_lc: input.name.trim().toLowerCase(),
      address: input.address?.trim() ?? null, created_at: ctx.now,
    };
    try {
      await createPositioned(warehouses(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('invalid_input', `A warehouse with the code ${code} already exists.`, { field: '/code' });
      throw err;
    }
    return { warehouse: warehouseView(doc) };
  },
});
