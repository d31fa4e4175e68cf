import { addDays, daysBetween } from '../money.ts';

/** A metric query (specification §2.3), the parts receivables metrics read. */
export interface MetricQuery {
  metric: string;
  days?: number;
  from?: string;
  to?: string;
  as_of?: string;
  compare?: 'previous_period' | 'previous_year';
  interval?: 'day' | 'week' | 'month';
  limit?: number;
  target?: number;
}

/** One bucket of a series: first and last day, inclusive. */
export interface Bucket {
  period: string;
  period_end: string;
}

/**
 * The window a query covers: `from`/`to` when both are set (inclusive), else the `days`
 * (default 90, max 366) ending today.
 */
export function queryWindow(q: MetricQuery, today: string): { from: string; to: string } {
  if (q.from && q.to) return { from: q.from, to: q.to };
  const days = Math.min(Math.max(Math.trunc(q.days ?? 90), 1), 366);
  return { from: addDays(today, -(days - 1)), to: today };
}

/** The position date of ar_aging: `as_of`, else the window end when from/to are set, else today. */
export function positionDate(q: MetricQuery, today: string): string {
  return q.as_of ?? (q.from && q.to ? q.to : today);
}

/** The comparison window: the same length just before, or the same dates a year earlier. */
export function previousWindow(w: { from: string; to: string }, compare: 'previous_period' | 'previous_year'): { from: string; to: string } {
  if (compare === 'previous_year') return { from: shiftYear(w.from, -1), to: shiftYear(w.to, -1) };
  const length = daysBetween(w.from, w.to) + 1;
  return { from: addDays(w.from, -length), to: addDays(w.from, -1) };
}

/** The same date `years` later (29 February becomes 28 February). */
export function shiftYear(date: string, years: number): string {
  const y = Number(date.slice(0, 4)) + years;
  const md = date.slice(5);
  if (md === '02-29' && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return `${y}-02-28`;
  return `${y}-${md}`;
}

function mondayOf(date: string): string {
  const dow = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  return addDays(date, -dow);
}

/** The last day of the month of `date`. */
export function endOfMonth(date: string): string {
  const d = new Date(`${date.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  d.setUTCDate(0);
  return d.toISOString().slice(0, 10);
}

/**
 * Calendar buckets over the window: days; ISO weeks (Monday–Sunday); months. The first and
 * last bucket are clipped to the window, so values always add up to the window's total.
 */
export function buckets(w: { from: string; to: string }, interval: 'day' | 'week' | 'month' = 'day'): Bucket[] {
  const out: Bucket[] = [];
  let start = w.from;
  while (start <= w.to) {
    let end = interval === 'day' ? start : interval === 'week' ? addDays(mondayOf(start), 6) : endOfMonth(start);
    if (end > w.to) end = w.to;
    out.push({ period: start, period_end: end });
    start = addDays(end, 1);
  }
  return out;
}

/** Splits a day range into leading days, whole months and trailing days (for monthly rollups). */
export function splitByMonths(from: string, to: string): { days: { from: string; to: string }[]; months: { from: string; to: string } | null } {
  if (from > to) return { days: [], months: null };
  const firstWhole = from.endsWith('-01') ? from.slice(0, 7) : nextMonth(from.slice(0, 7));
  const lastWhole = endOfMonth(to) === to ? to.slice(0, 7) : prevMonth(to.slice(0, 7));
  if (firstWhole > lastWhole) return { days: [{ from, to }], months: null };
  const days: { from: string; to: string }[] = [];
  if (from < `${firstWhole}-01`) days.push({ from, to: addDays(`${firstWhole}-01`, -1) });
  const afterLast = addDays(endOfMonth(`${lastWhole}-01`), 1);
  if (afterLast <= to) days.push({ from: afterLast, to });
  return { days, months: { from: firstWhole, to: lastWhole } };
}

/** The month after `ym` (YYYY-MM). */
export function nextMonth(ym: string): string {
  const [y, m] = ym.split('-').map(Number);
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

function prevMonth(ym: string): string {
  const [y, m] = ym.split('-').map(Number);
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/** Change in basis points from `previous` to `value`; undefined when there is nothing to compare to. */
export function changeBps(value: number, previous: number): number | undefined {
  if (previous === 0) return undefined;
  return Math.round(((value - previous) * 10_000) / Math.abs(previous));
}

/** Every month from `from` to `to` (YYYY-MM), inclusive. */
export function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let m = from; m <= to; m = nextMonth(m)) out.push(m);
  return out;
}

/** Every day from `from` to `to` (YYYY-MM-DD), inclusive. */
export function daysOf(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}
