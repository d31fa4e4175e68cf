import { CuadraError, feedPullJob, systemPrincipal, type BookingChangeRow, type FeedReader, type Logger, type PeerGraph, type ToolContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { buyerFromCrm } from '../items/document-lines.ts';
import { documentToday } from '../../lib/document-dates.ts';
import { changeInvoice, statusDelta } from './ops.ts';
import { issueInvoiceOnce } from './issue.ts';
import { invoices, type InvoiceDoc } from './model.ts';

/**
 * A priced booking invoices when confirmed (issue 35; ARCHITECTURE.md, "Bookings reach CRM and
 * finance"). Finance pulls the projects subgraph's booking change feed (`booking_changes_since`,
 * the read-only service assertion; projects never writes here) and, for a booking of a priced type
 * that is confirmed, issues its invoice through the invoices' own path ({@link issueInvoiceOnce}:
 * the same line model, VAT and numbering as invoices.create/post) under an id derived from the
 * booking (`inv_<booking id>`), so a retry, two pulls at once or a pull restarted after a crash
 * make one invoice. The buyer is the party crm made of the booker (crm's `bookingActivity`): until
 * crm has read the booking the row waits in the mark and is tried again on the next pull.
 *
 * A draft or posted invoice, as the booking type says (`price.invoice`, default draft); a post the
 * workspace cannot make yet (no DIAN numbering range) leaves the draft for a person to post.
 * Cancelled before the invoice is posted: the draft is cancelled (it never had a number nor an
 * entry in the books). Cancelled after it was posted: nothing is issued automatically — a posted
 * invoice is a fiscal document whose reversal (a credit note, with its DIAN concept, or a refund)
 * is a person's decision; the booking's cancellation is in the CRM activity and the ledger.
 * A booking's rows are applied forward only: the highest rev applied is kept
 * (`booking_invoice_revs`), so an older state read later changes nothing.
 */

/** The invoice of a booking: the same id on every retry. */
export function bookingInvoiceId(bookingId: string): string {
  return `inv_${bookingId}`;
}

const REVS = 'booking_invoice_revs';

/** The context a background issue runs in: the invoices module acting for the workspace as the system (no person decides). */
function systemContext(db: Connection, workspace: string, row: BookingChangeRow, graph: PeerGraph, now: Date, log: Logger): ToolContext {
  const principal = { ...systemPrincipal(workspace, 'invoices', 'invoices'), ...(row.country ? { country: row.country } : {}) };
  // No governance: issuing and posting an invoice read none of it (no approval, no mail quota).
  return { principal, workspace, db, now, log, graph, governance: undefined as never };
}

/** What the booking's state asks of its invoice. Answers false when it must wait for crm. */
async function applyRow(db: Connection, workspace: string, row: BookingChangeRow, graph: PeerGraph, now: Date, log: Logger): Promise<boolean> {
  const revs = db.collection<{ _id: string; rev: number }>(REVS);
  const key = `${workspace}|${row.booking_id}`;
  if (((await revs.findOne({ _id: key }))?.rev ?? 0) >= row.rev) return true;
  const id = bookingInvoiceId(row.booking_id);
  const ctx = systemContext(db, workspace, row, graph, now, log);
  if (row.status === 'confirmed' && row.price) {
    if (!(await invoices(db).exists({ _id: id, workspace }))) {
      const data = await graph('crm', 'query($id: ID!) { bookingActivity(bookingId: $id) { partyId } }', { id: row.booking_id });
      const partyId = (data.bookingActivity as { partyId: string } | null)?.partyId;
      if (!partyId) return false;
      const customer = await buyerFromCrm(ctx, partyId, { archived: true });
      const local = new Intl.DateTimeFormat('es-CO', { timeZone: row.host_time_zone, dateStyle: 'medium', timeStyle: 'short' }).format(new Date(row.start));
      const today = documentToday(ctx);
      try {
        await issueInvoiceOnce(ctx, {
          id, customer_id: partyId, customer, currency: row.price.currency, issue_date: today, due_date: today,
          lines: [{ description: `${row.type_name} — ${local}`.slice(0, 500), quantity: 1, unit_price: row.price.amount, ...(row.price.tax_rate_ppm === null ? {} : { tax_rate_ppm: row.price.tax_rate_ppm }) }],
          withholdings: [], notes: `Reserva ${row.booking_id}`, source: { booking_id: row.booking_id }, post: row.price.invoice === 'posted',
        });
      } catch (err) {
        // The draft stands; what keeps it from being posted (no numbering range yet) is a person's to fix.
        if (!(err instanceof CuadraError) || !(await invoices(db).exists({ _id: id, workspace }))) throw err;
        log.warn({ err: err.message, invoice: id, workspace }, 'the invoice of a booking was left a draft');
      }
    }
  } else if (row.status === 'cancelled') {
    // Only a draft is withdrawn; a posted invoice stays as it is (see above).
    if (await invoices(db).exists({ _id: id, workspace, status: 'draft' })) {
      await changeInvoice(ctx, id, (doc: InvoiceDoc) => (doc.status === 'draft' ? { set: { status: 'cancelled' }, deltas: statusDelta(doc, 'draft', 'cancelled') } : null));
    }
  }
  await revs.updateOne({ _id: key }, { $max: { rev: row.rev } }, { upsert: true });
  return true;
}

/** The reader of the bookings' changes (shared feed-reader.ts); marks in `booking_invoice_marks`. */
export const BOOKING_INVOICES: FeedReader<BookingChangeRow> = {
  subgraph: 'projects',
  source: 'booking_changes_since',
  marks: 'booking_invoice_marks',
  async apply(db, workspace, rows, graph, now, log) {
    const waiting: string[] = [];
    // A booking waiting for crm holds back its later rows too: they are applied in order once it is there.
    const held = new Set<string>();
    for (const row of rows) {
      let done = false;
      if (!held.has(row.booking_id)) {
        try {
          done = await applyRow(db, workspace, row, graph, now, log!);
        } catch (err) {
          if (!(err instanceof CuadraError)) throw err; // the database: the mark stays, the next pass reads it again
          // crm not answering: wait. A refusal (the party is a vendor, the workspace's VAT needs a rate) would refuse
          // every retry too: it is logged and the feed goes on, rather than stopping every booking after it.
          if (err.code === 'unavailable') done = false;
          else {
            log?.warn({ err: err.message, code: err.code, booking: row.booking_id, workspace }, 'a booking could not be invoiced');
            done = true;
          }
        }
      }
      if (!done) {
        held.add(row.booking_id);
        waiting.push(row.id);
      }
    }
    return waiting;
  },
};

/** How often the pull runs (`INVOICES_BOOKING_PULL_INTERVAL_MS`, default 2 s). */
const EVERY_MS = Number(process.env.INVOICES_BOOKING_PULL_INTERVAL_MS) > 0 ? Number(process.env.INVOICES_BOOKING_PULL_INTERVAL_MS) : 2_000;

/** The background pull that invoices confirmed priced bookings (never in a read), and its hint: projects asked about a booking's invoice after a change. */
export const bookingInvoicing = feedPullJob(BOOKING_INVOICES, { name: 'booking invoices', service: 'invoices', everyMs: EVERY_MS });
