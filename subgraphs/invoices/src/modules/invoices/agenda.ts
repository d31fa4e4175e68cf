import { readByKeys, type AgendaEntry, type LaneReader } from '@cuadra/shared';
import { addDays, localDate } from '../../lib/money.ts';
import { invoiceIsOpen, invoicesDue } from './due.ts';
import { invoices, type InvoiceDoc } from './model.ts';
import { recurringInvoices } from './recurring.ts';

/** What the lane reads of an invoice. */
type LaneInvoice = Pick<InvoiceDoc, '_id' | 'workspace' | 'number' | 'customer_id' | 'customer' | 'due_date' | 'balance' | 'currency' | 'status' | 'kind'>;

const LANE_FIELDS = { workspace: 1, number: 1, customer_id: 1, customer: 1, due_date: 1, balance: 1, currency: 1, status: 1, kind: 1 } as const;

/**
 * The `receivables` agenda lane (specification §2.6): open invoices falling due in the window,
 * and (with `overdue`) those that fell due up to 90 days before it and are still open. Read
 * through the due-date index by `_id` (due.ts, books/due-index.ts), never by a range query over the
 * invoices (which the store answers by scanning them all): one read of the window's days, then the
 * invoices by `_id`, 200 at a time — set by the window and the page, not by how many invoices there are.
 */
export const receivablesLane: LaneReader = async (w, ctx) => {
  const start = w.overdue ? addDays(w.from, -90) : w.from;
  const open = await invoicesDue.read<LaneInvoice>(ctx.db, ctx.workspace, start, w.to, w.limit,
    // Only `_id` in the filter (the store's `_id` index answers only then); the workspace is checked on what is read.
    // With the other reads of this turn: a dashboard's agenda and event blocks share the command.
    (ids) => readByKeys<LaneInvoice>(ctx.db, invoices(ctx.db).collection.collectionName, '_id', ids, LANE_FIELDS),
    (i) => i.workspace === ctx.workspace && invoiceIsOpen(i));
  const today = localDate(ctx.now);
  return open.map((i): AgendaEntry => ({
    date: i.due_date, kind: 'deadline', source: 'receivables', title: `${i.number} — ${i.customer.name}`,
    status: i.due_date < today ? 'overdue' : 'open', ref: { invoice_id: i._id, number: i.number, customer_id: i.customer_id }, amount: i.balance, currency: i.currency,
  }));
};

/** The `recurring` agenda lane for invoices: the next issue date of each active schedule falling in the window. */
export const recurringLane: LaneReader = async (w, ctx) => {
  const rows = await recurringInvoices(ctx.db).find({ workspace: ctx.workspace, status: 'active', next_date: { $gte: w.from, $lte: w.to } })
    .sort({ next_date: 1, _id: 1 }).limit(w.limit).lean();
  return rows.map((r): AgendaEntry => ({
    date: r.next_date, kind: 'reminder', source: 'recurring', title: `Factura recurrente — ${r.customer.name}`,
    status: 'open', ref: { recurring_id: r._id, customer_id: r.customer_id }, currency: r.currency,
  }));
};
