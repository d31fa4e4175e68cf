import { CuadraError, defineTool } from '@cuadra/shared';
import { journalEntries, journalView } from '../../accounting/journal.ts';
import { payments, paymentView } from '../../models/payment.ts';

/** Reads one payment with its journal entry. */
export const get = defineTool<{ id: string }>({
  name: 'payments.get',
  description: 'Get one payment received: amount, date, the invoices it settled and how much of each, the customer credit kept, and its journal entry.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  async handler(input, ctx) {
    const p = await payments(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!p) throw new CuadraError('not_found', `No payment ${input.id} exists in this workspace.`);
    const entry = p.journal_entry_id ? await journalEntries(ctx.db).findOne({ _id: p.journal_entry_id, workspace: ctx.workspace }).lean() : null;
    return { payment: paymentView(p), journal_entry: entry ? journalView(entry) : null };
  },
});
