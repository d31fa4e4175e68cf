import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { ITEM_VIEW_SCHEMA, items, itemView, type ItemDoc } from '../model.ts';
import { taxRegimeOf, VAT_RATE_INPUT, vatRateFor } from '../../../lib/tax-regime.ts';
import { WITHHOLDING_CONCEPT_SCHEMA } from '../../../accounting/withholdings.ts';


/** Adds a product or service to the catalog. */
export const create = defineTool({
  name: 'items.create',
  description: 'Create a catalog item (product or service) with its unit price in cents, currency, VAT rate in parts per million (Colombia: 190000, 50000 or 0; elsewhere the country\'s rate), unit, and the concept of retención en la fuente its buyers withhold (default servicios for a service, compras for a product).',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'kind', 'price'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      kind: { enum: ['product', 'service'] },
      sku: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,40}$' },
      unit: { type: 'string', pattern: '^[A-Z0-9]{2,3}$', description: 'UN/ECE Rec. 20 code: 94 unit, HUR hour, KGM kilogram…' },
      price: {
        type: 'object',
        additionalProperties: false,
        required: ['amount', 'currency'],
        properties: { amount: { type: 'integer', minimum: 0, maximum: 1e15 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } },
      },
      tax_rate_ppm: VAT_RATE_INPUT,
      withholding_concept: { ...WITHHOLDING_CONCEPT_SCHEMA, description: `${WITHHOLDING_CONCEPT_SCHEMA.description} Default: servicios for a service, compras for a product.` },
    },
  },
  output: recordOutput('item', ITEM_VIEW_SCHEMA),
  async handler(input, ctx) {
    const id = newId('itm');
    const doc: ItemDoc = {
      _id: id, workspace: ctx.workspace, kind: input.kind, name: input.name.trim(), name_lc: input.name.trim().toLowerCase(),
      sku: input.sku ?? null, sku_key: input.sku ? `${ctx.workspace}:${input.sku}` : `none:${id}`,
      unit: input.unit ?? (input.kind === 'service' ? 'HUR' : '94'), price: input.price.amount, currency: input.price.currency,
      tax_rate_ppm: input.tax_rate_ppm !== undefined ? vatRateFor(ctx.principal, input.tax_rate_ppm) : defaultRate(ctx.principal), withholding_concept: input.withholding_concept ?? null, status: 'active', created_at: ctx.now,
    };
    try {
      await createPositioned(items(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `An item with SKU ${input.sku} already exists in this workspace.`);
      throw err;
    }
    return { item: itemView(doc) };
  },
});

/** The VAT of an item that names none: Colombia's general 19 %; elsewhere there is no rate to assume, so 0 until one is given. */
function defaultRate(principal: Parameters<typeof taxRegimeOf>[0]): number {
  return taxRegimeOf(principal) === 'dian' ? 190000 : 0;
}
