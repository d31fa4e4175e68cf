import { CuadraError, defineTool, ID_INPUT, nullable } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../books/journal.ts';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView } from '../model.ts';

/** Reads one invoice of the caller's workspace, with its journal entry. */
export const get = defineTool({
  name: 'invoices.get',
  description: 'Get one invoice or credit note by id: lines, taxes, withholdings, totals, balance, status, CUFE/CUDE, authority state and its journal entry.',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['invoice', 'journal_entry'],
    properties: { invoice: INVOICE_VIEW_SCHEMA, journal_entry: nullable(JOURNAL_VIEW_SCHEMA) },
  },
  async handler(input, ctx) {
    const invoice = await invoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!invoice) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    const entry = invoice.journal_entry_id ? await journalEntries(ctx.db).findOne({ _id: invoice.journal_entry_id, workspace: ctx.workspace }).lean() : null;
    return { invoice: invoiceView(invoice), journal_entry: entry ? journalView(entry) : null };
  },
});
