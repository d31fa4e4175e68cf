import { COUNTRY_TIME_ZONE, dateInZone, type MaintenanceHook } from '@cuadra/shared';
import { invoiceIsOpen, invoicesDue } from './due.ts';
import { invoices } from './model.ts';

/** Watched due days read per sweep pass (the rest wait for the next pass). */
const DAYS_PER_PASS = 200;

/**
 * An id is added to its day before its invoice opens (due.ts): an invoice changed this recently
 * and not open yet may be opening right now, so its day stays watched a little longer.
 */
const OPENING_PATIENCE_MS = 60_000;

/**
 * The latest date that has ended in every time zone the product serves (locale.ts): the sweep
 * does not know each workspace's zone (it learns the country only from a caller's assertion), so
 * a due date counts as passed once its day is over everywhere — never early for any workspace,
 * late by at most the zone difference (an hour for Colombia against Mexico City).
 */
export function dayEndedEverywhere(now: Date): string {
  let earliest = dateInZone(now, 'UTC');
  for (const zone of new Set(Object.values(COUNTRY_TIME_ZONE))) {
    const d = dateInZone(now, zone);
    if (d < earliest) earliest = d;
  }
  return earliest;
}

/**
 * Notes invoices whose due date has passed with a balance open: for each, the domain event
 * `invoice.overdue` on its workspace's ledger (shared/src/events.ts), which agents' event triggers
 * and webhooks follow. Exactly once per invoice and due date: the entry's id is derived from both,
 * so two sweeps at once, or a sweep after a crash between recording and noting, find it stored;
 * a due date moved (an open invoice re-indexed under a new day) is a new occurrence when that day
 * passes too. Reads only the due index's watched days (books/due-index.ts).
 * @returns how many events it recorded or confirmed
 */
export const noteOverdueInvoices: MaintenanceHook = async (ctx) => {
  const today = dayEndedEverywhere(ctx.now);
  let noted = 0;
  for (const day of await invoicesDue.watchedBefore(ctx.db, today, DAYS_PER_PASS)) {
    const done = new Set(day.noted ?? []);
    const pending = day.ids.filter((id) => !done.has(id));
    const docs = pending.length ? await invoices(ctx.db).find({ _id: { $in: pending }, workspace: day.workspace }).lean() : [];
    let opening = false;
    for (const inv of docs) {
      // An id left by a crash, a paid invoice, one moved to another day: nothing to note here.
      if (inv.due_date !== day.date || !invoiceIsOpen(inv) || inv.balance <= 0) {
        if (!invoiceIsOpen(inv) && ctx.now.getTime() - new Date(inv.updated_at).getTime() < OPENING_PATIENCE_MS) opening = true;
        continue;
      }
      await ctx.events.record({
        workspace: day.workspace, type: 'invoice.overdue', subject: inv._id, key: inv.due_date,
        data: { invoice_id: inv._id, number: inv.number ?? null, customer_id: inv.customer_id ?? null, due_date: inv.due_date, balance: inv.balance, currency: inv.currency },
      });
      await invoicesDue.noted(ctx.db, day.workspace, day.date, inv._id);
      noted++;
    }
    if (!opening) await invoicesDue.unwatch(ctx.db, day);
  }
  return noted;
};
