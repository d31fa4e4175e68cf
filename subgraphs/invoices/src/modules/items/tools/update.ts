import { CuadraError, defineTool, recordOutput, ID_SCHEMA } from '@cuadra/shared';
import { ITEM_VIEW_SCHEMA, items, itemView, type ItemDoc } from '../model.ts';
import { VAT_RATE_INPUT, vatRateFor } from '../../../lib/tax-regime.ts';
import { WITHHOLDING_CONCEPT_SCHEMA } from '../../../accounting/withholdings.ts';


/** Changes a catalog item. Documents already made keep the prices they were made with. */
export const update = defineTool({
  name: 'items.update',
  description: 'Change a catalog item: name, SKU, unit, price (cents + currency), VAT rate or withholding concept. Invoices and quotes already made keep their own prices. Archived items cannot be changed.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: {
      id: ID_SCHEMA,
      name: { type: 'string', minLength: 1, maxLength: 200 },
      sku: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,40}$' },
      unit: { type: 'string', pattern: '^[A-Z0-9]{2,3}$' },
      price: {
        type: 'object', additionalProperties: false, required: ['amount', 'currency'],
        properties: { amount: { type: 'integer', minimum: 0, maximum: 1e15 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
      },
      tax_rate_ppm: VAT_RATE_INPUT,
      withholding_concept: { ...WITHHOLDING_CONCEPT_SCHEMA, description: `${WITHHOLDING_CONCEPT_SCHEMA.description} Default: servicios for a service, compras for a product.` },
    },
  },
  output: recordOutput('item', ITEM_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set: Partial<ItemDoc> = {};
    if (input.name) Object.assign(set, { name: input.name.trim(), name_lc: input.name.trim().toLowerCase() });
    if (input.sku) Object.assign(set, { sku: input.sku, sku_key: `${ctx.workspace}:${input.sku}` });
    if (input.unit) set.unit = input.unit;
    if (input.price) Object.assign(set, { price: input.price.amount, currency: input.price.currency });
    if (input.tax_rate_ppm !== undefined) set.tax_rate_ppm = vatRateFor(ctx.principal, input.tax_rate_ppm);
    if (input.withholding_concept) set.withholding_concept = input.withholding_concept;
    let after;
    try {
      after = await items(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace, status: 'active' }, { $set: set }, { returnDocument: 'after' }).lean();
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `An item with SKU ${input.sku} already exists in this workspace.`);
      throw err;
    }
    if (!after) {
      const exists = await items(ctx.db).exists({ _id: input.id, workspace: ctx.workspace });
      if (!exists) throw new CuadraError('not_found', `No item ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Item ${input.id} is archived; archived items are not changed.`);
    }
    return { item: itemView(after) };
  },
});
