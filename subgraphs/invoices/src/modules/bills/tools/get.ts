import { CuadraError, defineTool, ID_INPUT, nullable } from '@cuadra/shared';
import { JOURNAL_VIEW_SCHEMA, journalEntries, journalView } from '../../../books/journal.ts';
import { BILL_VIEW_SCHEMA, bills, billView } from '../model.ts';

/** Reads one bill of the caller's workspace, with its journal entry. */
export const get = defineTool({
  name: 'bills.get',
  description: 'Get one bill by id: vendor, lines, VAT, withholdings, totals, balance, payments applied, status and its journal entry.',
  risk: 'read',
  input: ID_INPUT,
  output: { type: 'object', additionalProperties: false, required: ['bill', 'journal_entry'], properties: { bill: BILL_VIEW_SCHEMA, journal_entry: nullable(JOURNAL_VIEW_SCHEMA) } },
  async handler(input, ctx) {
    const bill = await bills(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!bill) throw new CuadraError('not_found', `No bill ${input.id} exists in this workspace.`);
    const entry = bill.journal_entry_id ? await journalEntries(ctx.db).findOne({ _id: bill.journal_entry_id, workspace: ctx.workspace }).lean() : null;
    return { bill: billView(bill), journal_entry: entry ? journalView(entry) : null };
  },
});
