import { DATE_SCHEMA, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { DEAL_VIEW_SCHEMA, dealView } from '../model.ts';
import { insertDeal } from '../ops.ts';

/** JSON Schema of a deal line (what a quote made from the deal carries). */
export const DEAL_LINE = {
  type: 'object', additionalProperties: false, required: ['description', 'quantity', 'unit_price'],
  properties: {
    description: { type: 'string', minLength: 1, maxLength: 500 },
    quantity: { type: 'number', minimum: 0.000001, maximum: 1e9 },
    unit_price: { type: 'integer', minimum: 0, maximum: 1e15, description: 'Minor units (cents).' },
    discount_bps: { type: 'integer', minimum: 0, maximum: 10000 },
    tax_rate_ppm: { enum: [0, 50000, 190000], description: 'VAT in parts per million the quote will apply (19 % = 190000).' },
    item_id: { type: 'string', pattern: '^itm_[A-Za-z0-9_-]{1,40}$' },
  },
} as const;

/** JSON Schema of where a card goes in its column. */
export const PLACE = {
  type: 'object', additionalProperties: false, maxProperties: 1,
  properties: { before: ID_SCHEMA, after: ID_SCHEMA },
  description: 'Right before or after another deal of the column; neither: on top.',
} as const;

/** The fields of a deal (create and update). */
export const DEAL_FIELDS = {
  title: { type: 'string', minLength: 1, maxLength: 200 },
  party_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
  amount: { type: 'integer', minimum: 0, maximum: 1e15, description: 'Value before taxes in minor units; with lines it is their sum.' },
  owner_id: { type: 'string', minLength: 1, maxLength: 64, description: 'The member responsible.' },
  expected_close: DATE_SCHEMA,
  lines: { type: 'array', maxItems: 200, items: DEAL_LINE },
  custom: { type: 'object', description: 'Values of the workspace\'s custom deal fields (crm_fields), by key; checked against their JSON Schema.' },
  tags: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9_:-]{1,40}$' } },
} as const;

/** Opens a deal in a pipeline's open stage (default: the default pipeline's first stage), on top of its column. */
export const create = defineTool({
  name: 'deals.create',
  description: 'Open a deal: title, party, amount (or lines), owner, expected close, custom field values and tags, in a pipeline (key or id; default the default pipeline) at its first open stage or a given open stage, on top of the column or before/after another deal.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['title'],
    properties: {
      ...DEAL_FIELDS,
      currency: { type: 'string', pattern: '^[A-Z]{3}$', description: 'The pipeline\'s currency (default).' },
      pipeline: { type: 'string', minLength: 1, maxLength: 64 },
      stage_id: ID_SCHEMA,
      place: PLACE,
    },
  },
  output: recordOutput('deal', DEAL_VIEW_SCHEMA),
  amount: (input) => input.amount ?? null,
  async handler(input, ctx) {
    return { deal: dealView(await insertDeal(ctx, input)) };
  },
});
