import { CURSOR_SCHEMA, defineTool, listNewestFirst, pageOutput } from '@cuadra/shared';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView, type InvoiceDoc } from '../model.ts';

interface Input { status?: InvoiceDoc['status']; kind?: InvoiceDoc['kind']; customer_id?: string; search?: string; limit?: number; cursor?: string }

/** Lists invoices, newest first. */
export const list = defineTool<Input>({
  name: 'invoices.list',
  description: 'List invoices and credit notes, newest first; filter by status, kind, customer or a case-insensitive search over number, customer name and notes.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
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
      cursor: CURSOR_SCHEMA,
    },
  },
  output: pageOutput(INVOICE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const text = input.search?.toLowerCase();
    const match = input.status || input.kind || input.customer_id || text
      ? (i: InvoiceDoc) => (!input.status || i.status === input.status) && (!input.kind || i.kind === input.kind)
        && (!input.customer_id || i.customer_id === input.customer_id) && (!text || i.search_lc.includes(text))
      : undefined;
    return listNewestFirst<InvoiceDoc, ReturnType<typeof invoiceView>>(invoices(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, invoiceView);
  },
});
