import { addDays, localDate, type LaneReader } from '@cuadra/shared';
import { bills } from './model.ts';

/**
 * The `payables` agenda lane (specification §2.6): open bills falling due in the window and,
 * with `overdue`, those that fell due up to 90 days before it and are still open.
 * Bound accepted: one range query on (workspace, status, due_date), sorted and limited. The store
 * here builds no non-unique index (INFRA.md), so it scans the bills collection; at the volumes
 * of one SME (thousands of bills) that is milliseconds. A due-date rollup of open bills is the
 * follow-up if a workspace outgrows it (the receivables lane makes the same choice).
 * Measured (bench/payables.ts, H2 backend, a loaded 2-core machine): p50 0.1 s at 1,000 bills,
 * 25 s at 100,000 — past what a lane may take. The follow-up: an index document of bill ids per
 * due date, added to before a bill is posted (or re-opened) and pulled from after it is paid, read
 * by `_id` for the window's days with the open bills filtered on read.
 */
export const payablesLane: LaneReader = async (w, ctx) => {
  const start = w.overdue ? addDays(w.from, -90) : w.from;
  const open = await bills(ctx.db).find(
    { workspace: ctx.workspace, status: { $in: ['posted', 'partially_paid'] }, kind: { $ne: 'credit_note' }, due_date: { $gte: start, $lte: w.to } },
    { supplier_number: 1, vendor_id: 1, vendor: 1, due_date: 1, balance: 1, currency: 1 },
  ).sort({ due_date: 1, _id: 1 }).limit(w.limit).lean();
  const today = localDate(ctx.now);
  return open.map((b) => ({
    date: b.due_date, kind: 'deadline', source: 'payables', title: `${b.supplier_number} — ${b.vendor.name}`,
    status: b.due_date < today ? 'overdue' : 'open', ref: { bill_id: b._id, supplier_number: b.supplier_number, vendor_id: b.vendor_id },
    amount: b.balance, currency: b.currency,
  }));
};
