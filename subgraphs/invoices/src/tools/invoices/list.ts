import { defineTool, escapeRegex } from '@cuadra/shared';
import { invoices, invoiceView, type InvoiceDoc } from '../../models/invoice.ts';

interface Input { status?: InvoiceDoc['status']; kind?: InvoiceDoc['kind']; customer_id?: string; search?: string; limit?: number; offset?: number }

/** Lists invoices, newest first. */
export const list = defineTool<Input>({
  name: 'invoices.list',
  description: 'List invoices and credit notes, newest first; filter by status, kind, customer or a case-insensitive search over number, customer name and notes.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { enum: ['draft', 'posted', 'partially_paid', 'paid', 'cancelled'] },
      kind: { enum: ['invoice', 'credit_note'] },
      customer_id: { type: 'string', minLength: 1, maxLength: 64 },
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.status) filter.status = input.status;
    if (input.kind) filter.kind = input.kind;
    if (input.customer_id) filter.customer_id = input.customer_id;
    if (input.search) filter.search_lc = { $regex: escapeRegex(input.search.toLowerCase()) };
    const model = invoices(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(input.limit ?? 20).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(invoiceView), total };
  },
});
