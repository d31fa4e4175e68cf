import { beginOperation, CuadraError, defineOperation, dropOperation, operationsInFlight, runOperation, type OperationContext, type OperationKind, type ToolContext } from '@cuadra/shared';
import { periodId, periods, type PeriodDoc } from '../../books/periods.ts';
import { journalEntries, postEntry, reverseEntry, type JournalLine } from '../../books/index.ts';
import { codesIn, ledgerBetween, settleLedger } from '../../books/general-ledger.ts';
import { LedgerCounter } from '../../books/rollup-store.ts';
import { pullPayrollEntries } from '../../accounting/payroll_pull.ts';
import { pullInventoryEntries } from '../../accounting/inventory_pull.ts';
import { PUC } from '../../accounting/puc.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { billPaymentOperation } from '../bills/payments.ts';
import { billPostOperation } from '../bills/ops.ts';
import { invoicePostOperation } from '../invoices/ops.ts';
import { paymentOperation } from '../payments/ops.ts';
import { acquisitionOperation, disposalOperation } from '../assets/ops.ts';

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
    const balance = (sums[LedgerCounter.debit(code)] ?? 0) - (sums[LedgerCounter.credit(code)] ?? 0);
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

/**
 * Postings in flight that a close must not cut in two (their markers): payments being applied,
 * invoices and bills being posted, fixed assets being recorded or disposed of (a sale's invoice
 * posted and its disposal entry not yet).
 */
function postingsInFlight(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>): Promise<boolean> {
  return operationsInFlight(ctx, [paymentOperation, billPaymentOperation, invoicePostOperation, billPostOperation, acquisitionOperation, disposalOperation]);
}

/** A close's or reopen's record for the runner: the period and its turn (`<period id>:<turn>`). */
function turnRecord(id: string, turn: number | undefined): string {
  return `${id}:${turn ?? 0}`;
}

/** The period of a turn's record while it is still in that turn (null once another began, or never written). */
async function loadTurn(ctx: OperationContext, record: string): Promise<PeriodDoc | null> {
  const at = record.lastIndexOf(':');
  const p = await periods(ctx.db).findOne({ _id: record.slice(0, at), workspace: ctx.workspace }).lean();
  return p && String(p.turn ?? 0) === record.slice(at + 1) ? p : null;
}

/**
 * Ends a turn: closing → `set`, one conditional update on the turn; the period as a concurrent
 * finisher left it when it got there first, else a conflict.
 */
async function endTurn(ctx: OperationContext, p: PeriodDoc, set: Partial<PeriodDoc>, verb: string): Promise<PeriodDoc> {
  const model = periods(ctx.db);
  const done = await model.findOneAndUpdate({ _id: p._id, status: 'closing', turn: p.turn ?? null }, { $set: { ...set, updated_at: ctx.now } }, { returnDocument: 'after' }).lean();
  if (done) return done;
  const now = await model.findById(p._id).lean();
  if (now && now.status === set.status && now.turn === p.turn) return now;
  throw new CuadraError('conflict', `The period ${p.month} was changed by another call while ${verb}; look at it again.`);
}

/**
 * A month's close as a durable operation (shared/src/operations.ts), begun before the month goes
 * open → closing (the guard then refuses every posting but the close's own); its steps, each
 * idempotent: the ledger settled and, for December, the year-end closing entry posted under the id
 * its `closings` names (one already posted is kept); then closing → closed. A process that dies in
 * between leaves the marker for the maintenance sweep, which finishes the close — a month is never
 * left refusing postings half closed.
 */
export const closeOperation: OperationKind<PeriodDoc> = defineOperation<PeriodDoc>({
  kind: 'period_close',
  load: loadTurn,
  steps: [
    async function settleAndCloseTheYear(ctx, p) {
      if (p.status !== 'closing') return p;
      await settleLedger(ctx.db, ctx.workspace, ctx.now);
      if (!p.month.endsWith('-12')) return { ...p, closing_entry_id: null };
      const year = p.month.slice(0, 4);
      const currency = await workspaceCurrency(ctx.db, ctx.workspace);
      const id = closingEntryId(ctx.workspace, year, p.closings);
      const lines = await journalEntries(ctx.db).exists({ _id: id }) ? [] : await closingLines(ctx, year, currency);
      if (lines.length) {
        await postEntry(ctx, { kind: 'closing', id: p._id }, lines, { id, date: `${year}-12-31`, currency, memo: `Cierre del ejercicio ${year}: resultado a patrimonio` }, { closingEntry: true });
      }
      return { ...p, closing_entry_id: lines.length || await journalEntries(ctx.db).exists({ _id: id }) ? id : null };
    },
    async function markClosed(ctx, p) {
      if (p.status !== 'closing') return p;
      // Who asked: the call's principal; the sweep finishing it keeps whoever began it.
      const by = (ctx as Partial<ToolContext>).principal?.credential_id ?? p.closed_by;
      return endTurn(ctx, p, { status: 'closed', closing_entry_id: p.closing_entry_id, closed_at: ctx.now, closed_by: by }, 'closing');
    },
  ],
});

/**
 * A month's reopening as a durable operation, begun before the month goes closed (or closing) →
 * closing; its steps, each idempotent: December's closing entry in force reversed (a reversing
 * entry under its own id, dated 31 December, a `closing` entry itself), so a later close computes
 * the year's result again from every entry; then closing → open.
 */
export const reopenOperation: OperationKind<PeriodDoc> = defineOperation<PeriodDoc>({
  kind: 'period_reopen',
  load: loadTurn,
  steps: [
    async function reverseTheYearClose(ctx, p) {
      if (p.status !== 'closing' || !p.month.endsWith('-12')) return p;
      const year = p.month.slice(0, 4);
      const entry = await journalEntries(ctx.db).findById(p.closing_entry_id ?? closingEntryId(ctx.workspace, year, p.closings)).lean();
      if (entry) {
        await reverseEntry(ctx, entry._id, entry.date, { memo: `Reversión del cierre del ejercicio ${year} (periodo reabierto)`, source: { kind: 'closing', id: p._id } }, { closingEntry: true });
      }
      return p;
    },
    async function markOpen(ctx, p) {
      if (p.status !== 'closing') return p;
      return endTurn(ctx, p, { status: 'open', closing_entry_id: null, reopened_at: ctx.now }, 'reopening');
    },
  ],
});

/**
 * Closes a month ({@link closeOperation}): payroll's and inventory's entries already final in it
 * taken in first, the operation begun, open → closing (a new turn), and its steps run — unless a
 * posting is in flight, when the month goes back to open and the close is refused (try again). A
 * close found `closing` (a call, or a version before the runner, that died) is resumed.
 */
export async function closePeriod(ctx: ToolContext, month: string): Promise<PeriodDoc> {
  // Payroll and inventory entries already final in the month are taken in before it closes (accounting/feed_pull.ts).
  await pullPayrollEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
  await pullInventoryEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now, ctx.log);
  const model = periods(ctx.db);
  const _id = periodId(ctx.workspace, month);
  const before = await model.findOne({ _id, workspace: ctx.workspace }).lean();
  let doc: PeriodDoc | null = null;
  if (!before || before.status === 'open') {
    await beginOperation(ctx, closeOperation, turnRecord(_id, (before?.turn ?? 0) + 1));
    try {
      doc = await model.findOneAndUpdate(
        { _id, workspace: ctx.workspace, status: 'open', ...(before ? { turn: before.turn ?? null } : {}) },
        { $set: { status: 'closing', closed_by: ctx.principal.credential_id, updated_at: ctx.now }, $inc: { closings: month.endsWith('-12') ? 1 : 0, turn: 1 }, $setOnInsert: { month, closing_entry_id: null, closed_at: null, reopened_at: null } },
        { upsert: !before, returnDocument: 'after' },
      ).lean();
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
  }
  doc ??= await model.findOne({ _id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('conflict', `The period ${month} could not be closed; try again.`);
  if (doc.status === 'closed') throw new CuadraError('conflict', `The period ${month} is already closed.`);
  if (doc.status === 'open') throw new CuadraError('conflict', `The period ${month} was changed by another call while closing; look at it again.`);
  const record = turnRecord(_id, doc.turn);
  // A close resumed: its marker (kept when there is one already).
  await beginOperation(ctx, closeOperation, record);
  if (await postingsInFlight(ctx)) {
    const back = await model.updateOne({ _id, status: 'closing', turn: doc.turn ?? null }, { $set: { status: 'open', updated_at: ctx.now } });
    if (back.modifiedCount === 1) await dropOperation(ctx, closeOperation, record);
    throw new CuadraError('conflict', `A payment or a posting is being registered right now; close ${month} again in a moment.`);
  }
  return runOperation(ctx, closeOperation, doc, record);
}

/**
 * Reopens a closed month ({@link reopenOperation}): the operation begun, closed (or closing: a close
 * or reopen that died) → closing (a new turn), its steps run; then payroll's and inventory's
 * entries left out while the month was closed are taken in.
 */
export async function reopenPeriod(ctx: ToolContext, month: string): Promise<PeriodDoc> {
  const model = periods(ctx.db);
  const _id = periodId(ctx.workspace, month);
  const before = await model.findOne({ _id, workspace: ctx.workspace }).lean();
  if (!before || (before.status !== 'closed' && before.status !== 'closing')) throw new CuadraError('conflict', `The period ${month} is not closed; there is nothing to reopen.`);
  const record = turnRecord(_id, (before.turn ?? 0) + 1);
  await beginOperation(ctx, reopenOperation, record);
  const taken = await model.findOneAndUpdate(
    { _id, workspace: ctx.workspace, status: before.status, turn: before.turn ?? null },
    { $set: { status: 'closing', updated_at: ctx.now }, $inc: { turn: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!taken) throw new CuadraError('conflict', `The period ${month} was changed by another call while reopening; look at it again.`);
  const reopened = await runOperation(ctx, reopenOperation, taken, record);
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
