import { defineTool } from '@cuadra/shared';
import { payments, paymentView } from '../../models/payment.ts';

interface Input { customer_id?: string; limit?: number; offset?: number }

/** Lists payments received, newest first. */
export const list = defineTool<Input>({
  name: 'payments.list',
  description: 'List payments received, newest first; filter by customer.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      customer_id: { type: 'string', minLength: 1, maxLength: 64 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.customer_id) filter.customer_id = input.customer_id;
    const model = payments(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(input.limit ?? 20).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(paymentView), total };
  },
});
