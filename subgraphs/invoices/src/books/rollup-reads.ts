import { addDays, readByKeys, type MetricQuery } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { changeBps, daysOf, endOfMonth, monthsBetween, nextMonth, splitByMonths } from './calendar.ts';
import { AGING_BUCKETS, agingBucket, type AgingBucket } from './aging.ts';
import { ALL_TIME, Grain, PARTY_SHARDS, partyShardId, rollupId, rollups, type RollupDoc } from './rollup-store.ts';

/**
 * Reading the subgraph's rollups for metrics, written once for every module that keeps them
 * (receivables under `<currency>`, payables under `ap:<currency>`): documents are read by `_id`
 * only, never by scanning (INFRA.md: the store builds no non-unique indexes).
 */

/** The contract shape of a metric answer (CONTRACT.md §8). */
export type MetricAnswer = {
  metric: string;
  unit: 'money' | 'ratio' | 'count';
  currency?: string;
  series: { period: string; period_end: string; value: number; previous?: number }[];
  summary: { value: number; previous?: number; change_bps?: number; target?: number };
  rows?: Record<string, unknown>[];
};

/** A counter's name, or a function of a rollup's counters. */
export type CounterKey = string | ((v: Record<string, number>) => number);

/**
 * Rollup documents by id. Every read asked for in the same turn of the event loop on the same
 * connection is answered by one pass of `_id: {$in}` reads, 400 ids each (readByKeys: a dashboard's
 * metrics ask theirs at once: a dozen reads became one or two). Each caller gets the documents of
 * its own ids only; the ids name the workspace, so nothing of another workspace is ever handed out.
 */
export function rollupsByIds(db: Connection, ids: readonly string[], fields: RollupFields = ROLLUP_COUNTERS): Promise<RollupDoc[]> {
  return readByKeys<RollupDoc>(db, rollups(db).collection.collectionName, '_id', ids, fields);
}

/**
 * The parts of rollup documents a read takes (a projection): a month's document also holds every
 * customer of the month (thousands at 100,000 invoices a year), which only party totals read.
 */
export type RollupFields = Record<string, 1>;
/** The counters (`v`) and due-date changes (`e`) with the grain and period: what every read but party totals takes. */
export const ROLLUP_COUNTERS: RollupFields = { v: 1, e: 1, grain: 1, period: 1 };
/** The per-party counters and names: party totals. */
const ROLLUP_PARTIES: RollupFields = { c: 1, n: 1 };

/** Ranges whose ids were listed lately (a dashboard's metrics share windows and buckets, render after render). */
const listedRanges = new Map<string, readonly string[]>();
const LISTED_RANGES_KEPT = 4_000;

/** The days and months that together cover a day range: whole months monthly, the edges daily. */
export function rangePeriods(from: string, to: string): [Grain, string][] {
  const split = splitByMonths(from, to);
  return [
    ...split.days.flatMap((d) => daysOf(d.from, d.to).map((day): [Grain, string] => [Grain.Day, day])),
    ...(split.months ? monthsBetween(split.months.from, split.months.to).map((m): [Grain, string] => [Grain.Month, m]) : []),
  ];
}

/**
 * Ids of the day and month rollups that together cover a day range: whole months monthly, the
 * edges daily. Calendar arithmetic only (no data), so the lists of recent ranges are kept: a
 * dashboard asks the same windows and buckets from several metrics, and again at every render.
 */
export function rangeIds(workspace: string, currency: string, from: string, to: string): readonly string[] {
  const key = `${workspace}|${currency}|${from}|${to}`;
  let ids = listedRanges.get(key);
  if (!ids) {
    ids = rangePeriods(from, to).map(([grain, period]) => rollupId(workspace, currency, grain, period));
    if (listedRanges.size >= LISTED_RANGES_KEPT) listedRanges.clear();
    listedRanges.set(key, ids);
  }
  return ids;
}

/** Sums of counters over several day ranges, all rollup documents read in one pass by `_id`. */
export async function rangeSums(db: Connection, workspace: string, currency: string, ranges: readonly { from: string; to: string }[]): Promise<((key: CounterKey) => number)[]> {
  const plans = ranges.map((r) => rangeIds(workspace, currency, r.from, r.to));
  const docs = new Map((await rollupsByIds(db, [...new Set(plans.flat())])).map((d) => [d._id, d]));
  return plans.map((ids) => (key) => ids.reduce((s, id) => {
    const d = docs.get(id);
    return d ? s + (typeof key === 'string' ? (d.v[key] ?? 0) : key(d.v)) : s;
  }, 0));
}

/** How far past today documents may be dated and still be counted before a position date. */
const FUTURE_MONTHS = 36;

/** The last month documents dated from `date` (or today, if later) may fall in and still be counted. */
function horizonOf(date: string, today: string): string {
  let horizon = (date > today ? date : today).slice(0, 7);
  for (let i = 0; i < FUTURE_MONTHS; i++) horizon = nextMonth(horizon);
  return horizon;
}

/**
 * Σ of a counter over all days up to and including `date`: the all-time rollup less the months
 * after `date`'s month (up to three years past today) and the days after `date` in its month.
 * Reads at most ~50 documents, by `_id`, whatever the history's length.
 */
export async function cumulative(db: Connection, workspace: string, currency: string, key: string, date: string, today: string): Promise<number> {
  const later = [
    ...monthsBetween(nextMonth(date.slice(0, 7)), horizonOf(date, today)).map((m) => rollupId(workspace, currency, Grain.Month, m)),
    ...(date < endOfMonth(date) ? daysOf(addDays(date, 1), endOfMonth(date)).map((d) => rollupId(workspace, currency, Grain.Day, d)) : []),
  ];
  const allId = rollupId(workspace, currency, Grain.AllTime, ALL_TIME);
  const docs = await rollupsByIds(db, [allId, ...later]);
  return docs.reduce((s, d) => (d._id === allId ? s + (d.v[key] ?? 0) : s - (d.v[key] ?? 0)), 0);
}

/** A summary with the query's `target` when it gave one. */
export function withTarget(summary: MetricAnswer['summary'], q: MetricQuery): MetricAnswer['summary'] {
  return q.target === undefined ? summary : { ...summary, target: q.target };
}

/** A metric's summary: the value, and with a comparison its previous value and change in basis points. */
export function summaryOf(value: number, previous: number | undefined, q: MetricQuery): MetricAnswer['summary'] {
  if (previous === undefined) return withTarget({ value }, q);
  const change = changeBps(value, previous);
  return withTarget(change === undefined ? { value, previous } : { value, previous, change_bps: change }, q);
}

/**
 * Aging at `asOf` from the due-date rollups kept under `counter`'s namespace: what was open on
 * documents due on each day (`due`) or later month (`duem`) is the sum of their changes dated on or
 * before `asOf`; > 90 days is the rest of the cumulative `counter` (`ar`, `ap`).
 */
export async function agingAt(db: Connection, workspace: string, currency: string, counter: string, asOf: string, today: string): Promise<{ total: number; rows: { bucket: AgingBucket; value: number }[] }> {
  const dayIds = daysOf(addDays(asOf, -90), endOfMonth(asOf)).map((d) => rollupId(workspace, currency, Grain.DueDay, d));
  const monthIds = monthsBetween(nextMonth(asOf.slice(0, 7)), horizonOf(asOf, today)).map((m) => rollupId(workspace, currency, Grain.DueMonth, m));
  // Both reads in one turn: their rollups come in one command.
  const [total, due] = await Promise.all([cumulative(db, workspace, currency, counter, asOf, today), rollupsByIds(db, [...dayIds, ...monthIds])]);
  const openAt = (d: RollupDoc) => Object.entries(d.e ?? {}).reduce((sum, [day, v]) => (day <= asOf ? sum + v : sum), 0);
  const values: Record<AgingBucket, number> = { current: 0, '1_30': 0, '31_60': 0, '61_90': 0, over_90: 0 };
  for (const d of due) values[d.grain === Grain.DueMonth ? 'current' : agingBucket(d.period, asOf)] += openAt(d);
  values.over_90 = total - values.current - values['1_30'] - values['31_60'] - values['61_90'];
  return { total, rows: AGING_BUCKETS.map((bucket) => ({ bucket, value: values[bucket] })) };
}

/**
 * Per-party (customer or vendor) sums of `key` over a range, with the party's name as last counted:
 * every shard of the range's days and months ({@link partyShardId}), and the day and month documents
 * themselves (those written before the shards hold their parties in themselves).
 */
export async function partyTotals(db: Connection, workspace: string, currency: string, from: string, to: string, key: string): Promise<Map<string, { name: string; value: number }>> {
  const out = new Map<string, { name: string; value: number }>();
  const shards = rangePeriods(from, to).flatMap(([grain, period]) => Array.from({ length: PARTY_SHARDS[grain] ?? 0 }, (_, i) => partyShardId(workspace, currency, grain, period, i)));
  for (const d of await rollupsByIds(db, [...rangeIds(workspace, currency, from, to), ...shards], ROLLUP_PARTIES)) {
    for (const [party, counters] of Object.entries(d.c ?? {})) {
      const acc = out.get(party) ?? { name: party, value: 0 };
      acc.value += counters[key] ?? 0;
      if (d.n?.[party]) acc.name = d.n[party];
      out.set(party, acc);
    }
  }
  return out;
}
