import { defineListTool, ID_SCHEMA, searchTerm } from '@cuadra/shared';
import { INVOICE_STATUSES, INVOICE_VIEW_SCHEMA, invoiceMatches, invoices, invoiceView } from '../model.ts';

/** Lists invoices, newest first. */
export const list = defineListTool({
  name: 'invoices.list',
  description: 'List invoices and credit notes, newest first; filter by status, kind, customer or a case-insensitive search over number, customer name and notes.',
  model: invoices,
  view: invoiceView,
  viewSchema: INVOICE_VIEW_SCHEMA,
  filters: {
    status: { enum: INVOICE_STATUSES },
    kind: { enum: ['invoice', 'credit_note', 'debit_note'] },
    customer_id: ID_SCHEMA,
    search: { type: 'string', minLength: 1, maxLength: 100 },
  },
  match: ({ status, kind, customer_id, search }) => {
    const text = searchTerm(search);
    if (!status && !kind && !customer_id && !text) return undefined;
    return (i) => (!status || i.status === status) && (!kind || i.kind === kind) && (!customer_id || i.customer_id === customer_id) && (!text || invoiceMatches(i, text));
  },
});
