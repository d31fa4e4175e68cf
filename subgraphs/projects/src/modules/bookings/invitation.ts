import ICAL from 'ical.js';
import type { BookingDoc } from './model.ts';
import type { BookingTypeDoc } from '../booking_types/model.ts';
import { sendCalendarMail } from '../../calendar/mail.ts';

/**
 * The booking's iCalendar invitation (RFC 5545 / iTIP RFC 5546 `METHOD:REQUEST`, or `CANCEL`), built
 * with ical.js: one VEVENT with the booking's id as UID, UTC start and end, organizer and attendee,
 * and a SEQUENCE raised by every change so a calendar client replaces what it imported before.
 */
export function invitationIcs(b: BookingDoc, type: Pick<BookingTypeDoc, 'name' | 'location' | 'video_url' | 'host_email'>, method: 'REQUEST' | 'CANCEL', now: Date): string {
  const cal = new ICAL.Component(['vcalendar', [], []]);
  cal.updatePropertyWithValue('prodid', '-//Cuadra//Bookings//ES');
  cal.updatePropertyWithValue('version', '2.0');
  cal.updatePropertyWithValue('calscale', 'GREGORIAN');
  cal.updatePropertyWithValue('method', method);
  const ev = new ICAL.Component('vevent');
  const utc = (d: Date) => ICAL.Time.fromJSDate(d, true);
  ev.updatePropertyWithValue('uid', `${b._id}@cuadra`);
  ev.updatePropertyWithValue('dtstamp', utc(now));
  ev.updatePropertyWithValue('dtstart', utc(b.start));
  ev.updatePropertyWithValue('dtend', utc(b.end));
  ev.updatePropertyWithValue('sequence', b.rev);
  ev.updatePropertyWithValue('summary', `${type.name} — ${b.name}`);
  ev.updatePropertyWithValue('status', method === 'CANCEL' ? 'CANCELLED' : b.status === 'confirmed' ? 'CONFIRMED' : 'TENTATIVE');
  const where = [type.location, type.video_url].filter(Boolean).join(' · ');
  if (where) ev.updatePropertyWithValue('location', where);
  if (type.video_url) ev.updatePropertyWithValue('url', type.video_url);
  const answers = Object.entries(b.answers).map(([k, v]) => `${k}: ${v}`).join('\n');
  if (answers) ev.updatePropertyWithValue('description', answers);
  const organizer = ev.addPropertyWithValue('organizer', `mailto:${type.host_email ?? 'no-reply@cuadra.localhost'}`);
  organizer.setParameter('cn', type.name);
  const attendee = ev.addPropertyWithValue('attendee', `mailto:${b.email}`);
  attendee.setParameter('cn', b.name);
  attendee.setParameter('role', 'REQ-PARTICIPANT');
  attendee.setParameter('partstat', 'ACCEPTED');
  cal.addSubcomponent(ev);
  return cal.toString();
}

/**
 * Sends a booking's invitation through the SMTP server of `SMTP_URL` (nodemailer, as every service
 * sends mail): a short Spanish message with the `.ics` as `text/calendar; method=…` alternative and
 * attachment, so mail clients offer to add it. False when mail is not configured.
 */
export async function mailInvitation(b: BookingDoc, type: Pick<BookingTypeDoc, 'name' | 'location' | 'video_url' | 'host_email'>, method: 'REQUEST' | 'CANCEL', when: string, now: Date, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const ics = invitationIcs(b, type, method, now);
  const cancelled = method === 'CANCEL';
  const text = cancelled
    ? `Hola ${b.name}:\n\nTu cita "${type.name}" del ${when} quedó cancelada.\n`
    : `Hola ${b.name}:\n\nTu cita "${type.name}" quedó ${b.status === 'confirmed' ? 'confirmada' : 'reservada (pendiente de confirmación)'} para el ${when}.\n${type.location ? `Lugar: ${type.location}\n` : ''}${type.video_url ? `Enlace: ${type.video_url}\n` : ''}\nAdjuntamos la invitación (.ics) para tu calendario.\n`;
  return sendCalendarMail({
    to: b.email,
    ...(type.host_email ? { replyTo: type.host_email } : {}),
    subject: cancelled ? `Cita cancelada: ${type.name}` : `Cita: ${type.name} — ${when}`,
    text,
    icalEvent: { method, filename: 'invitacion.ics', content: ics },
  }, env);
}
