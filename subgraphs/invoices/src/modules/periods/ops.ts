import { CuadraError, operationsInFlight, type ToolContext } from '@cuadra/shared';
import { periodId, periods, type PeriodDoc } from '../../books/periods.ts';
import { journalEntries, postEntry, reverseEntry, type JournalLine } from '../../books/index.ts';
import { codesIn, ledgerBetween, settleLedger } from '../../books/general-ledger.ts';
import { pullPayrollEntries } from '../../accounting/payroll_pull.ts';
import { pullInventoryEntries } from '../../accounting/inventory_pull.ts';
import { PUC } from '../../accounting/puc.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { billPaymentOperation } from '../bills/payments.ts';
import { billPostOperation } from '../bills/ops.ts';
import { invoicePostOperation } from '../../lib/invoice-ops.ts';
import { paymentOperation } from '../payments/ops.ts';

/** Where the year's result goes at the year-end close (PUC 36, resultados del ejercicio). */
export const RESULT_ACCOUNTS = { profit: { code: '3605', name: PUC['3605'] }, loss: { code: '3610', name: PUC['3610'] } } as const;

/** The id of a year's n-th closing entry (reopening December reverses it; closing again writes the next). */
function closingEntryId(workspace: string, year: string, n: number): string {
  return `je_close_${workspace}_${year}_${n}`;
}

/**
 * The year-end closing entry: every income account (class 4) debited and every expense and cost
 * account (5, 6, 7) credited by its balance of the year, the difference to 3605 Utilidad del
 * ejercicio (credit, a profit) or 3610 Pérdida del ejercicio (debit, a loss). Transferring 3605
 * to 3705 Utilidades acumuladas is the shareholders' decision of the next year, a manual entry.
 */
export async function closingLines(ctx: Pick<ToolContext, 'db' | 'workspace'>, year: string, currency: string): Promise<JournalLine[]> {
  const [sums] = await ledgerBetween(ctx.db, ctx.workspace, currency, [{ from: `${year}-01-01`, to: `${year}-12-31` }]);
  const lines: JournalLine[] = [];
  let result = 0;
  for (const code of codesIn(sums).filter((c) => ['4', '5', '6', '7'].includes(c[0]))) {
    const balance = (sums[`d${code}`] ?? 0) - (sums[`c${code}`] ?? 0);
    if (balance === 0) continue;
    const name = PUC[code] ?? code;
    // Debit balance (expenses, or returns in class 4) is closed by a credit, and the reverse.
    lines.push(balance > 0 ? { account: code, name, debit: 0, credit: balance, party_id: null } : { account: code, name, debit: -balance, credit: 0, party_id: null });
    result -= balance;
  }
  if (result > 0) lines.push({ account: RESULT_ACCOUNTS.profit.code, name: RESULT_ACCOUNTS.profit.name, debit: 0, credit: result, party_id: null });
  if (result < 0) lines.push({ account: RESULT_ACCOUNTS.loss.code, name: RESULT_ACCOUNTS.loss.name, debit: -result, credit: 0, party_id: null });
  return lines;
}

/** Postings in flight that a close must not cut in two: payments being applied, invoices and bills being posted (their markers). */
function paymentsInFlight(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>): Promise<boolean> {
  return operationsInFlight(ctx, [paymentOperation, billPaymentOperation, invoicePostOperation, billPostOperation]);
}

/**
 * Closes a month: open → closing (the guard now refuses every posting but the close's own) →
 * for December, the year-end closing entry → closed. Each step can run again after a crash: a
 * close found `closing` resumes with the same closing entry id.
 */
export async function closePeriod(ctx: ToolContext, month: string): Promise<PeriodDoc> {
  // Payroll and inventory entries already final in the month are taken in before it closes (accounting/feed_pull.ts).
  await pullPayrollEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
  await pullInventoryEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
  const model = periods(ctx.db);
  const _id = periodId(ctx.workspace, month);
  let doc: PeriodDoc | null = null;
  try {
    doc = await model.findOneAndUpdate(
      { _id, workspace: ctx.workspace, status: 'open' },
      { $set: { status: 'closing', updated_at: ctx.now }, $inc: { closings: month.endsWith('-12') ? 1 : 0 }, $setOnInsert: { month, closing_entry_id: null, closed_at: null, closed_by: null, reopened_at: null } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  doc ??= await model.findOne({ _id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('conflict', `The period ${month} could not be closed; try again.`);
  if (doc.status === 'closed') throw new CuadraError('conflict', `The period ${month} is already closed.`);
  if (await paymentsInFlight(ctx)) {
    await model.updateOne({ _id, status: 'closing' }, { $set: { status: 'open', updated_at: ctx.now } });
    throw new CuadraError('conflict', `A payment is being registered right now; close ${month} again in a moment.`);
  }
  await settleLedger(ctx.db, ctx.workspace, ctx.now);
  let closingEntry: string | null = null;
  if (month.endsWith('-12')) {
    const year = month.slice(0, 4);
    const currency = await workspaceCurrency(ctx.db, ctx.workspace);
    const id = closingEntryId(ctx.workspace, year, doc.closings);
    const lines = await journalEntries(ctx.db).exists({ _id: id }) ? [] : await closingLines(ctx, year, currency);
    if (lines.length) {
      await postEntry(ctx, { kind: 'closing', id: _id }, lines, {
        id, date: `${year}-12-31`, currency, memo: `Cierre del ejercicio ${year}: resultado a patrimonio`,
      }, { closingEntry: true });
    }
    if (lines.length || await journalEntries(ctx.db).exists({ _id: id })) closingEntry = id;
  }
  const closed = await model.findOneAndUpdate(
    { _id, status: 'closing' },
    { $set: { status: 'closed', closing_entry_id: closingEntry, closed_at: ctx.now, closed_by: ctx.principal.credential_id, updated_at: ctx.now } },
    { returnDocument: 'after' },
  ).lean();
  if (!closed) throw new CuadraError('conflict', `The period ${month} was changed by another call while closing; look at it again.`);
  return closed;
}

/**
 * Reopens a closed month. December's closing entry, if any, is reversed (dated 31 December, a
 * `closing` entry itself), so a later close computes the year's result again from every entry.
 */
export async function reopenPeriod(ctx: ToolContext, month: string): Promise<PeriodDoc> {
  const model = periods(ctx.db);
  const _id = periodId(ctx.workspace, month);
  const taken = await model.findOneAndUpdate({ _id, workspace: ctx.workspace, status: { $in: ['closed', 'closing'] } }, { $set: { status: 'closing', updated_at: ctx.now } }, { returnDocument: 'after' }).lean();
  if (!taken) throw new CuadraError('conflict', `The period ${month} is not closed; there is nothing to reopen.`);
  const year = month.slice(0, 4);
  const candidate = closingEntryId(ctx.workspace, year, taken.closings);
  const entry = month.endsWith('-12') ? await journalEntries(ctx.db).findById(taken.closing_entry_id ?? candidate).lean() : null;
  if (entry) {
    await reverseEntry(ctx, entry._id, entry.date, { memo: `Reversión del cierre del ejercicio ${year} (periodo reabierto)`, source: { kind: 'closing', id: _id } }, { closingEntry: true });
  }
  const reopened = await model.findOneAndUpdate(
    { _id, status: 'closing' },
    { $set: { status: 'open', closing_entry_id: null, reopened_at: ctx.now, updated_at: ctx.now } },
    { returnDocument: 'after' },
  ).lean();
  if (!reopened) throw new CuadraError('conflict', `The period ${month} was changed by another call while reopening; look at it again.`);
  // Payroll and inventory entries left out while the month was closed are written now.
  await pullPayrollEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
  await pullInventoryEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
  return reopened;
}

/** JSON Schema of {@link periodView}. */
export const PERIOD_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['month', 'status', 'closing_entry_id', 'closed_at', 'reopened_at'],
  properties: {
    month: { type: 'string' }, status: { enum: ['open', 'closing', 'closed'] }, closing_entry_id: { type: ['string', 'null'] },
    closed_at: { type: ['string', 'null'], format: 'date-time' }, reopened_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** Public shape of a period. */
export function periodView(p: PeriodDoc) {
  return { month: p.month, status: p.status, closing_entry_id: p.closing_entry_id, closed_at: p.closed_at?.toISOString() ?? null, reopened_at: p.reopened_at?.toISOString() ?? null };
}
