import { CuadraError, DATE_SCHEMA, MONEY_LIMIT } from '@cuadra/shared';
import { checkZone, WORKSPACE_ZONE, ZONE_SCHEMA } from '../../calendar/time.ts';
import { WEEKDAYS, type BookingTypeDoc, type DayInterval } from './model.ts';

/** Every time of a booking (lengths, steps, buffers, hours) is a whole number of these minutes: the grain of the slot claims. */
export const GRAIN_MIN = 5;

const MINUTES = (max: number) => ({ type: 'integer', minimum: 0, maximum: max, multipleOf: GRAIN_MIN }) as const;
const CLOCK = { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5][05]$|^24:00$' } as const;
const INTERVALS = { type: 'array', maxItems: 12, items: { type: 'object', additionalProperties: false, required: ['start', 'end'], properties: { start: CLOCK, end: CLOCK } } } as const;

/** The input fields of a booking type (create takes them; update takes any of them). */
export const BOOKING_TYPE_FIELDS = {
  slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', minLength: 1, maxLength: 60 },
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 5000 },
  duration_min: { type: 'integer', minimum: GRAIN_MIN, maximum: 720, multipleOf: GRAIN_MIN },
  slot_step_min: { type: 'integer', minimum: GRAIN_MIN, maximum: 720, multipleOf: GRAIN_MIN },
  buffer_before_min: MINUTES(240),
  buffer_after_min: MINUTES(240),
  min_notice_min: { type: 'integer', minimum: 0, maximum: 43200 },
  window_days: { type: 'integer', minimum: 1, maximum: 365 },
  daily_limit: { anyOf: [{ type: 'integer', minimum: 1, maximum: 100 }, { type: 'null' }] },
  weekly: { type: 'object', additionalProperties: false, properties: Object.fromEntries(WEEKDAYS.map((d) => [d, INTERVALS])) },
  overrides: { type: 'array', maxItems: 366, items: { type: 'object', additionalProperties: false, required: ['date', 'intervals'], properties: { date: DATE_SCHEMA, intervals: INTERVALS } } },
  exclude_holidays: { type: 'boolean' },
  time_zone: ZONE_SCHEMA,
  location: { type: 'string', maxLength: 500 },
  video_url: { type: 'string', format: 'uri', pattern: '^https://', maxLength: 500 },
  questions: {
    type: 'array', maxItems: 10,
    items: { type: 'object', additionalProperties: false, required: ['key', 'label'], properties: { key: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$' }, label: { type: 'string', minLength: 1, maxLength: 200 }, required: { type: 'boolean' } } },
  },
  confirmation_required: { type: 'boolean' },
  price: {
    anyOf: [{ type: 'null' }, {
      type: 'object', additionalProperties: false, required: ['amount', 'currency'],
      description: 'What a booking costs before VAT: finance invoices it to the booker (the CRM party of their e-mail) once the booking is confirmed, VAT added as finance computes it.',
      properties: {
        amount: { type: 'integer', minimum: 1, maximum: MONEY_LIMIT }, currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        tax_rate_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'VAT in parts per million (190000: 19 %). Default: finance\'s for the workspace (Colombia 19 %).' },
        invoice: { enum: ['draft', 'posted'], description: 'The invoice a confirmed booking makes: a draft to review (default) or posted at once.' },
      },
    }],
  },
  host_email: { type: 'string', format: 'email', maxLength: 254 },
} as const;

/** Minutes since midnight of `HH:mm`. */
export function minutesOf(clock: string): number {
  return Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
}

function checkIntervals(list: DayInterval[], pointer: string): DayInterval[] {
  const sorted = [...list].sort((a, b) => minutesOf(a.start) - minutesOf(b.start));
  sorted.forEach((iv, i) => {
    const at = list.indexOf(iv);
    if (minutesOf(iv.end) <= minutesOf(iv.start)) throw new CuadraError('invalid_input', `The hours ${iv.start}–${iv.end} end before they start.`, { field: `${pointer}/${at}/end` });
    if (i > 0 && minutesOf(iv.start) < minutesOf(sorted[i - 1].end)) throw new CuadraError('invalid_input', `The hours ${iv.start}–${iv.end} overlap ${sorted[i - 1].start}–${sorted[i - 1].end}.`, { field: `${pointer}/${at}/start` });
  });
  return sorted.map((iv) => ({ start: iv.start, end: iv.end }));
}

type Fields = Partial<{ [K in keyof typeof BOOKING_TYPE_FIELDS]: any }>;

/** A type's fields laid over `base` (defaults for a new type), checked beyond what the schema says. */
export function resolveBookingType(input: Fields, base: Omit<BookingTypeDoc, '_id' | 'workspace' | 'slug_key' | 'created_at' | 'updated_at' | 'status'>): typeof base {
  const t = { ...base };
  for (const [k, v] of Object.entries(input)) if (v !== undefined && k in BOOKING_TYPE_FIELDS) (t as Record<string, unknown>)[k] = v;
  if (input.name !== undefined) t.name = String(input.name).trim();
  checkZone(t.time_zone, '/time_zone');
  if (input.weekly) t.weekly = Object.fromEntries(WEEKDAYS.map((d) => [d, checkIntervals(input.weekly[d] ?? [], `/weekly/${d}`)])) as BookingTypeDoc['weekly'];
  if (input.overrides) {
    const seen = new Set<string>();
    t.overrides = (input.overrides as { date: string; intervals: DayInterval[] }[]).map((o, i) => {
      if (seen.has(o.date)) throw new CuadraError('invalid_input', `The date ${o.date} is overridden twice.`, { field: `/overrides/${i}/date` });
      seen.add(o.date);
      return { date: o.date, intervals: checkIntervals(o.intervals, `/overrides/${i}/intervals`) };
    });
  }
  if (input.questions) {
    const keys = new Set<string>();
    t.questions = (input.questions as { key: string; label: string; required?: boolean }[]).map((q, i) => {
      if (keys.has(q.key)) throw new CuadraError('invalid_input', `The question ${q.key} is asked twice.`, { field: `/questions/${i}/key` });
      keys.add(q.key);
      return { key: q.key, label: q.label, required: q.required ?? false };
    });
  }
  if (input.host_email) t.host_email = String(input.host_email).toLowerCase();
  return t;
}

/** What a new type is when the input leaves a field out: 30-minute meetings, Monday to Friday 9–12 and 14–17 Bogotá, holidays closed. */
export function newTypeDefaults(duration: number): Omit<BookingTypeDoc, '_id' | 'workspace' | 'slug_key' | 'created_at' | 'updated_at' | 'status'> {
  const day = [{ start: '09:00', end: '12:00' }, { start: '14:00', end: '17:00' }];
  return {
    slug: '', name: '', description: null, duration_min: duration, slot_step_min: duration, buffer_before_min: 0, buffer_after_min: 0,
    min_notice_min: 240, window_days: 60, daily_limit: null,
    weekly: { mon: day, tue: day, wed: day, thu: day, fri: day, sat: [], sun: [] },
    overrides: [], exclude_holidays: true, time_zone: WORKSPACE_ZONE, location: null, video_url: null, questions: [],
    confirmation_required: false, price: null, host_email: null,
  };
}
