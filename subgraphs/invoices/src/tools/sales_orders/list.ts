import { defineTool, escapeRegex } from '@cuadra/shared';
import { salesDocuments, salesDocumentView } from '../../models/sales-document.ts';

interface Input { status?: string; customer_id?: string; search?: string; limit?: number; offset?: number }

/** Lists sales orders, newest first. */
export const list = defineTool<Input>({
  name: 'sales_orders.list',
  description: 'List sales orders, newest first; filter by status, customer or a case-insensitive search over the customer name and notes.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      status: { enum: ['open', 'invoiced'] },
      customer_id: { type: 'string', minLength: 1, maxLength: 64 },
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace, kind: 'sales_order' };
    if (input.status) filter.status = input.status;
    if (input.customer_id) filter.customer_id = input.customer_id;
    if (input.search) filter.search_lc = { $regex: escapeRegex(input.search.toLowerCase()) };
    const model = salesDocuments(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(input.limit ?? 20).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(salesDocumentView), total };
  },
});
