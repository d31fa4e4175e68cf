import { createHash } from 'node:crypto';
import type { Logger } from '@cuadra/shared';
import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { occurrencesBetween } from '../../calendar/recurrence.ts';
import { sendCalendarMail } from '../../calendar/mail.ts';
import { wallClockText } from '../../calendar/time.ts';
import { calendarEvents, type CalendarEventDoc } from './model.ts';

/**
 * Reminders e-mailed to an event's attendees `m` minutes before each occurrence. Each event keeps
 * `next_reminder_at` (indexed: the sweep reads only events with a reminder due) and
 * `reminder_cursor` (reminders due up to it were handled). Each reminder of each occurrence is
 * claimed by a unique `_id` in `calendar_reminders` before it is sent, and marked sent once the SMTP
 * server accepted it: two sweeps at once send it once. A crash between the server's acceptance and
 * the mark leaves the claim `sending`; the sweep sends such a claim again after
 * {@link RESEND_AFTER_MS} if its occurrence has not begun — at least once, with the same
 * Message-ID, so a duplicate is possible only in that window, never a reminder lost to a crash.
 */

/** A claim still `sending` after this long is taken to be a crash's and sent again. */
export const RESEND_AFTER_MS = 2 * 60_000;
/** How far ahead the next reminder is looked for at once; past it the sweep looks again. */
const LOOKAHEAD_MS = 400 * 86_400_000;
/** Events (and stale claims) one sweep handles at most; the rest wait for the next. */
const BATCH = 100;

/** One reminder of one occurrence, claimed before it is sent. */
export interface ReminderDoc {
  /** `<event>|<occurrence start ISO>|<minutes>`. */
  _id: string;
  workspace: string;
  event_id: string;
  occurrence_start: Date;
  minutes: number;
  /** `skipped`: a send a crash interrupted whose occurrence had begun (or whose event was cancelled) by the retry. */
  status: 'sending' | 'sent' | 'skipped';
  to: string[];
  claimed_at: Date;
  sent_at: Date | null;
}

const schema = new Schema<ReminderDoc>({
  _id: String, workspace: String, event_id: String, occurrence_start: Date, minutes: Number, status: String, to: [String], claimed_at: Date,
  sent_at: { type: Date, default: null },
}, { versionKey: false });
schema.index({ status: 1, claimed_at: 1 });

/** The reminder claims collection. */
export function calendarReminders(db: Connection): Model<ReminderDoc> {
  return modelOn<ReminderDoc>(db, 'CalendarReminder', schema, 'calendar_reminders');
}

/** The reminders of an event due in (after, until]: each occurrence not yet begun at `notBefore`, with each of its reminder offsets. */
function dueBetween(e: CalendarEventDoc, after: Date, until: Date, notBefore: Date): { start: Date; minutes: number; due: Date }[] {
  if (e.reminders.length === 0 || e.status === 'cancelled' || e.status === 'done') return [];
  const longest = Math.max(...e.reminders) * 60_000;
  const out: { start: Date; minutes: number; due: Date }[] = [];
  for (const o of occurrencesBetween(e, after, new Date(until.getTime() + longest + 1))) {
    const status = o.override?.status ?? e.status;
    if (status === 'cancelled' || status === 'done' || o.start <= notBefore) continue;
    for (const minutes of e.reminders) {
      const due = new Date(o.start.getTime() - minutes * 60_000);
      if (due > after && due <= until) out.push({ start: o.start, minutes, due });
    }
  }
  return out.sort((a, b) => a.due.getTime() - b.due.getTime());
}

/**
 * When the event's next reminder after `after` is due; null when none will be. A series whose next
 * reminder lies beyond the look-ahead answers the look-ahead's end, where the sweep looks again.
 */
export function nextReminderAt(e: CalendarEventDoc, after: Date): Date | null {
  if (e.reminders.length === 0 || e.status === 'cancelled' || e.status === 'done') return null;
  const horizon = new Date(after.getTime() + LOOKAHEAD_MS);
  const first = dueBetween(e, after, horizon, after)[0];
  if (first) return first.due;
  return e.rrule && (!e.until || e.until > horizon) ? horizon : null;
}

/** The event with its reminder schedule set from `cursor` (creation, or a change keeping what was already handled). */
export function scheduled(e: CalendarEventDoc, cursor: Date): CalendarEventDoc {
  return { ...e, reminder_cursor: cursor, next_reminder_at: nextReminderAt(e, cursor) };
}

async function send(r: ReminderDoc, e: CalendarEventDoc, env: NodeJS.ProcessEnv): Promise<boolean> {
  const when = wallClockText(r.occurrence_start, e.time_zone);
  return sendCalendarMail({
    to: r.to,
    subject: `Recordatorio: ${e.title} — ${when}`,
    text: `Recordatorio: "${e.title}" empieza el ${when}.${e.location ? `\nLugar: ${e.location}` : ''}\n`,
    // One Message-ID per reminder of an occurrence: a resend after a crash is recognisably the same message.
    messageId: `<${createHash('sha256').update(r._id).digest('hex').slice(0, 32)}@reminders.cuadra>`,
  }, env);
}

/**
 * One pass of the reminder sweep at `now`: reminders due on events whose `next_reminder_at` has come
 * (each claimed, sent, marked), claims a crash left `sending` sent again, and each event's cursor
 * moved to `now`. Answers how many messages were handed to the SMTP server.
 */
export async function sendDueReminders(db: Connection, now: Date, log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!env.SMTP_URL) return 0;
  let sent = 0;
  const due = await calendarEvents(db).find({ next_reminder_at: { $ne: null, $lte: now } }).limit(BATCH).lean<CalendarEventDoc[]>();
  for (const e of due) {
    const cursor = e.reminder_cursor ?? e.created_at;
    const to = [...new Set(e.attendees.map((a) => a.email))];
    for (const d of to.length ? dueBetween(e, cursor, now, now) : []) {
      const claim: ReminderDoc = {
        _id: `${e._id}|${d.start.toISOString()}|${d.minutes}`, workspace: e.workspace, event_id: e._id, occurrence_start: d.start, minutes: d.minutes,
        status: 'sending', to, claimed_at: now, sent_at: null,
      };
      try {
        await calendarReminders(db).create(claim);
      } catch (err) {
        if ((err as { code?: number }).code === 11000) continue; // claimed by another sweep, or handled before a change of the event
        throw err;
      }
      if (await send(claim, e, env)) sent++;
      await calendarReminders(db).updateOne({ _id: claim._id }, { $set: { status: 'sent', sent_at: new Date() } });
    }
    // The cursor moves only if the event did not change meanwhile (a change sets its own schedule).
    await calendarEvents(db).updateOne({ _id: e._id, rev: e.rev }, { $set: { reminder_cursor: now, next_reminder_at: nextReminderAt(e, now) } });
  }
  const stale = await calendarReminders(db).find({ status: 'sending', claimed_at: { $lte: new Date(now.getTime() - RESEND_AFTER_MS) } }).limit(BATCH).lean<ReminderDoc[]>();
  for (const r of stale) {
    const e = await calendarEvents(db).findOne({ _id: r.event_id, workspace: r.workspace }).lean<CalendarEventDoc>();
    const live = e && e.status !== 'cancelled' && r.occurrence_start > now;
    // Taken back by one conditional write, so two sweeps never both resend it.
    const retaken = await calendarReminders(db).updateOne({ _id: r._id, status: 'sending', claimed_at: r.claimed_at }, { $set: live ? { claimed_at: now } : { status: 'skipped' } });
    if (!live || retaken.modifiedCount !== 1) continue;
    if (await send(r, e, env)) sent++;
    await calendarReminders(db).updateOne({ _id: r._id }, { $set: { status: 'sent', sent_at: new Date() } });
    log.info({ reminder: r._id }, 'reminder sent again after an interrupted send');
  }
  return sent;
}
