/**
 * Calendar arithmetic of the metric query (specification §2.3) for the subgraphs that answer
 * window metrics: the window, its buckets, the comparison window and the change in basis points.
 * Dates are calendar dates (YYYY-MM-DD) in the workspace's local time (Colombia, UTC−5).
 */

/** The local time offset the calendar dates are in (Colombia, no daylight saving). */
export const LOCAL_OFFSET_MINUTES = -300;

/** The local calendar date of an instant. */
export function localDate(at: Date, offsetMinutes = LOCAL_OFFSET_MINUTES): string {
  return new Date(at.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 10);
}

/** The instant (ISO, UTC) a local calendar date begins. */
export function localDayStart(date: string, offsetMinutes = LOCAL_OFFSET_MINUTES): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - offsetMinutes * 60_000).toISOString();
}

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * The date `days` after `date` (negative: before). A metric read asks this thousands of times (every
 * day of every window), so a real calendar date of years 1000–9999 is computed from its numbers,
 * without parsing a date-time string; anything else goes the way it always went (an invalid date
 * throws RangeError).
 */
export function addDays(date: string, days: number): string {
  const m = CALENDAR_DATE.exec(date);
  if (m) {
    const y = Number(m[1]);
    const mo = Number(m[2]) - 1;
    const day = Number(m[3]);
    const d = new Date(0);
    d.setUTCFullYear(y, mo, day);
    if (y >= 1000 && d.getUTCFullYear() === y && d.getUTCMonth() === mo && d.getUTCDate() === day && Number.isInteger(days)) {
      d.setUTCDate(day + days);
      const ny = d.getUTCFullYear();
      const nm = d.getUTCMonth() + 1;
      const nd = d.getUTCDate();
      if (ny >= 1000 && ny <= 9999) return `${ny}-${nm < 10 ? '0' : ''}${nm}-${nd < 10 ? '0' : ''}${nd}`;
    }
  }
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Days in month `m` (1–12) of year `y`. */
function monthLength(y: number, m: number): number {
  return m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/**
 * Every day from `from` to `to` (YYYY-MM-DD), inclusive: what stepping {@link addDays} by one from
 * `from` while `<= to` gives. A metric read lists thousands of days (the rollup ids of each window
 * and bucket), so a real calendar date of years 1000–9999 is stepped on its numbers; anything else
 * steps through addDays as before.
 */
export function calendarDays(from: string, to: string): string[] {
  const out: string[] = [];
  const m = CALENDAR_DATE.exec(from);
  let y = m ? Number(m[1]) : 0;
  let mo = m ? Number(m[2]) : 0;
  let d = m ? Number(m[3]) : 0;
  if (!m || y < 1000 || mo < 1 || mo > 12 || d < 1 || d > monthLength(y, mo)) {
    for (let day = from; day <= to; day = addDays(day, 1)) out.push(day);
    return out;
  }
  for (let day = from; day <= to;) {
    out.push(day);
    if (++d > monthLength(y, mo)) {
      d = 1;
      if (++mo > 12) {
        mo = 1;
        y++;
      }
    }
    if (y > 9999) {
      // Past the years addDays computes from numbers: the rest as it would step.
      for (day = addDays(day, 1); day <= to; day = addDays(day, 1)) out.push(day);
      break;
    }
    day = `${y}-${mo < 10 ? '0' : ''}${mo}-${d < 10 ? '0' : ''}${d}`;
  }
  return out;
}

/** Whole days from `a` to `b` (YYYY-MM-DD); positive when `b` is later. */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

/** The parts of a metric query the window depends on. */
export interface WindowQuery { days?: number; from?: string; to?: string; interval?: 'day' | 'week' | 'month'; compare?: 'previous_period' | 'previous_year' }

/** One bucket of a series: first and last day, inclusive. */
export interface Bucket { period: string; period_end: string }

/** `from`/`to` when both are set (inclusive), else `days` (default 90, max 366) ending today. */
export function queryWindow(q: WindowQuery, today: string): { from: string; to: string } {
  if (q.from && q.to) return { from: q.from, to: q.to };
  const days = Math.min(Math.max(Math.trunc(q.days ?? 90), 1), 366);
  return { from: addDays(today, -(days - 1)), to: today };
}

/** The rules of §2.3 JSON Schema cannot say: `from` before `to`, at most 366 days. Answers the JSON Pointer of the offending field, or null. */
export function windowProblem(q: WindowQuery): { field: string; error: string } | null {
  if ((q.from && !q.to) || (!q.from && q.to)) return { field: q.from ? '/to' : '/from', error: '`from` and `to` go together.' };
  if (q.from && q.to && q.from > q.to) return { field: '/from', error: '`from` is after `to`.' };
  if (q.from && q.to && (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 > 365) return { field: '/to', error: 'A window is at most 366 days.' };
  return null;
}

/** The same date `years` later (29 February becomes 28 February). */
export function shiftYear(date: string, years: number): string {
  const y = Number(date.slice(0, 4)) + years;
  const md = date.slice(5);
  if (md === '02-29' && monthLength(y, 2) === 28) return `${y}-02-28`;
  return `${y}-${md}`;
}

/** The comparison window: the same length just before, or the same dates a year earlier. */
export function previousWindow(w: { from: string; to: string }, compare: 'previous_period' | 'previous_year'): { from: string; to: string } {
  if (compare === 'previous_year') return { from: shiftYear(w.from, -1), to: shiftYear(w.to, -1) };
  const length = daysBetween(w.from, w.to) + 1;
  return { from: addDays(w.from, -length), to: addDays(w.from, -1) };
}

/** The last day of the month of `date`. */
export function endOfMonth(date: string): string {
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(5, 7));
  // Years 1000–9999 from the numbers (the last day: day 0 of the next month); anything else as always.
  if (/^\d{4}-\d{2}/.test(date) && y >= 1000 && m >= 1 && m <= 12) {
    const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
    return `${date.slice(0, 7)}-${last}`;
  }
  const d = new Date(`${date.slice(0, 7)}-01T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  d.setUTCDate(0);
  return d.toISOString().slice(0, 10);
}

/** Calendar buckets over the window (days; ISO weeks Monday–Sunday; months), the first and last clipped to it. */
export function buckets(w: { from: string; to: string }, interval: 'day' | 'week' | 'month' = 'day'): Bucket[] {
  if (interval === 'day') return calendarDays(w.from, w.to).map((day) => ({ period: day, period_end: day }));
  const out: Bucket[] = [];
  let start = w.from;
  while (start <= w.to) {
    let end = interval === 'week' ? addDays(start, 6 - ((new Date(`${start}T00:00:00Z`).getUTCDay() + 6) % 7)) : endOfMonth(start);
    if (end > w.to) end = w.to;
    out.push({ period: start, period_end: end });
    start = addDays(end, 1);
  }
  return out;
}

/** Change in basis points from `previous` to `value`; undefined when there is nothing to compare to. */
export function changeBps(value: number, previous: number): number | undefined {
  if (previous === 0) return undefined;
  return Math.round(((value - previous) * 10_000) / Math.abs(previous));
}

/**
 * A count series over the window from the local dates of the things counted: one point per
 * bucket, `previous` from the comparison window when the query compares. `dates` must cover
 * both windows. Answers the series and the window totals.
 */
export function countSeries(dates: readonly string[], q: WindowQuery, today: string): { series: (Bucket & { value: number; previous?: number })[]; value: number; previous?: number } {
  const perDay = new Map<string, number>();
  for (const d of dates) perDay.set(d, (perDay.get(d) ?? 0) + 1);
  return countSeriesOfDays(perDay, q, today);
}

/** {@link countSeries} from counts already kept per local date (`perDay` must cover both windows). */
export function countSeriesOfDays(perDay: ReadonlyMap<string, number>, q: WindowQuery, today: string): { series: (Bucket & { value: number; previous?: number })[]; value: number; previous?: number } {
  const w = queryWindow(q, today);
  const count = (from: string, to: string) => {
    let n = 0;
    for (let d = from; d <= to; d = addDays(d, 1)) n += perDay.get(d) ?? 0;
    return n;
  };
  const series: (Bucket & { value: number; previous?: number })[] = buckets(w, q.interval).map((b) => ({ ...b, value: count(b.period, b.period_end) }));
  const value = count(w.from, w.to);
  if (!q.compare) return { series, value };
  const pw = previousWindow(w, q.compare);
  buckets(pw, q.interval).forEach((b, i) => {
    if (series[i]) series[i].previous = count(b.period, b.period_end);
  });
  return { series, value, previous: count(pw.from, pw.to) };
}
