import { addPositions, DATE_SCHEMA, DATE_TIME_SCHEMA, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

export const ACTIVITY_KINDS = ['call', 'meeting', 'task', 'note', 'email'] as const;

/** A call, meeting, task, note or e-mail about a deal or a party. */
export interface ActivityDoc {
  _id: string;
  workspace: string;
  kind: (typeof ACTIVITY_KINDS)[number];
  subject: string;
  notes: string | null;
  deal_id: string | null;
  party_id: string | null;
  owner_id: string | null;
  /** Local date it is due (null: no date; a note has none). */
  due_date: string | null;
  /** HH:MM local, with a due date. */
  due_time: string | null;
  status: 'open' | 'done';
  done_at: Date | null;
  /** The booking this activity follows (activities/bookings.ts): its id, and the rev and status it shows. */
  booking?: { id: string; rev: number; status: string } | null;
  created_at: Date;
  updated_at: Date;
}

const schema = new Schema<ActivityDoc>(
  {
    _id: { type: String, required: true }, workspace: { type: String, required: true }, kind: { type: String, required: true }, subject: { type: String, required: true },
    notes: { type: String, default: null }, deal_id: { type: String, default: null }, party_id: { type: String, default: null }, owner_id: { type: String, default: null },
    due_date: { type: String, default: null }, due_time: { type: String, default: null }, status: { type: String, required: true }, done_at: { type: Date, default: null },
    booking: { type: Schema.Types.Mixed, default: null },
    created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(schema);

export function activities(db: Connection): Model<ActivityDoc> {
  return modelOn<ActivityDoc>(db, 'CrmActivity', schema, 'crm_activities');
}

/**
 * Open activities by due day (`_id` `<workspace>|<date>`, `ids`): the agenda reads the window's
 * days by `_id` instead of scanning (INFRA.md: ranges scan here). An id is added before its
 * activity is written open and pulled after it is done, so a crash can only leave an extra id,
 * which the lane drops when the activity is not open and due that day.
 */
export const ACTIVITY_DUE = 'crm_activity_due';

export function dueId(workspace: string, date: string): string {
  return `${workspace}|${date}`;
}

export const ACTIVITY_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'kind', 'subject', 'notes', 'deal_id', 'party_id', 'owner_id', 'due_date', 'due_time', 'status', 'done_at', 'booking_id', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, kind: { enum: [...ACTIVITY_KINDS] }, subject: TEXT, notes: NULLABLE_TEXT, deal_id: NULLABLE_TEXT, party_id: NULLABLE_TEXT, owner_id: NULLABLE_TEXT,
    booking_id: { ...NULLABLE_TEXT, description: 'The booking (projects) this activity follows: made, moved and closed with it.' },
    due_date: { anyOf: [DATE_SCHEMA, { type: 'null' }] }, due_time: NULLABLE_TEXT, status: { enum: ['open', 'done'] }, done_at: { anyOf: [DATE_TIME_SCHEMA, { type: 'null' }] },
    created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

export function activityView(a: ActivityDoc) {
  return {
    id: a._id, kind: a.kind, subject: a.subject, notes: a.notes, deal_id: a.deal_id, party_id: a.party_id, owner_id: a.owner_id, due_date: a.due_date, due_time: a.due_time,
    status: a.status, done_at: a.done_at ? new Date(a.done_at).toISOString() : null, booking_id: a.booking?.id ?? null, created_at: new Date(a.created_at).toISOString(), updated_at: new Date(a.updated_at).toISOString(),
  };
}
