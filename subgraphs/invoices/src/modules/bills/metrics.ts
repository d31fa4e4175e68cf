import { addDays, buckets, CuadraError, localDate, previousWindow, queryWindow, windowProblem, type MetricQuery, type MetricReader, type ReadContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { agingAt, cumulative, rangeSums, summaryOf, type CounterKey, type MetricAnswer } from '../../books/rollup-reads.ts';
import { partySums, topParties } from '../../books/party-leaders.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { positionDate } from '../../books/calendar.ts';
import { BILL_STATUSES } from './model.ts';
import { payablesRollupCurrency } from './ops.ts';

/*
 * The payables metrics read the subgraph's rollups only, by `_id` (never the bills: INFRA.md), in
 * the payables namespace `ap:<currency>` (ops.ts). Counters: `expenses` (net of lines on expense
 * accounts) and `purchases` (net of every line) by issue day, `ap` (what is owed to vendors: + on
 * posting, − on payment, by the day of the change), `bill_<status>` (bills by status, on their
 * issue day), `c.<vendor>.spend`, and the due-date grain for aging. The shapes are those of the
 * receivables metrics (CONTRACT.md §8).
 */

type Answer = MetricAnswer;
/** A window metric per bucket and for the whole window, `previous` filled when the query compares. */
async function windowSeries(db: Connection, workspace: string, currency: string, q: MetricQuery, today: string, key: CounterKey) {
  const w = queryWindow(q, today);
  const bs = buckets(w, q.interval ?? 'day');
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const pbs = pw ? buckets(pw, q.interval ?? 'day') : [];
  const sums = await rangeSums(db, workspace, currency, [w, ...bs.map((b) => ({ from: b.period, to: b.period_end })), ...(pw ? [pw] : []), ...pbs.map((b) => ({ from: b.period, to: b.period_end }))]);
  const series: Answer['series'] = bs.map((b, i) => ({ ...b, value: sums[1 + i](key) }));
  if (!pw) return { series, value: sums[0](key) };
  const pStart = 1 + bs.length;
  series.forEach((point, i) => {
    if (pbs[i]) point.previous = sums[pStart + 1 + i](key);
  });
  return { series, value: sums[0](key), previous: sums[pStart](key) };
}

/** What every payables metric does first: the window checked, stuck work finished, the currency. */
async function prepare(q: MetricQuery, ctx: ReadContext) {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const currency = await workspaceCurrency(ctx.db, ctx.workspace, ctx);
  return { currency, ns: payablesRollupCurrency(currency), today: localDate(ctx.now), limit: Math.min(Math.max(Math.trunc(q.limit ?? 5), 1), 100) };
}

/** Net spent on expense accounts (bills posted, by issue date). */
const expenses: MetricReader = async (q, ctx) => {
  const { currency, ns, today } = await prepare(q, ctx);
  const r = await windowSeries(ctx.db, ctx.workspace, ns, q, today, 'expenses');
  return { metric: q.metric, unit: 'money', currency, series: r.series, summary: summaryOf(r.value, r.previous, q) } satisfies Answer;
};

/** Bills by status (counted on their issue day), with a row per status. */
const billsStatus: MetricReader = async (q, ctx) => {
  const { ns, today } = await prepare(q, ctx);
  const count = (v: Record<string, number>) => BILL_STATUSES.reduce((s, st) => s + (v[`bill_${st}`] ?? 0), 0);
  // Both reads in one turn: their rollups come in one command.
  const [r, [window]] = await Promise.all([windowSeries(ctx.db, ctx.workspace, ns, q, today, count), rangeSums(ctx.db, ctx.workspace, ns, [queryWindow(q, today)])]);
  const rows = BILL_STATUSES.map((status) => ({ status, count: window(`bill_${status}`) }));
  return { metric: q.metric, unit: 'count', series: r.series, summary: summaryOf(r.value, r.previous, q), rows } satisfies Answer;
};

/** What is owed to vendors at the end of each bucket (before the window, plus the change since). */
const apOutstanding: MetricReader = async (q, ctx) => {
  const { currency, ns, today } = await prepare(q, ctx);
  const w = queryWindow(q, today);
  const running = async (win: { from: string; to: string }) => {
    const bs = buckets(win, q.interval ?? 'day');
    const [base, sums] = await Promise.all([
      cumulative(ctx.db, ctx.workspace, ns, 'ap', addDays(win.from, -1), today), rangeSums(ctx.db, ctx.workspace, ns, bs.map((b) => ({ from: b.period, to: b.period_end }))),
    ]);
    let total = base;
    return { points: bs.map((b, i) => ({ ...b, value: (total += sums[i]('ap')) })), value: total };
  };
  // Both windows in one turn: their rollups come in one command.
  const [now, before] = await Promise.all([running(w), q.compare ? running(previousWindow(w, q.compare)) : null]);
  let previous: number | undefined;
  if (before) {
    now.points.forEach((p, i) => {
      if (before.points[i]) (p as { previous?: number }).previous = before.points[i].value;
    });
    previous = before.value;
  }
  return { metric: q.metric, unit: 'money', currency, series: now.points, summary: summaryOf(now.value, previous, q) } satisfies Answer;
};

/**
 * What is owed to vendors at `as_of` by days past due: from the due-date rollups, what was open
 * at as_of on bills due on each day/month is the sum of their changes dated on or before it;
 * > 90 days is the rest of the total.
 */
const apAging: MetricReader = async (q, ctx) => {
  const { currency, ns, today } = await prepare(q, ctx);
  const asOf = positionDate(q, today);
  const { total, rows } = await agingAt(ctx.db, ctx.workspace, ns, 'ap', asOf, today);
  return {
    metric: q.metric, unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: total }],
    summary: summaryOf(total, undefined, q), rows,
  } satisfies Answer;
};

/** The vendors bought from most in the window (net of their posted bills). */
const topVendors: MetricReader = async (q, ctx) => {
  const { currency, ns, today, limit } = await prepare(q, ctx);
  const w = queryWindow(q, today);
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  // Exact, from the leaders of the window's days and months (books/party-leaders.ts).
  const top = await topParties(ctx.db, ctx.workspace, ns, w.from, w.to, 'spend', limit);
  const before = pw ? await partySums(ctx.db, ctx.workspace, ns, pw.from, pw.to, 'spend', top.rows.map((r) => r.id)) : null;
  const rows = top.rows.map((r) => ({ vendor_id: r.id, name: r.name, value: r.value, ...(before ? { previous: before.get(r.id) ?? 0 } : {}) }));
  const value = rows.reduce((s, r) => s + r.value, 0);
  const previous = before ? rows.reduce((s, r) => s + ((r as { previous?: number }).previous ?? 0), 0) : undefined;
  return { metric: q.metric, unit: 'money', currency, series: [{ period: w.from, period_end: w.to, value }], summary: summaryOf(value, previous, q), rows } satisfies Answer;
};

/** The payables metrics this module answers (DOMAIN.md). */
export const PAYABLES_METRICS = { expenses, ap_outstanding: apOutstanding, ap_aging: apAging, bills_status: billsStatus, top_vendors: topVendors };
