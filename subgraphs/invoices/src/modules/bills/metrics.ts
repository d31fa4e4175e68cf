import { addDays, buckets, changeBps, CuadraError, endOfMonth, localDate, previousWindow, queryWindow, windowProblem, type MetricQuery, type MetricReader, type ReadContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { rollupId, rollups, type RollupDoc } from '../../lib/rollup.ts';
import { settings } from '../../lib/settings.ts';
import { AGING_BUCKETS, agingBucket, type AgingBucket } from '../../lib/aging.ts';
import { daysOf, monthsBetween, nextMonth, positionDate, splitByMonths } from '../../lib/periods.ts';
import { repairPendingRollups } from '../../lib/rollups.ts';
import { BILL_STATUSES, bills } from './model.ts';
import { apCurrency } from './ops.ts';
import { billPayments, completeStuckBillPayments } from './payments.ts';

/*
 * The payables metrics read the subgraph's rollups only, by `_id` (never the bills: INFRA.md), in
 * the payables namespace `ap:<currency>` (ops.ts). Counters: `expenses` (net of lines on expense
 * accounts) and `purchases` (net of every line) by issue day, `ap` (what is owed to vendors: + on
 * posting, − on payment, by the day of the change), `bill_<status>` (bills by status, on their
 * issue day), `c.<vendor>.spend`, and the due-date grain for aging. The shapes are those of the
 * receivables metrics (CONTRACT.md §8).
 */

type Answer = {
  metric: string; unit: 'money' | 'count'; currency?: string;
  series: { period: string; period_end: string; value: number; previous?: number }[];
  summary: { value: number; previous?: number; change_bps?: number; target?: number };
  rows?: Record<string, unknown>[];
};

async function byIds(db: Connection, ids: string[]): Promise<RollupDoc[]> {
  const out: RollupDoc[] = [];
  for (let i = 0; i < ids.length; i += 400) out.push(...await rollups(db).find({ _id: { $in: ids.slice(i, i + 400) } }).lean<RollupDoc[]>());
  return out;
}

/** Ids of the day and month rollups that together cover a day range. */
function rangeIds(workspace: string, currency: string, from: string, to: string): string[] {
  const split = splitByMonths(from, to);
  return [
    ...split.days.flatMap((d) => daysOf(d.from, d.to).map((day) => rollupId(workspace, currency, 'd', day))),
    ...(split.months ? monthsBetween(split.months.from, split.months.to).map((m) => rollupId(workspace, currency, 'm', m)) : []),
  ];
}

type Key = string | ((v: Record<string, number>) => number);

/** Sums of counters over several day ranges, all rollup documents read in one pass by `_id`. */
async function rangeSums(db: Connection, workspace: string, currency: string, ranges: readonly { from: string; to: string }[]): Promise<((key: Key) => number)[]> {
  const plans = ranges.map((r) => rangeIds(workspace, currency, r.from, r.to));
  const docs = new Map((await byIds(db, [...new Set(plans.flat())])).map((d) => [d._id, d]));
  return plans.map((ids) => (key) => ids.reduce((s, id) => {
    const d = docs.get(id);
    return d ? s + (typeof key === 'string' ? (d.v[key] ?? 0) : key(d.v)) : s;
  }, 0));
}

/** How far past today bills may be dated and still be counted before a position date. */
const FUTURE_MONTHS = 36;

function horizonOf(date: string, today: string): string {
  let horizon = (date > today ? date : today).slice(0, 7);
  for (let i = 0; i < FUTURE_MONTHS; i++) horizon = nextMonth(horizon);
  return horizon;
}

/** Σ of a counter up to and including `date`: the all-time rollup less what is dated after it. */
async function cumulative(db: Connection, workspace: string, currency: string, key: string, date: string, today: string): Promise<number> {
  const later = [
    ...monthsBetween(nextMonth(date.slice(0, 7)), horizonOf(date, today)).map((m) => rollupId(workspace, currency, 'm', m)),
    ...(date < endOfMonth(date) ? daysOf(addDays(date, 1), endOfMonth(date)).map((d) => rollupId(workspace, currency, 'd', d)) : []),
  ];
  const [all] = await byIds(db, [rollupId(workspace, currency, 'a', 'all')]);
  return (all?.v[key] ?? 0) - (await byIds(db, later)).reduce((s, d) => s + (d.v[key] ?? 0), 0);
}

/** Per-vendor sums of `key` over a range. */
async function vendorTotals(db: Connection, workspace: string, currency: string, from: string, to: string, key: string): Promise<Map<string, { name: string; value: number }>> {
  const out = new Map<string, { name: string; value: number }>();
  for (const d of await byIds(db, rangeIds(workspace, currency, from, to))) {
    for (const [vendor, counters] of Object.entries(d.c ?? {})) {
      const acc = out.get(vendor) ?? { name: vendor, value: 0 };
      acc.value += counters[key] ?? 0;
      if (d.n?.[vendor]) acc.name = d.n[vendor];
      out.set(vendor, acc);
    }
  }
  return out;
}

function summaryOf(value: number, previous: number | undefined, q: MetricQuery): Answer['summary'] {
  const target = q.target === undefined ? {} : { target: q.target };
  if (previous === undefined) return { value, ...target };
  const change = changeBps(value, previous);
  return change === undefined ? { value, previous, ...target } : { value, previous, change_bps: change, ...target };
}

/** A window metric per bucket and for the whole window, `previous` filled when the query compares. */
async function windowSeries(db: Connection, workspace: string, currency: string, q: MetricQuery, today: string, key: Key) {
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
  await completeStuckBillPayments({ db: ctx.db, workspace: ctx.workspace, now: ctx.now });
  await repairPendingRollups(ctx.db, ctx.workspace, [bills(ctx.db), billPayments(ctx.db)], ctx.now);
  const currency = (await settings(ctx.db).findById(ctx.workspace, { currency: 1 }).lean())?.currency ?? 'COP';
  return { currency, ns: apCurrency(currency), today: localDate(ctx.now), limit: Math.min(Math.max(Math.trunc(q.limit ?? 5), 1), 100) };
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
  const r = await windowSeries(ctx.db, ctx.workspace, ns, q, today, count);
  const [window] = await rangeSums(ctx.db, ctx.workspace, ns, [queryWindow(q, today)]);
  const rows = BILL_STATUSES.map((status) => ({ status, count: window(`bill_${status}`) }));
  return { metric: q.metric, unit: 'count', series: r.series, summary: summaryOf(r.value, r.previous, q), rows } satisfies Answer;
};

/** What is owed to vendors at the end of each bucket (before the window, plus the change since). */
const apOutstanding: MetricReader = async (q, ctx) => {
  const { currency, ns, today } = await prepare(q, ctx);
  const w = queryWindow(q, today);
  const running = async (win: { from: string; to: string }) => {
    const bs = buckets(win, q.interval ?? 'day');
    let total = await cumulative(ctx.db, ctx.workspace, ns, 'ap', addDays(win.from, -1), today);
    const sums = await rangeSums(ctx.db, ctx.workspace, ns, bs.map((b) => ({ from: b.period, to: b.period_end })));
    return { points: bs.map((b, i) => ({ ...b, value: (total += sums[i]('ap')) })), value: total };
  };
  const now = await running(w);
  let previous: number | undefined;
  if (q.compare) {
    const before = await running(previousWindow(w, q.compare));
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
  const total = await cumulative(ctx.db, ctx.workspace, ns, 'ap', asOf, today);
  const dayIds = daysOf(addDays(asOf, -90), endOfMonth(asOf)).map((d) => rollupId(ctx.workspace, ns, 'due', d));
  const monthIds = monthsBetween(nextMonth(asOf.slice(0, 7)), horizonOf(asOf, today)).map((m) => rollupId(ctx.workspace, ns, 'duem', m));
  const openAt = (d: RollupDoc) => Object.entries(d.e ?? {}).reduce((sum, [day, v]) => (day <= asOf ? sum + v : sum), 0);
  const values: Record<AgingBucket, number> = { current: 0, '1_30': 0, '31_60': 0, '61_90': 0, over_90: 0 };
  for (const d of await byIds(ctx.db, [...dayIds, ...monthIds])) values[d.grain === 'duem' ? 'current' : agingBucket(d.period, asOf)] += openAt(d);
  values.over_90 = total - values.current - values['1_30'] - values['31_60'] - values['61_90'];
  return {
    metric: q.metric, unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: total }],
    summary: summaryOf(total, undefined, q), rows: AGING_BUCKETS.map((bucket) => ({ bucket, value: values[bucket] })),
  } satisfies Answer;
};

/** The vendors bought from most in the window (net of their posted bills). */
const topVendors: MetricReader = async (q, ctx) => {
  const { currency, ns, today, limit } = await prepare(q, ctx);
  const w = queryWindow(q, today);
  const totals = await vendorTotals(ctx.db, ctx.workspace, ns, w.from, w.to, 'spend');
  const ranked = [...totals.entries()].map(([vendor_id, t]) => ({ vendor_id, name: t.name, value: t.value }))
    .filter((r) => r.value !== 0).sort((a, b) => b.value - a.value || a.vendor_id.localeCompare(b.vendor_id)).slice(0, limit);
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const before = pw ? await vendorTotals(ctx.db, ctx.workspace, ns, pw.from, pw.to, 'spend') : null;
  const rows = ranked.map((r) => (before ? { ...r, previous: before.get(r.vendor_id)?.value ?? 0 } : r));
  const value = rows.reduce((s, r) => s + r.value, 0);
  const previous = before ? rows.reduce((s, r) => s + ((r as { previous?: number }).previous ?? 0), 0) : undefined;
  return { metric: q.metric, unit: 'money', currency, series: [{ period: w.from, period_end: w.to, value }], summary: summaryOf(value, previous, q), rows } satisfies Answer;
};

/** The payables metrics this module answers (DOMAIN.md). */
export const PAYABLES_METRICS = { expenses, ap_outstanding: apOutstanding, ap_aging: apAging, bills_status: billsStatus, top_vendors: topVendors };
