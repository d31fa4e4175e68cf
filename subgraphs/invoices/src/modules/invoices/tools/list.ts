import { defineListTool, ID_SCHEMA, localDate, searchTerm } from '@cuadra/shared';
import { INVOICE_STATUSES, INVOICE_VIEW_SCHEMA, invoiceMatches, invoices, invoiceView } from '../model.ts';

/** Lists invoices, newest first. */
export const list = defineListTool({
  name: 'invoices.list',
  description: 'List invoices and credit notes, newest first; filter by status, kind, customer, overdue (true: posted invoices and debit notes with a balance left whose due date is before today in the workspace) or a case-insensitive search over number, customer name and notes.',
  model: invoices,
  view: invoiceView,
  viewSchema: INVOICE_VIEW_SCHEMA,
  filters: {
    status: { enum: INVOICE_STATUSES },
    kind: { enum: ['invoice', 'credit_note', 'debit_note'] },
    customer_id: ID_SCHEMA,
    search: { type: 'string', minLength: 1, maxLength: 100 },
    overdue: { type: 'boolean' },
  },
  // Candidates from the trigrams kept at write time (search_lc), never a walk of the workspace.
  searchTerm: ({ search }) => searchTerm(search),
  match: ({ status, kind, customer_id, search, overdue }) => {
    const text = searchTerm(search);
    if (!status && !kind && !customer_id && !text && overdue === undefined) return undefined;
    // Overdue as the receivables lane reads it: still owed, due before today (the workspace's calendar).
    const today = localDate(new Date());
    const isOverdue = (i: { kind: string; status: string; balance: number; due_date: string }) => i.kind !== 'credit_note' && (i.status === 'posted' || i.status === 'partially_paid') && i.balance > 0 && i.due_date < today;
    return (i) => (!status || i.status === status) && (!kind || i.kind === kind) && (!customer_id || i.customer_id === customer_id) && (!text || invoiceMatches(i, text))
      && (overdue === undefined || isOverdue(i) === overdue);
  },
});
