import { createRequire } from 'node:module';
import type HolidaysClass from 'date-holidays';

/**
 * Colombia's public holidays from the `date-holidays` database (its CO rules: Ley 51 de 1983, "Ley
 * Emiliani", moving most to the following Monday; Ley 2578 de 2026 adding 9 July — Nuestra Señora
 * del Rosario de Chiquinquirá — moved the same way). Easter Sunday, which the database lists as
 * public, is left out: no law makes it a rest day (it is a Sunday anyway). 2026's list is written
 * out by hand in shared/test/holidays.test.ts.
 */
let colombia: HolidaysClass | null = null;
/**
 * The database loaded at the first question, not at import: it is every country's rules (its
 * parsed data 8.7 MB of V8 heap with its parser, measured in a bare process, mem13), and only the
 * services that schedule by holidays (projects' bookings, invoices' tax calendar, marketing's
 * send windows) ever ask — the gateway, crm, payroll, agents and inventory import this module
 * through the shared index and never call it. `require` of the package's CommonJS build: the
 * functions stay synchronous.
 */
function database(): HolidaysClass {
  if (!colombia) {
    const Holidays = createRequire(import.meta.url)('date-holidays') as typeof HolidaysClass;
    colombia = new Holidays('CO');
  }
  return colombia;
}
const byYear = new Map<number, { date: string; name: string }[]>();

/** The public holidays of a year, in order: `{date: YYYY-MM-DD, name}`. */
export function colombianHolidays(year: number): { date: string; name: string }[] {
  let list = byYear.get(year);
  if (!list) {
    list = database().getHolidays(year)
      .filter((h) => h.type === 'public' && h.rule !== 'easter')
      .map((h) => ({ date: h.date.slice(0, 10), name: h.name }));
    byYear.set(year, list);
  }
  return list;
}

/** Whether a calendar date (YYYY-MM-DD) is a Colombian public holiday. */
export function isColombianHoliday(date: string): boolean {
  return colombianHolidays(Number(date.slice(0, 4))).some((h) => h.date === date);
}
