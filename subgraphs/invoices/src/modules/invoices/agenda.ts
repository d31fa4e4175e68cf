import type { AgendaEntry, LaneReader } from '@cuadra/shared';
import { addDays, localDate } from '../../lib/money.ts';
import { invoices } from './model.ts';
import { recurringInvoices } from './recurring.ts';

/**
 * The `receivables` agenda lane (specification §2.6): open invoices falling due in the window,
 * and (with `overdue`) those that fell due up to 90 days before it and are still open.
 */
export const receivablesLane: LaneReader = async (w, ctx) => {
  const start = w.overdue ? addDays(w.from, -90) : w.from;
  const open = await invoices(ctx.db).find(
    { workspace: ctx.workspace, kind: { $in: ['invoice', 'debit_note'] }, status: { $in: ['posted', 'partially_paid'] }, due_date: { $gte: start, $lte: w.to } },
    { number: 1, customer_id: 1, customer: 1, due_date: 1, balance: 1, currency: 1 },
  ).sort({ due_date: 1, _id: 1 }).limit(w.limit).lean();
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
