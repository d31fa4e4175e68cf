// Reminders e-mailed through the real SMTP server (exim4) by the sweep, driven here at chosen
// instants: each reminder of each occurrence once (two sweeps at once too), none for an occurrence
// that has begun, a send a crash interrupted sent again with the same Message-ID, and a weekly
// Madrid meeting's reminder following the clocks across the change to summer time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, newId } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { messagesTo } from '../../../../test/helpers/mail.ts';
import { sendDueReminders } from '../../src/modules/calendar_events/reminders.ts';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
const log = createLogger('test', 'silent');
beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

const reminders = () => svc.db.collection<{ _id: string; [k: string]: any }>('calendar_reminders');
const sweep = (at: Date) => sendDueReminders(svc.db, at, log);
/** `YYYY-MM-DDTHH:mm` of an instant in Bogotá (UTC−5 all year). */
const bogota = (at: Date) => new Date(at.getTime() - 5 * 3_600_000).toISOString().slice(0, 16);

async function delivered(to: string, count: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const got = messagesTo(to);
    if (got.length >= count) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
  return messagesTo(to);
}

describe('calendar reminders', () => {
  it('e-mails each reminder of an occurrence once, even with two sweeps at once, and none once it has begun', async () => {
    const ws = testPrincipal();
    const to = `${newId('rem')}@example.co`.toLowerCase();
    // Starts on the next whole minute 90 minutes from now; reminders 60 and 10 minutes before.
    const start = new Date(Math.ceil((Date.now() + 90 * 60_000) / 60_000) * 60_000);
    const event = (await svc.call('calendar_events.create', {
      title: 'Revisión con el cliente', kind: 'meeting', start: bogota(start), end: bogota(new Date(start.getTime() + 30 * 60_000)),
      attendees: [{ email: to, name: 'Ana' }], reminders: [10, 60],
    }, ws)).output.event;
    const at = (minutesBefore: number, seconds = 0) => new Date(start.getTime() - minutesBefore * 60_000 + seconds * 1000);
    await sweep(at(61));
    expect(await reminders().countDocuments({ event_id: event.id })).toBe(0);
    await sweep(at(60, 5));
    await sweep(at(59));
    expect(await reminders().find({ event_id: event.id }).project({ minutes: 1, status: 1, _id: 0 }).toArray()).toEqual([{ minutes: 60, status: 'sent' }]);
    await Promise.all([sweep(at(9)), sweep(at(9)), sweep(at(8))]);
    await sweep(at(-1));
    expect((await reminders().find({ event_id: event.id }).toArray()).map((r) => [r.minutes, r.status]).sort()).toEqual([[10, 'sent'], [60, 'sent']]);
    const mail = await delivered(to, 2);
    expect(mail).toHaveLength(2);
    // The message names the start on the event's clock: Bogotá.
    for (const raw of mail) expect(raw.replace(/=\r?\n/g, '')).toContain(`empieza el ${bogota(start).replace('T', ' ')} (America/Bogota)`);
  }, 30_000);

  it('sends again a reminder a crash left between claim and mark, with the same Message-ID, and skips one whose occurrence began', async () => {
    const ws = testPrincipal();
    const to = `${newId('rem')}@example.co`.toLowerCase();
    const start = new Date(Math.ceil((Date.now() + 3 * 3_600_000) / 60_000) * 60_000);
    const event = (await svc.call('calendar_events.create', {
      title: 'Cierre de mes', kind: 'deadline', start: bogota(start), end: bogota(new Date(start.getTime() + 60 * 60_000)), attendees: [{ email: to }], reminders: [120],
    }, ws)).output.event;
    const due = new Date(start.getTime() - 120 * 60_000);
    await sweep(new Date(due.getTime() + 1000));
    const [first] = await delivered(to, 1);
    const messageId = /^Message-ID:\s*(\S+)/mi.exec(first)![1];
    // The crash: the claim is still `sending` three minutes later (the server may or may not have taken it).
    const id = `${event.id}|${start.toISOString()}|120`;
    await reminders().updateOne({ _id: id }, { $set: { status: 'sending', claimed_at: new Date(due.getTime() - 2 * 60_000) } });
    await sweep(new Date(due.getTime() + 60_000));
    expect(await reminders().findOne({ _id: id })).toMatchObject({ status: 'sent' });
    const both = await delivered(to, 2);
    expect(both).toHaveLength(2);
    expect(both.map((raw) => /^Message-ID:\s*(\S+)/mi.exec(raw)![1])).toEqual([messageId, messageId]);
    // A send interrupted for an occurrence that has begun by the retry is given up, not sent late.
    await reminders().updateOne({ _id: id }, { $set: { status: 'sending', claimed_at: new Date(start.getTime() - 5 * 60_000) } });
    await sweep(new Date(start.getTime() + 60_000));
    expect(await reminders().findOne({ _id: id })).toMatchObject({ status: 'skipped' });
    expect(messagesTo(to)).toHaveLength(2);
  }, 30_000);

  it('follows a weekly Madrid meeting across the change to summer time', async () => {
    const ws = testPrincipal();
    const to = `${newId('rem')}@example.co`.toLowerCase();
    // Mondays 10:00 Madrid from 22 March 2027, 15 minutes' reminder. Madrid changes to summer time on Sunday
    // 28 March 2027 (last Sunday of March, 01:00Z): 10:00 CET (UTC+1) on the 22nd is 09:00Z, its reminder 08:45Z;
    // 10:00 CEST (UTC+2) on the 29th is 08:00Z, its reminder 07:45Z.
    const event = (await svc.call('calendar_events.create', {
      title: 'Equipo', kind: 'meeting', time_zone: 'Europe/Madrid', start: '2027-03-22T10:00', end: '2027-03-22T10:30', rrule: 'FREQ=WEEKLY;BYDAY=MO',
      attendees: [{ email: to }], reminders: [15],
    }, ws)).output.event;
    const stored = () => svc.db.collection<{ _id: string; [k: string]: any }>('calendar_events').findOne({ _id: event.id });
    expect((await stored())!.next_reminder_at.toISOString()).toBe('2027-03-22T08:45:00.000Z');
    await sweep(new Date('2027-03-22T08:45:30Z'));
    expect((await stored())!.next_reminder_at.toISOString()).toBe('2027-03-29T07:45:00.000Z');
    await sweep(new Date('2027-03-29T07:46:00Z'));
    expect((await reminders().find({ event_id: event.id }).toArray()).map((r) => r.occurrence_start.toISOString())).toEqual(['2027-03-22T09:00:00.000Z', '2027-03-29T08:00:00.000Z']);
    const mail = await delivered(to, 2);
    expect(mail.map((raw) => /2027-03-\d\d 10:00 \(Europe\/Madrid\)/.exec(raw.replace(/=\r?\n/g, ''))?.[0]).sort()).toEqual(['2027-03-22 10:00 (Europe/Madrid)', '2027-03-29 10:00 (Europe/Madrid)']);
    // Cancelled: no reminder is due any more.
    await svc.call('calendar_events.cancel', { id: event.id }, ws);
    expect((await stored())!.next_reminder_at).toBeNull();
  }, 30_000);
});
