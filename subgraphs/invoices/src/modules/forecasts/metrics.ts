import { addDays, CuadraError, endOfMonth, localDate, type MetricQuery, type MetricReader, type ReadContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { codesIn, ledgerAsOf, ledgerBetween, type LedgerSums } from '../../books/general-ledger.ts';
import { buildLines, documentTotals } from '../items/document-lines.ts';
import { forecastMonthly, type Forecast } from '../../lib/forecast.ts';
import { monthsBetween, nextMonth } from '../../books/calendar.ts';
import { rollupsByIds } from '../../books/rollup-reads.ts';
import { Grain, LedgerCounter, rollupId } from '../../books/rollup-store.ts';
import { cumulative } from '../../books/rollup-reads.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { nextPeriod, recurringInvoices } from '../invoices/recurring.ts';

/**
 * The forecast metrics (issue 17): `revenue_forecast`, `expenses_forecast`, `cashflow_forecast`
 * and `cash_projection`. Monthly, `horizon` months ahead (default 6, at most 24: the shared
 * metric query schema refuses more with `invalid_input` at `/horizon`). The first forecast month
 * is the month of `as_of` (default today); history is the whole months before it, at most
 * {@link HISTORY_MONTHS}, from the first month with any ledger activity. History comes from the
 * ledger rollups only (books/general-ledger.ts, read by `_id`), in the workspace's base currency,
 * leaving out the year-end closing entries. The method is lib/forecast.ts's and is named in the
 * answer's first row (`kind: "method"`), since the contract's answer has no other place for it.
 */

export const HISTORY_MONTHS = 36;
export const DEFAULT_HORIZON = 6;

type Answer = {
  metric: string; unit: 'money'; currency: string;
  series: { period: string; period_end: string; value: number }[];
  summary: { value: number; target?: number };
  rows: Record<string, unknown>[];
};

const monthStart = (ym: string) => `${ym}-01`;
const monthEnd = (ym: string) => endOfMonth(`${ym}-01`);

function prevMonthOf(ym: string, n: number): string {
  let [y, m] = ym.split('-').map(Number);
  m -= n;
  while (m < 1) {
    m += 12;
    y -= 1;
  }
  return `${y}-${String(m).padStart(2, '0')}`;
}

/** Income of classes 4 (credit − debit), net of closing entries. */
export function incomeOf(sums: LedgerSums): number {
  return codesIn(sums).filter((c) => c[0] === '4').reduce((s, c) => s + ((sums[LedgerCounter.credit(c)] ?? 0) - (sums[LedgerCounter.closingCredit(c)] ?? 0)) - ((sums[LedgerCounter.debit(c)] ?? 0) - (sums[LedgerCounter.closingDebit(c)] ?? 0)), 0);
}

/** Expenses and costs of classes 5, 6 and 7 (debit − credit), net of closing entries. */
export function expensesOf(sums: LedgerSums): number {
  return codesIn(sums).filter((c) => ['5', '6', '7'].includes(c[0])).reduce((s, c) => s + ((sums[LedgerCounter.debit(c)] ?? 0) - (sums[LedgerCounter.closingDebit(c)] ?? 0)) - ((sums[LedgerCounter.credit(c)] ?? 0) - (sums[LedgerCounter.closingCredit(c)] ?? 0)), 0);
}

/** Cash (PUC group 11, disponible) coming in (debits) and going out (credits). */
export function cashMovesOf(sums: LedgerSums): { inflow: number; outflow: number } {
  const codes = codesIn(sums).filter((c) => c.startsWith('11'));
  return { inflow: codes.reduce((s, c) => s + (sums[LedgerCounter.debit(c)] ?? 0), 0), outflow: codes.reduce((s, c) => s + (sums[LedgerCounter.credit(c)] ?? 0), 0) };
}

interface Setting { currency: string; today: string; first: string; horizon: number; months: string[] }

async function setup(q: MetricQuery, ctx: ReadContext): Promise<Setting> {
  if (q.interval && q.interval !== 'month') throw new CuadraError('invalid_input', 'Forecasts are monthly: interval is month or left out.', { field: '/interval' });
  const currency = await workspaceCurrency(ctx.db, ctx.workspace, ctx);
  const today = localDate(ctx.now);
  const first = (q.as_of ?? today).slice(0, 7);
  const horizon = q.horizon ?? DEFAULT_HORIZON;
  const months = [first];
  while (months.length < horizon) months.push(nextMonth(months[months.length - 1]));
  return { currency, today, first, horizon, months };
}

/** The monthly ledger sums of the history before `first` (leading months without any entry dropped). */
async function history(db: Connection, workspace: string, currency: string, first: string): Promise<{ months: string[]; sums: LedgerSums[] }> {
  const months = monthsBetween(prevMonthOf(first, HISTORY_MONTHS), prevMonthOf(first, 1));
  const sums = await ledgerBetween(db, workspace, currency, months.map((m) => ({ from: monthStart(m), to: monthEnd(m) })));
  const start = sums.findIndex((s) => Object.keys(s).length > 0);
  return start < 0 ? { months: [], sums: [] } : { months: months.slice(start), sums: sums.slice(start) };
}

function methodRow(f: Forecast, hist: { months: string[] }, series: string) {
  return {
    kind: 'method', series, method: f.method, history_months: hist.months.length,
    history_from: hist.months[0] ? monthStart(hist.months[0]) : null, history_to: hist.months.length ? monthEnd(hist.months[hist.months.length - 1]) : null,
    ...(f.parameters ? { parameters: f.parameters } : {}),
  };
}

function withTarget(summary: Answer['summary'], q: MetricQuery): Answer['summary'] {
  return q.target === undefined ? summary : { ...summary, target: q.target };
}

/** revenue_forecast / expenses_forecast: one series of the ledger forecast by the method its history allows. */
function seriesForecast(pick: (s: LedgerSums) => number, label: 'revenue' | 'expenses'): MetricReader {
  return async (q, ctx) => {
    const s = await setup(q, ctx);
    const hist = await history(ctx.db, ctx.workspace, s.currency, s.first);
    const actual = hist.sums.map(pick);
    const f = forecastMonthly(actual, s.horizon);
    const series = s.months.map((m, i) => ({ period: monthStart(m), period_end: monthEnd(m), value: f.values[i] }));
    const answer: Answer = {
      metric: q.metric, unit: 'money', currency: s.currency, series,
      summary: withTarget({ value: f.values.reduce((a, v) => a + v, 0) }, q),
      rows: [
        methodRow(f, hist, label),
        ...hist.months.map((m, i) => ({ kind: 'actual', period: monthStart(m), period_end: monthEnd(m), value: actual[i] })),
        ...series.map((p) => ({ kind: 'forecast', ...p })),
      ],
    };
    return answer as unknown as Record<string, unknown>;
  };
}

/** cashflow_forecast: cash inflows and outflows (PUC 11) forecast separately, each month their difference. */
const cashflowForecast: MetricReader = async (q, ctx) => {
  const s = await setup(q, ctx);
  const hist = await history(ctx.db, ctx.workspace, s.currency, s.first);
  const moves = hist.sums.map(cashMovesOf);
  const fin = forecastMonthly(moves.map((m) => m.inflow), s.horizon);
  const fout = forecastMonthly(moves.map((m) => m.outflow), s.horizon);
  const series = s.months.map((m, i) => ({ period: monthStart(m), period_end: monthEnd(m), value: fin.values[i] - fout.values[i] }));
  return {
    metric: q.metric, unit: 'money', currency: s.currency, series,
    summary: withTarget({ value: series.reduce((a, p) => a + p.value, 0) }, q),
    rows: [
      methodRow(fin, hist, 'inflows'), methodRow(fout, hist, 'outflows'),
      ...hist.months.map((m, i) => ({ kind: 'actual', period: monthStart(m), period_end: monthEnd(m), inflow: moves[i].inflow, outflow: moves[i].outflow, value: moves[i].inflow - moves[i].outflow })),
      ...series.map((p, i) => ({ kind: 'forecast', ...p, inflow: fin.values[i], outflow: fout.values[i] })),
    ],
  };
};

/** Recurring schedules read per projection (a workspace has a handful). */
export const RECURRING_READ = 200;

/**
 * What is open at `asOf` on documents due in each projection bucket, from the due-date rollups of
 * `ns` (receivables: `<currency>`, counter `ar`; payables: `ap:<currency>`, counter `ap`). The
 * first bucket (the rest of `asOf`'s month) also takes everything overdue: what is open and
 * not due in a later month.
 */
async function openByBucket(db: Connection, workspace: string, ns: string, counter: string, asOf: string, today: string, months: string[]): Promise<{ buckets: number[]; later: number }> {
  const total = await cumulative(db, workspace, ns, counter, asOf, today);
  // Everything due after asOf's month is in the `duem` rollups (by due month, changes keyed by the day they happened).
  let last = months[months.length - 1];
  for (let i = 0; i < 36; i++) last = nextMonth(last);
  const later = monthsBetween(nextMonth(months[0]), last);
  const docs = new Map((await rollupsByIds(db, later.map((m) => rollupId(workspace, ns, Grain.DueMonth, m)))).map((d) => [d.period, d]));
  const openIn = (m: string) => Object.entries(docs.get(m)?.e ?? {}).reduce((s, [day, v]) => (day <= asOf ? s + v : s), 0);
  const buckets = months.map((m, i) => (i === 0 ? 0 : openIn(m)));
  const beyond = later.filter((m) => !months.includes(m)).reduce((s, m) => s + openIn(m), 0);
  buckets[0] = total - buckets.slice(1).reduce((s, v) => s + v, 0) - beyond;
  return { buckets, later: beyond };
}

/**
 * cash_projection: the cash (PUC 11 balance) at `as_of`, then per month the receivables and
 * payables open at `as_of` falling due in it (overdue ones in the first month), plus what the
 * active recurring invoices will bill, collected `due_days` after each issue date (their lines
 * priced as a run would price them today, the withholdings deducted). Each point is the
 * projected cash at the month's end. Recurring bills do not exist in Cuadra; payroll is another
 * subgraph's and is not read here.
 */
const cashProjection: MetricReader = async (q, ctx) => {
  const s = await setup(q, ctx);
  const asOf = q.as_of ?? s.today;
  const position = await ledgerAsOf(ctx.db, ctx.workspace, s.currency, asOf, s.today);
  const cashCodes = codesIn(position).filter((c) => c.startsWith('11'));
  const accounts = cashCodes.map((c) => ({ account: c, balance: (position[LedgerCounter.debit(c)] ?? 0) - (position[LedgerCounter.credit(c)] ?? 0) })).filter((a) => a.balance !== 0);
  const opening = accounts.reduce((a, r) => a + r.balance, 0);
  const ar = await openByBucket(ctx.db, ctx.workspace, s.currency, 'ar', asOf, s.today, s.months);
  const ap = await openByBucket(ctx.db, ctx.workspace, `ap:${s.currency}`, 'ap', asOf, s.today, s.months);
  const bucketEnd = s.months.map(monthEnd);
  const recurring = s.months.map(() => 0);
  const schedules = await recurringInvoices(ctx.db).find({ workspace: ctx.workspace, status: 'active', currency: s.currency }).sort({ _id: 1 }).limit(RECURRING_READ).lean();
  const recurringRows: Record<string, unknown>[] = [];
  for (const r of schedules) {
    let amount: number;
    try {
      amount = documentTotals(await buildLines(ctx, r.currency, r.lines), r.withholdings).amount_due;
    } catch {
      recurringRows.push({ kind: 'recurring', recurring_id: r._id, skipped: 'its lines cannot be priced today (an item archived or removed)' });
      continue;
    }
    let occurrences = 0;
    for (let date = r.next_date; date <= bucketEnd[bucketEnd.length - 1] && (!r.end_date || date <= r.end_date); date = nextPeriod(date, r.interval, r.every, r.anchor_day)) {
      const due = addDays(date, r.due_days);
      const i = due <= bucketEnd[0] ? 0 : bucketEnd.findIndex((e) => due <= e);
      if (i >= 0) {
        recurring[i] += amount;
        occurrences++;
      }
      if (occurrences > 400) break;
    }
    recurringRows.push({ kind: 'recurring', recurring_id: r._id, customer: r.customer.name, amount_due: amount, occurrences });
  }
  let cash = opening;
  const rows: Record<string, unknown>[] = [
    { kind: 'method', method: 'known_documents', as_of: asOf, opening_cash: opening, accounts, receivables_due_later: ar.later, payables_due_later: ap.later },
  ];
  const series = s.months.map((m, i) => {
    const inflow = ar.buckets[i] + recurring[i];
    const outflow = ap.buckets[i];
    const open = cash;
    cash += inflow - outflow;
    rows.push({ kind: 'projection', period: i === 0 ? asOf : monthStart(m), period_end: monthEnd(m), opening: open, receivables: ar.buckets[i], recurring: recurring[i], payables: ap.buckets[i], closing: cash });
    return { period: i === 0 ? asOf : monthStart(m), period_end: monthEnd(m), value: cash };
  });
  rows.push(...recurringRows);
  return { metric: q.metric, unit: 'money', currency: s.currency, series, summary: withTarget({ value: cash }, q), rows };
};

/** The metrics this module answers. */
export const FORECAST_METRICS: Record<string, MetricReader> = {
  revenue_forecast: seriesForecast(incomeOf, 'revenue'),
  expenses_forecast: seriesForecast(expensesOf, 'expenses'),
  cashflow_forecast: cashflowForecast,
  cash_projection: cashProjection,
};
