import { CuadraError, dateInZone, workspaceLocale, type ToolContext } from '@cuadra/shared';
import { findAccount } from '../../accounting/chart.ts';
import { journalEntries, postEntry, type JournalLine } from '../../books/index.ts';
import { taxRegimeOf } from '../../lib/tax-regime.ts';
import { issueInvoiceOnce } from '../invoices/issue.ts';
import { calendarId, rentalCalendars, rentals, watchHold, type RentalDoc, type RentalPeriod, type RentalUnit, type RentedResource } from './model.ts';

/** The journal source kinds this module posts (declared in its manifest). */
export const RENTAL_SOURCES = { deposit: 'rental_deposit', refund: 'rental_deposit_refund', settlement: 'rental_damages_settlement' } as const;

/** The liability a deposit is held in until it is refunded (PUC 2810 depósitos recibidos). */
export const DEPOSITS_ACCOUNT = { code: '2810', name: 'Depósitos recibidos' } as const;

/**
 * Where damages are booked, settled from the deposit or invoiced: PUC 4255 indemnizaciones (Decreto
 * 2650 de 1993, group 42 no operacionales) — compensation for a loss, not a sale of goods or
 * services, so no VAT arises on it: Estatuto Tributario art. 420 taxes the sale of goods, the
 * provision of services and imports, and paying for damage done is none of them.
 */
export const DAMAGES_INCOME_ACCOUNT = { code: '4255', name: 'Indemnizaciones' } as const;

/**
 * The invoice line of damages charged on a return, whichever way they are settled: at 0 % and
 * credited to 4255 (never the rental's VAT rate: compensation is not consideration for a supply —
 * ET art. 420 in Colombia; under EN 16931 category O, not subject to VAT, as the CJEU held of
 * compensation in C-277/05 Société thermale d'Eugénie-les-Bains).
 */
export function damagesLine(ctx: Pick<ToolContext, 'principal'>, description: string, amount: number) {
  const notSubject = taxRegimeOf(ctx.principal) === 'dian' ? {} : { tax_category: 'O' as const, tax_exemption_reason: 'Compensation for damage: not consideration for a supply' };
  return { description: `${description} (indemnización: no causa IVA)`, quantity: 1, unit_price: amount, tax_rate_ppm: 0, ...notSubject, account: DAMAGES_INCOME_ACCOUNT.code };
}

/**
 * How a return's damages meet the deposit when they are settled from it: the deposit covers
 * min(deposit, damages); what is left of the deposit is refunded, what is left of the damages invoiced.
 */
export function settleDamages(deposit: number, damages: number): { deposit_applied: number; refunded: number; invoiced: number } {
  const applied = Math.min(deposit, damages);
  return { deposit_applied: applied, refunded: deposit - applied, invoiced: damages - applied };
}

/** The entry settling damages from a rental's deposit: one per rental. */
export function settlementEntryId(rentalId: string): string {
  return `je_${rentalId}_damages`;
}

/** Posts the part of the damages the deposit covers (once: the entry's id): debit 2810, credit 4255. */
export async function postDamagesSettlement(ctx: ToolContext, r: RentalDoc, amount: number, entryId: string, date: string): Promise<void> {
  if (await journalEntries(ctx.db).exists({ _id: entryId, workspace: ctx.workspace })) return;
  await postEntry(ctx, { kind: RENTAL_SOURCES.settlement, id: r._id }, [
    { account: DEPOSITS_ACCOUNT.code, name: DEPOSITS_ACCOUNT.name, debit: amount, credit: 0, party_id: r.customer_id },
    { account: DAMAGES_INCOME_ACCOUNT.code, name: DAMAGES_INCOME_ACCOUNT.name, debit: 0, credit: amount, party_id: r.customer_id },
  ], { id: entryId, date, currency: r.currency, memo: `Daños cubiertos con el depósito — alquiler ${r._id}, ${r.customer.name}` });
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MAX_MONTHS = 120;

/** UN/ECE Recommendation 20 unit codes of a rental's invoice line. */
const UNIT_CODE: Record<RentalUnit, string> = { hour: 'HUR', day: 'DAY', month: 'MON' };

/** The same instant `n` calendar months later (UTC, day clipped to the month's end). */
function addMonths(iso: string, n: number): string {
  const d = new Date(iso);
  const day = d.getUTCDate();
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()));
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, last));
  return target.toISOString();
}

/**
 * A rental's billing periods. Hours and days: one period, the duration rounded up to whole units
 * (a 25-hour day rental is 2 days). Months: one period per calendar month from the start, and the
 * end must fall a whole number of months after it (else `invalid_input` at /end).
 */
export function rentalPeriods(unit: RentalUnit, start: string, end: string, rate: number): RentalPeriod[] {
  const ms = Date.parse(end) - Date.parse(start);
  if (unit !== 'month') {
    const units = Math.ceil(ms / (unit === 'hour' ? HOUR : DAY));
    const amount = units * rate;
    if (!Number.isSafeInteger(amount) || amount > 1e15) throw new CuadraError('invalid_input', 'The rental\'s amount exceeds the money limit.', { field: '/rate' });
    return [{ index: 0, from: start, to: end, units, amount, invoice_id: null }];
  }
  const periods: RentalPeriod[] = [];
  let from = start;
  while (from < end && periods.length < MAX_MONTHS) {
    const to = addMonths(start, periods.length + 1);
    if (to > end) throw new CuadraError('invalid_input', `A monthly rental ends a whole number of months after it starts (${to} would be the next end).`, { field: '/end' });
    periods.push({ index: periods.length, from, to, units: 1, amount: rate, invoice_id: null });
    from = to;
  }
  if (from < end) throw new CuadraError('invalid_input', `A rental is at most ${MAX_MONTHS} months.`, { field: '/end' });
  return periods;
}

/**
 * Holds a resource over [start, end) for a rental, or refuses with `conflict` naming the rental
 * that holds it. One conditional update on the resource's calendar (`rev`): of bookings racing for
 * the same resource, exactly one applies; the others read the calendar again and see its hold.
 */
export async function claimHold(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, resource: RentedResource, rentalId: string, start: string, end: string): Promise<void> {
  const model = rentalCalendars(ctx.db);
  const id = calendarId(ctx.workspace, resource);
  const hold = { rental_id: rentalId, start, end, at: ctx.now, confirmed: false };
  // Watched before it exists: a crash after this leaves an entry the sweep drops, never a hold it cannot find.
  await watchHold(ctx.db, id, rentalId);
  for (let attempt = 0; attempt < 25; attempt++) {
    const cal = await model.findById(id).lean();
    if (!cal) {
      try {
        await model.create({ _id: id, workspace: ctx.workspace, rev: 1, holds: [hold] });
        return;
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
        continue; // another booking created the calendar first: read it
      }
    }
    const clash = cal.holds.find((h) => h.start < end && start < h.end);
    if (clash) throw new CuadraError('conflict', `${resource.name} is rented from ${clash.start} to ${clash.end} (rental ${clash.rental_id}); it is not available from ${start} to ${end}.`);
    const applied = await model.updateOne({ _id: id, rev: cal.rev }, { $push: { holds: hold }, $inc: { rev: 1 } });
    if (applied.modifiedCount === 1) return;
  }
  throw new CuadraError('conflict', `${resource.name} is being booked by other calls right now; nothing was done. Try again.`);
}

/** Marks a rental's hold as backed by its written rental. */
export async function confirmHold(ctx: Pick<ToolContext, 'db' | 'workspace'>, resource: RentedResource, rentalId: string): Promise<void> {
  await rentalCalendars(ctx.db).updateOne({ _id: calendarId(ctx.workspace, resource), 'holds.rental_id': rentalId }, { $set: { 'holds.$.confirmed': true }, $inc: { rev: 1 } });
}

/** Frees the resource of a rental's hold (returned, cancelled, or never written). */
export async function releaseHold(db: ToolContext['db'], workspace: string, resource: Pick<RentedResource, 'kind' | 'id'>, rentalId: string): Promise<void> {
  await rentalCalendars(db).updateOne({ _id: calendarId(workspace, resource) }, { $pull: { holds: { rental_id: rentalId } }, $inc: { rev: 1 } });
}

/** The calendar date of an instant in the workspace's time zone. */
export function localDateOf(ctx: Pick<ToolContext, 'principal'>, iso: string): string {
  return dateInZone(new Date(iso), workspaceLocale(ctx.principal).timeZone);
}

/** The invoice of a rental's period: one per period. */
export function periodInvoiceId(rentalId: string, index: number): string {
  return `inv_${rentalId.slice(4)}_p${index}`;
}

/**
 * Issues a period's invoice (once: its id) and records it on the rental. Dated the period's first
 * day in the workspace's calendar: rentals are billed in advance, as leases are.
 */
export async function invoicePeriod(ctx: ToolContext, r: RentalDoc, p: RentalPeriod): Promise<string> {
  const id = periodInvoiceId(r._id, p.index);
  const date = localDateOf(ctx, p.from);
  await issueInvoiceOnce(ctx, {
    id, customer_id: r.customer_id, customer: r.customer, currency: r.currency, issue_date: date, due_date: date,
    lines: [{ description: `Alquiler ${r.resource.name}: ${localDateOf(ctx, p.from)} a ${localDateOf(ctx, p.to)}`, quantity: p.units, unit: UNIT_CODE[r.unit], unit_price: r.rate, tax_rate_ppm: r.tax_rate_ppm }],
    withholdings: [], notes: `Alquiler ${r._id}, periodo ${p.index + 1} de ${r.periods.length}`, source: { rental_id: r._id }, post: r.post,
  });
  await rentals(ctx.db).updateOne({ _id: r._id, [`periods.${p.index}.invoice_id`]: null }, { $set: { [`periods.${p.index}.invoice_id`]: id, updated_at: ctx.now }, $inc: { rev: 1 } });
  return id;
}

/**
 * Posts a deposit's receipt or its refund (once: the entry's id), between the deposit account and
 * 2810: the whole deposit, or `amount` (what is left of it once damages were settled from it).
 */
export async function postDeposit(ctx: ToolContext, r: RentalDoc, kind: 'deposit' | 'refund', entryId: string, date: string, amount = r.deposit): Promise<void> {
  if (await journalEntries(ctx.db).exists({ _id: entryId, workspace: ctx.workspace })) return;
  const cash = await findAccount(ctx.db, ctx.workspace, r.deposit_account);
  const held: JournalLine = { account: DEPOSITS_ACCOUNT.code, name: DEPOSITS_ACCOUNT.name, debit: 0, credit: 0, party_id: r.customer_id };
  const money: JournalLine = { account: r.deposit_account, name: cash?.name ?? r.deposit_account, debit: 0, credit: 0, party_id: null };
  if (kind === 'deposit') {
    money.debit = amount;
    held.credit = amount;
  } else {
    held.debit = amount;
    money.credit = amount;
  }
  await postEntry(ctx, { kind: RENTAL_SOURCES[kind], id: r._id }, [money, held], {
    id: entryId, date, currency: r.currency, memo: `${kind === 'deposit' ? 'Depósito recibido' : 'Devolución del depósito'} — alquiler ${r._id}, ${r.customer.name}`,
  });
}

/** The damages invoice of a return: one per rental. */
export function damagesInvoiceId(rentalId: string): string {
  return `inv_${rentalId.slice(4)}_dmg`;
}
