import { CuadraError, DATE_SCHEMA } from '@cuadra/shared';
import { parseRrule, rangeInstants, seriesEnd, type SeriesShape } from '../../calendar/recurrence.ts';
import { checkZone, LOCAL_TIME_PATTERN, localToInstant, WORKSPACE_ZONE, ZONE_SCHEMA } from '../../calendar/time.ts';
import { EVENT_KINDS, EVENT_STATUSES, type Attendee } from './model.ts';

/** A wall-clock time (`YYYY-MM-DDTHH:mm`) or, for all-day events, a date. */
export const WHEN_SCHEMA = { anyOf: [{ type: 'string', pattern: LOCAL_TIME_PATTERN }, DATE_SCHEMA] } as const;

/** The longest an event may last (a longer stretch is several events, or a series). */
export const MAX_EVENT_DAYS = 62;

export const ATTENDEE_INPUT = {
  type: 'object', additionalProperties: false, required: ['email'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 254 },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    party_id: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

/** The input fields of an event, shared by create and update (and bookings, which make events). */
export const EVENT_FIELDS = {
  title: { type: 'string', minLength: 1, maxLength: 300 },
  description: { type: 'string', maxLength: 10000 },
  location: { type: 'string', maxLength: 500 },
  kind: { enum: [...EVENT_KINDS] },
  status: { enum: ['confirmed', 'tentative'] },
  all_day: { type: 'boolean' },
  time_zone: ZONE_SCHEMA,
  start: WHEN_SCHEMA,
  end: WHEN_SCHEMA,
  rrule: { type: 'string', minLength: 6, maxLength: 500 },
  exdates: { type: 'array', maxItems: 500, items: WHEN_SCHEMA },
  attendees: { type: 'array', maxItems: 100, items: ATTENDEE_INPUT },
  reminders: { type: 'array', maxItems: 5, uniqueItems: true, items: { type: 'integer', minimum: 0, maximum: 40320 } },
} as const;

/** What an event's when-fields become once checked. */
export interface EventWhen extends SeriesShape {
  start: Date;
  end: Date;
  until: Date | null;
}

/**
 * Checks and resolves start, end, zone and recurrence: all-day events take dates (end inclusive,
 * default the start), timed ones wall-clock times of their zone (default the workspace's) that
 * exist there, ending after they start, lasting at most {@link MAX_EVENT_DAYS} days; an RRULE is
 * RFC 5545's, its EXDATEs in the start's form.
 */
export function resolveWhen(input: { all_day?: boolean; time_zone?: string; start: string; end?: string; rrule?: string | null; exdates?: string[] }, overrides: SeriesShape['overrides'] = []): EventWhen {
  const allDay = input.all_day ?? false;
  const zone = input.time_zone ?? WORKSPACE_ZONE;
  checkZone(zone, '/time_zone');
  const isDate = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s);
  if (allDay !== isDate(input.start)) throw new CuadraError('invalid_input', allDay ? 'An all-day event starts on a date (YYYY-MM-DD).' : 'A timed event starts at a local time (YYYY-MM-DDTHH:mm); set all_day for a date.', { field: '/start' });
  const endLocal = input.end ?? (allDay ? input.start : undefined);
  if (endLocal === undefined) throw new CuadraError('invalid_input', 'A timed event needs its end (YYYY-MM-DDTHH:mm).', { field: '/end' });
  if (allDay !== isDate(endLocal)) throw new CuadraError('invalid_input', allDay ? 'An all-day event ends on a date.' : 'A timed event ends at a local time (YYYY-MM-DDTHH:mm).', { field: '/end' });
  if (!allDay) {
    localToInstant(input.start, zone, '/start');
    localToInstant(endLocal, zone, '/end');
  }
  const { start, end } = rangeInstants(allDay, input.start, endLocal, zone);
  if (allDay ? endLocal < input.start : end <= start) throw new CuadraError('invalid_input', 'The event ends before it starts.', { field: '/end' });
  if (end.getTime() - start.getTime() > MAX_EVENT_DAYS * 86_400_000 + 3_600_000) throw new CuadraError('invalid_input', `An event lasts at most ${MAX_EVENT_DAYS} days.`, { field: '/end' });
  const rrule = input.rrule ? parseRrule(input.rrule, '/rrule').toString() : null;
  const exdates = input.exdates ?? [];
  if (exdates.length && !rrule) throw new CuadraError('invalid_input', 'Only a repeating event (rrule) has exceptions.', { field: '/exdates' });
  exdates.forEach((d, i) => {
    if (isDate(d) !== allDay) throw new CuadraError('invalid_input', `An exception names an occurrence as its start does (${allDay ? 'YYYY-MM-DD' : 'YYYY-MM-DDTHH:mm'}).`, { field: `/exdates/${i}` });
  });
  const shape: SeriesShape = { all_day: allDay, time_zone: zone, start_local: input.start, end_local: endLocal, rrule, exdates: [...new Set(exdates)], overrides };
  return { ...shape, start, end, until: seriesEnd(shape) };
}

/** Attendees as stored: e-mail lower-cased, each once. */
export function attendeesOf(input: { email: string; name?: string; party_id?: string }[] | undefined): Attendee[] {
  const seen = new Set<string>();
  const out: Attendee[] = [];
  for (const a of input ?? []) {
    const email = a.email.toLowerCase();
    if (seen.has(email)) continue;
    seen.add(email);
    out.push({ email, name: a.name ?? null, party_id: a.party_id ?? null });
  }
  return out;
}

export { EVENT_STATUSES };
