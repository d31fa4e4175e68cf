import { CuadraError, defineTool, ID_INPUT, nullable } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../books/journal.ts';
import { PAYMENT_VIEW_SCHEMA, payments, paymentView } from '../model.ts';

/** Reads one payment with its journal entry. */
export const get = defineTool({
  name: 'payments.get',
  description: 'Get one payment received: amount, date, the invoices it settled and how much of each, the customer credit kept, and its journal entry.',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['payment', 'journal_entry'],
    properties: { payment: PAYMENT_VIEW_SCHEMA, journal_entry: nullable(JOURNAL_VIEW_SCHEMA) },
  },
  async handler(input, ctx) {
    const p = await payments(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!p) throw new CuadraError('not_found', `No payment ${input.id} exists in this workspace.`);
    const entry = p.journal_entry_id ? await journalEntries(ctx.db).findOne({ _id: p.journal_entry_id, workspace: ctx.workspace }).lean() : null;
    return { payment: paymentView(p), journal_entry: entry ? journalView(entry) : null };
  },
});
