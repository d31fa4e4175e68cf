import type { Principal } from './principal.ts';

/**
 * A workspace's place in the world, as every service needs it: its country (ISO 3166-1 alpha-2,
 * chosen when the workspace is opened and never changed) decides the tax regime (Colombia → DIAN;
 * elsewhere → EN 16931), and its time zone decides what "today" is for the dates of its documents
 * (CONTRACT §10: Bogotá's calendar for Colombian workspaces, the workspace's time zone in general).
 *
 * The gateway states the country in its assertion (Principal.country); a principal without one
 * (a service assertion, a principal stored before the claim existed) is read as Colombian, which is
 * what every workspace was before countries mattered.
 */

/** The country of a principal that states none. */
export const DEFAULT_COUNTRY = 'CO';

/**
 * The time zone of a country's workspaces (IANA). Countries with several zones get the one of
 * their capital, and a country not listed gets UTC: a workspace there reads its dates in UTC until
 * it can choose its own zone.
 */
export const COUNTRY_TIME_ZONE: Readonly<Record<string, string>> = {
  CO: 'America/Bogota', MX: 'America/Mexico_City', PE: 'America/Lima', CL: 'America/Santiago', AR: 'America/Argentina/Buenos_Aires',
  EC: 'America/Guayaquil', US: 'America/New_York', ES: 'Europe/Madrid', DE: 'Europe/Berlin', FR: 'Europe/Paris', NL: 'Europe/Amsterdam',
  IT: 'Europe/Rome', PT: 'Europe/Lisbon', BE: 'Europe/Brussels', AT: 'Europe/Vienna', IE: 'Europe/Dublin', LU: 'Europe/Luxembourg',
  FI: 'Europe/Helsinki', SE: 'Europe/Stockholm', DK: 'Europe/Copenhagen', NO: 'Europe/Oslo', PL: 'Europe/Warsaw', GR: 'Europe/Athens',
  GB: 'Europe/London', CH: 'Europe/Zurich', NZ: 'Pacific/Auckland', AU: 'Australia/Sydney', JP: 'Asia/Tokyo', SG: 'Asia/Singapore',
};

/** A workspace's country and time zone. */
export interface WorkspaceLocale {
  country: string;
  timeZone: string;
}

/** The time zone of a country's workspaces (UTC when the country is not listed). */
export function countryTimeZone(country: string): string {
  return COUNTRY_TIME_ZONE[country] ?? 'UTC';
}

/** The country and time zone of the workspace a principal acts in. */
export function workspaceLocale(principal: Pick<Principal, 'country'>): WorkspaceLocale {
  const country = principal.country && /^[A-Z]{2}$/.test(principal.country) ? principal.country : DEFAULT_COUNTRY;
  return { country, timeZone: countryTimeZone(country) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar date (YYYY-MM-DD) of an instant in a time zone, daylight saving included. */
export function dateInZone(at: Date, timeZone: string): string {
  let f = formatters.get(timeZone);
  if (!f) {
    // en-CA writes dates as YYYY-MM-DD.
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f.format(at);
}

/** "Today" for a workspace: the calendar date of `now` in its time zone. */
export function workspaceToday(principal: Pick<Principal, 'country'>, now: Date): string {
  return dateInZone(now, workspaceLocale(principal).timeZone);
}
