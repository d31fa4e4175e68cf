import { CuadraError, defineTool } from '@cuadra/shared';
import { invoices, invoiceView } from '../../models/invoice.ts';

/** Reads one invoice of the caller's workspace. */
export const get = defineTool<{ id: string }>({
  name: 'invoices.get',
  description: 'Get one invoice or credit note by id, with its lines, taxes, totals and status.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  async handler(input, ctx) {
    const invoice = await invoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!invoice) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    return { invoice: invoiceView(invoice) };
  },
});
