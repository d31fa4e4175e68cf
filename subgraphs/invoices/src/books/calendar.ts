import { addDays, calendarDays, endOfMonth, type MetricQuery } from '@cuadra/shared';

// The window, its buckets, the comparison window and the change are the shared ones.
export { buckets, changeBps, endOfMonth, previousWindow, queryWindow, shiftYear } from '@cuadra/shared';
export type { Bucket } from '@cuadra/shared';

/** The position date of ar_aging: `as_of`, else the window end when from/to are set, else today. */
export function positionDate(q: MetricQuery, today: string): string {
  return q.as_of ?? (q.from && q.to ? q.to : today);
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

/** Every month from `from` to `to` (YYYY-MM), inclusive. */
export function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let m = from; m <= to; m = nextMonth(m)) out.push(m);
  return out;
}

/** Every day from `from` to `to` (YYYY-MM-DD), inclusive. */
export function daysOf(from: string, to: string): string[] {
  return calendarDays(from, to);
}
