import { defineModule, searchTextsOf } from '@cuadra/shared';
import { invoicesMaintenance } from './maintenance.ts';
import { bookingInvoicing } from './bookings.ts';
import { customerCredits } from '../../lib/customer-credit.ts';
import { recentIndex } from '../../lib/recent.ts';
import { pendingChanges, rollups } from '../../books/rollup-store.ts';
import { receivablesLane, recurringLane } from './agenda.ts';
import { receivablesMetrics } from './metrics.ts';
import { invoices } from './model.ts';
import { recurringInvoices } from './recurring.ts';
import { invoicesSource } from './sources.ts';
import { stockDocuments, stockDocumentsSinceSource } from '../../open-items/stock.ts';
import { attachedDocument } from './tools/attached_document.ts';
import { create } from './tools/create.ts';
import { creditNote } from './tools/credit_note.ts';
import { debitNote } from './tools/debit_note.ts';
import { deliver } from './tools/deliver.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { pdf } from './tools/pdf.ts';
import { post } from './tools/post.ts';
import { recurringCancel } from './tools/recurring_cancel.ts';
import { recurringCreate } from './tools/recurring_create.ts';
import { recurringList } from './tools/recurring_list.ts';
import { recurringRun } from './tools/recurring_run.ts';
import { render } from './tools/render.ts';
import { send } from './tools/send.ts';
import { update } from './tools/update.ts';

/** Sales invoices, credit and debit notes, recurring schedules, and the receivables read from them. */
export const invoicesModule = defineModule({
  name: 'invoices',
  maintenance: invoicesMaintenance,
  journalSources: ['invoice', 'credit_note', 'debit_note'],
  tools: [create, update, post, creditNote, debitNote, send, deliver, get, list, render, pdf, attachedDocument, recurringCreate, recurringRun, recurringList, recurringCancel],
  models: [invoices, stockDocuments, rollups, pendingChanges, recentIndex, customerCredits, recurringInvoices],
  listed: [{ model: invoices, searchable: searchTextsOf }, { model: recurringInvoices }],
  reads: {
    sources: { invoices: invoicesSource },
    // Read by inventory through the graph only (open-items/stock.ts); not a §2.5 source.
    feeds: { stock_documents_since: stockDocumentsSinceSource },
    metrics: receivablesMetrics,
    agenda: { receivables: receivablesLane, recurring: recurringLane },
  },
  readGuards: { 'Query.invoice': 'invoices', 'Query.invoices': 'invoices', 'Query.bookingInvoice': 'invoices', Invoice: 'invoices' },
  // Confirmed priced bookings are invoiced (bookings.ts).
  background: [bookingInvoicing.job],
});
