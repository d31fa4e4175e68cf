import { colombianHolidays as sharedHolidays } from '@cuadra/shared';

/*
 * When a commercial message may reach a person in Colombia: Ley 2300 de 2023, art. 3 — Monday to
 * Friday 7:00 to 19:00 and Saturday 8:00 to 15:00, never on Sundays or public holidays — in Bogotá's
 * time (UTC−5 all year: Colombia keeps no daylight saving). Campaigns are scheduled into these
 * windows and the sender checks again before every message.
 */

/** Bogotá's offset from UTC, in minutes. */
const BOGOTA_OFFSET_MINUTES = -300;

const holidayCache = new Map<number, Set<string>>();

/**
 * The Colombian public holidays of a year, as `YYYY-MM-DD` (Bogotá's calendar): the shared list
 * (`@cuadra/shared` holidays.ts — Ley 51 de 1983 and, from 2026, the Virgen de Chiquinquirá of
 * Ley 2578 de 2026, art. 6; Easter Sunday left out), as a set.
 */
export function colombianHolidays(year: number): Set<string> {
  let days = holidayCache.get(year);
  if (!days) {
    days = new Set(sharedHolidays(year).map((h) => h.date));
    holidayCache.set(year, days);
  }
  return days;
}

/** Bogotá's wall clock at an instant: the date, the weekday (0 Sunday) and minutes since midnight. */
export function bogotaClock(at: Date): { date: string; weekday: number; minutes: number } {
  const local = new Date(at.getTime() + BOGOTA_OFFSET_MINUTES * 60_000);
  return { date: local.toISOString().slice(0, 10), weekday: local.getUTCDay(), minutes: local.getUTCHours() * 60 + local.getUTCMinutes() };
}

/** The window of a Bogotá day, in minutes since midnight [open, close), or null when none (Sunday, holiday). */
export function windowOfDay(date: string): { open: number; close: number } | null {
  const weekday = new Date(`${date}T12:00:00Z`).getUTCDay();
  if (weekday === 0 || colombianHolidays(Number(date.slice(0, 4))).has(date)) return null;
  return weekday === 6 ? { open: 8 * 60, close: 15 * 60 } : { open: 7 * 60, close: 19 * 60 };
}

/** The instant of a Bogotá wall-clock time. */
function bogotaInstant(date: string, minutes: number): Date {
  return new Date(Date.parse(`${date}T00:00:00Z`) + (minutes - BOGOTA_OFFSET_MINUTES) * 60_000);
}

/** Whether a commercial message may be sent at this instant. */
export function inSendWindow(at: Date): boolean {
  const { date, minutes } = bogotaClock(at);
  const w = windowOfDay(date);
  return !!w && minutes >= w.open && minutes < w.close;
}

/**
 * The first instant at or after `at` inside a window, and the end of that window. A time inside a
 * window is answered as it is; otherwise the next opening (a Sunday 10:00 → Monday 7:00; Saturday
 * 16:00 → Monday 7:00, or Tuesday when Monday is a holiday).
 */
export function nextSendWindow(at: Date): { start: Date; end: Date } {
  const clock = bogotaClock(at);
  let date = clock.date;
  for (let i = 0; i < 30; i++) {
    const w = windowOfDay(date);
    if (w) {
      const startMinutes = i === 0 ? Math.max(w.open, clock.minutes) : w.open;
      if (startMinutes < w.close) {
        const start = i === 0 && clock.minutes >= w.open ? at : bogotaInstant(date, startMinutes);
        return { start, end: bogotaInstant(date, w.close) };
      }
    }
    date = new Date(Date.parse(`${date}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  }
  throw new Error('No send window in 30 days.');
}
