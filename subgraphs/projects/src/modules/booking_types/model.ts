import { addPositions, AMOUNT_SCHEMA, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** Days of the week as the weekly availability names them, Monday first (ISO weekday − 1). */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

/** An interval of a day on the type's wall clock, `HH:mm` to `HH:mm`. */
export interface DayInterval { start: string; end: string }

/** A question the booking page asks. */
export interface BookingQuestion { key: string; label: string; required: boolean }

/** What a booking of a type costs before VAT, and the invoice a confirmed one makes in finance. */
export interface BookingPrice { amount: number; currency: string; tax_rate_ppm?: number; invoice?: 'draft' | 'posted' }

/** A kind of meeting people book: its length, when it can be booked, and what it asks. */
export interface BookingTypeDoc {
  _id: string;
  workspace: string;
  /** The public page's address part, unique in the workspace: `/book/<workspace slug>/<slug>`. */
  slug: string;
  /** `<workspace>|<slug>` under a unique index: two types never share an address. */
  slug_key: string;
  name: string;
  description: string | null;
  duration_min: number;
  slot_step_min: number;
  buffer_before_min: number;
  buffer_after_min: number;
  /** Minutes from now before which nothing can be booked. */
  min_notice_min: number;
  /** Days ahead that can be booked. */
  window_days: number;
  /** Bookings of this type per day at most; null: no limit. */
  daily_limit: number | null;
  weekly: Record<(typeof WEEKDAYS)[number], DayInterval[]>;
  /** Dates whose hours differ from the week's (empty intervals: closed that day). */
  overrides: { date: string; intervals: DayInterval[] }[];
  /** Colombian public holidays are closed unless the type says otherwise. */
  exclude_holidays: boolean;
  time_zone: string;
  location: string | null;
  video_url: string | null;
  questions: BookingQuestion[];
  /** A booking waits (pending) until someone confirms it. */
  confirmation_required: boolean;
  /** What a booking costs: invoiced in finance when it is confirmed. */
  price: BookingPrice | null;
  /** Who is booked: the address the invitation comes from and that gets the booker's reply. */
  host_email: string | null;
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
}

const interval = [{ _id: false, start: String, end: String }];
const schema = new Schema<BookingTypeDoc>({
  _id: { type: String, required: true },
  workspace: { type: String, required: true },
  slug: { type: String, required: true },
  slug_key: { type: String, required: true },
  name: { type: String, required: true },
  description: { type: String, default: null },
  duration_min: Number, slot_step_min: Number, buffer_before_min: Number, buffer_after_min: Number, min_notice_min: Number, window_days: Number,
  daily_limit: { type: Number, default: null },
  weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, { type: interval, default: [] }])),
  overrides: { type: [{ _id: false, date: String, intervals: interval }], default: [] },
  exclude_holidays: Boolean,
  time_zone: String,
  location: { type: String, default: null },
  video_url: { type: String, default: null },
  questions: { type: [{ _id: false, key: String, label: String, required: Boolean }], default: [] },
  confirmation_required: Boolean,
  price: { type: Schema.Types.Mixed, default: null },
  host_email: { type: String, default: null },
  status: { type: String, required: true },
  created_at: Date,
  updated_at: Date,
}, { versionKey: false });
schema.index({ slug_key: 1 }, { unique: true });
addPositions(schema);

/** The booking types collection (records source `booking_types`). */
export function bookingTypes(db: Connection): Model<BookingTypeDoc> {
  return modelOn<BookingTypeDoc>(db, 'BookingType', schema, 'booking_types');
}

const INTERVALS = { type: 'array', items: { type: 'object', additionalProperties: false, required: ['start', 'end'], properties: { start: TEXT, end: TEXT } } } as const;

/** JSON Schema of {@link bookingTypeView}. */
export const BOOKING_TYPE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'slug', 'name', 'description', 'duration_min', 'slot_step_min', 'buffer_before_min', 'buffer_after_min', 'min_notice_min', 'window_days', 'daily_limit', 'weekly', 'overrides', 'exclude_holidays', 'time_zone', 'location', 'video_url', 'questions', 'confirmation_required', 'price', 'host_email', 'status', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, slug: TEXT, name: TEXT, description: NULLABLE_TEXT,
    duration_min: { type: 'integer' }, slot_step_min: { type: 'integer' }, buffer_before_min: { type: 'integer' }, buffer_after_min: { type: 'integer' },
    min_notice_min: { type: 'integer' }, window_days: { type: 'integer' }, daily_limit: { type: ['integer', 'null'] },
    weekly: { type: 'object', additionalProperties: false, required: [...WEEKDAYS], properties: Object.fromEntries(WEEKDAYS.map((d) => [d, INTERVALS])) },
    overrides: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['date', 'intervals'], properties: { date: TEXT, intervals: INTERVALS } } },
    exclude_holidays: { type: 'boolean' }, time_zone: TEXT, location: NULLABLE_TEXT, video_url: NULLABLE_TEXT,
    questions: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['key', 'label', 'required'], properties: { key: TEXT, label: TEXT, required: { type: 'boolean' } } } },
    confirmation_required: { type: 'boolean' },
    price: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['amount', 'currency', 'tax_rate_ppm', 'invoice'],
        properties: { amount: AMOUNT_SCHEMA, currency: TEXT, tax_rate_ppm: { anyOf: [{ type: 'integer' }, { type: 'null' }] }, invoice: { enum: ['draft', 'posted'] } },
      }],
    },
    host_email: NULLABLE_TEXT, status: { enum: ['active', 'archived'] }, created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

const intervals = (l: DayInterval[]) => l.map((i) => ({ start: i.start, end: i.end }));

/** The public shape of a booking type. */
export function bookingTypeView(t: BookingTypeDoc) {
  return {
    id: t._id, slug: t.slug, name: t.name, description: t.description ?? null,
    duration_min: t.duration_min, slot_step_min: t.slot_step_min, buffer_before_min: t.buffer_before_min, buffer_after_min: t.buffer_after_min,
    min_notice_min: t.min_notice_min, window_days: t.window_days, daily_limit: t.daily_limit ?? null,
    weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, intervals(t.weekly?.[d] ?? [])])) as Record<(typeof WEEKDAYS)[number], DayInterval[]>,
    overrides: t.overrides.map((o) => ({ date: o.date, intervals: intervals(o.intervals) })),
    exclude_holidays: t.exclude_holidays, time_zone: t.time_zone, location: t.location ?? null, video_url: t.video_url ?? null,
    questions: t.questions.map((q) => ({ key: q.key, label: q.label, required: q.required })),
    confirmation_required: t.confirmation_required, price: t.price ? { amount: t.price.amount, currency: t.price.currency, tax_rate_ppm: t.price.tax_rate_ppm ?? null, invoice: t.price.invoice ?? 'draft' } : null,
    host_email: t.host_email ?? null, status: t.status, created_at: t.created_at.toISOString(), updated_at: t.updated_at.toISOString(),
  };
}

/** Whether a type matches a lower-cased search term: name, slug or description. */
export function bookingTypeMatches(t: BookingTypeDoc, needle: string): boolean {
  return containsText(t.name, needle) || containsText(t.slug, needle) || containsText(t.description, needle);
}
