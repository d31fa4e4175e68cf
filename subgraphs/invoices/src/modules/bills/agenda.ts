import { addDays, localDate, type LaneReader } from '@cuadra/shared';
import { billIsOpen, billsDue } from './due.ts';
import { bills, type BillDoc } from './model.ts';

/**
 * The `payables` agenda lane (specification §2.6): open bills falling due in the window and,
 * with `overdue`, those that fell due up to 90 days before it and are still open.
 * The store builds no non-unique index (INFRA.md): a range query on (workspace, status,
 * due_date) scanned the bills collection — measured (bench/payables.ts, H2 backend, a loaded
 * 2-core machine) p50 0.1 s at 1,000 bills and 25 s at 100,000, past what a lane may take.
 * So the lane reads the due-date index of open bill ids (due.ts, books/due-index.ts) instead: the
 * window's day documents by `_id` `$in` (at most 400 + 90 days), then the bills by `_id` in
 * chunks of 200 in date order until the page is full, keeping only those still open and due on
 * that day. Ids are added before a bill becomes open (posted, re-opened by a reversed payment)
 * and pulled after it stops being open (paid, fully credited), so a crash in between leaves an
 * extra id that this filter drops, never a missing bill. Reads: one by `_id` for the days plus
 * ⌈ids read / 200⌉ by `_id` — set by the window and the page, not by the number of bills.
 * Bills open before the index existed are indexed once at start (backfillBillsDue).
 */
/** What the lane reads of a bill. */
type LaneBill = Pick<BillDoc, '_id' | 'workspace' | 'supplier_number' | 'vendor_id' | 'vendor' | 'due_date' | 'balance' | 'currency' | 'status' | 'kind'>;

export const payablesLane: LaneReader = async (w, ctx) => {
  const start = w.overdue ? addDays(w.from, -90) : w.from;
  const open = await billsDue.read<LaneBill>(ctx.db, ctx.workspace, start, w.to, w.limit,
    // Only `_id` in the filter: mongo-java-server answers by its `_id` index only when the query
    // names no other field (AbstractUniqueIndex.canHandle compares the key sets); the workspace
    // is checked on the documents read.
    async (ids) => bills(ctx.db).find(
      { _id: { $in: ids } },
      { workspace: 1, supplier_number: 1, vendor_id: 1, vendor: 1, due_date: 1, balance: 1, currency: 1, status: 1, kind: 1 },
    ).lean(),
    (b) => b.workspace === ctx.workspace && billIsOpen(b));
  const today = localDate(ctx.now);
  return open.map((b) => ({
    date: b.due_date, kind: 'deadline', source: 'payables', title: `${b.supplier_number} — ${b.vendor.name}`,
    status: b.due_date < today ? 'overdue' : 'open', ref: { bill_id: b._id, supplier_number: b.supplier_number, vendor_id: b.vendor_id },
    amount: b.balance, currency: b.currency,
  }));
};
