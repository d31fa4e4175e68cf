// The booking's invitation as a calendar client gets it: the e-mail the real SMTP server (exim4)
// delivered, its text/calendar part read back with ical.js and imported into a real CalDAV server
// (Radicale, which refuses what does not parse as iCalendar), then the cancellation replacing it.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colombianHolidays, newId } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { startRadicale, type RunningRadicale } from '../../../../scripts/radicale.ts';
import { messagesTo } from '../../../../test/helpers/mail.ts';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
let radicale: RunningRadicale;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-radicale-'));
  [svc, radicale] = await Promise.all([startTestSubgraph(name, createServer), startRadicale({ dir, users: { ana: 'clave-de-prueba' } })]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), radicale?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The text/calendar alternative of a raw message, its transfer encoding undone. */
function calendarPart(raw: string): string | null {
  for (const part of raw.split(/\r?\n--[^\r\n]+\r?\n/)) {
    const [head, ...rest] = part.split(/\r?\n\r?\n/);
    if (!/Content-Type:\s*text\/calendar/i.test(head)) continue;
    const body = rest.join('\n\n');
    if (/Content-Transfer-Encoding:\s*base64/i.test(head)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    if (/Content-Transfer-Encoding:\s*quoted-printable/i.test(head)) {
      return Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
    }
    return body;
  }
  return null;
}

async function delivered(to: string, method: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const raw = messagesTo(to).find((m) => calendarPart(m)?.includes(`METHOD:${method}`));
    if (raw) return raw;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${method} invitation reached ${to}`);
}

function nextWeekday(): string {
  for (let t = Date.now() + 3 * 86_400_000; ; t += 86_400_000) {
    const d = new Date(t).toISOString().slice(0, 10);
    const wd = new Date(`${d}T12:00:00Z`).getUTCDay();
    if (wd >= 1 && wd <= 5 && !colombianHolidays(Number(d.slice(0, 4))).some((h) => h.date === d)) return d;
  }
}

describe('the booking invitation', () => {
  it('arrives by e-mail as an iCalendar REQUEST a calendar server imports, and its cancellation replaces it', async () => {
    const ws = testPrincipal();
    const email = `${newId('inv')}@example.co`.toLowerCase();
    const type = (await svc.call('booking_types.create', {
      slug: 'diagnostico', name: 'Diagnóstico', duration_min: 45, slot_step_min: 15, min_notice_min: 60, host_email: 'agenda@consultora.example',
      video_url: 'https://meet.example/diagnostico', weekly: { mon: [{ start: '09:00', end: '12:00' }], tue: [{ start: '09:00', end: '12:00' }], wed: [{ start: '09:00', end: '12:00' }], thu: [{ start: '09:00', end: '12:00' }], fri: [{ start: '09:00', end: '12:00' }] },
      questions: [{ key: 'empresa', label: 'Empresa', required: true }],
    }, ws)).output.booking_type;
    const day = nextWeekday();
    // 10:15 Bogotá (UTC−5) is 15:15Z; 45 minutes end at 16:00Z. Asked from Madrid.
    const made = await svc.call('bookings.create', { type_id: type.id, start: `${day}T15:15:00Z`, name: 'Marta Núñez', email, time_zone: 'Europe/Madrid', answers: { empresa: 'Ñandú SAS' } }, ws);
    expect(made).toMatchObject({ ok: true, output: { booking: { invited: true, status: 'confirmed' } } });
    const booking = made.output.booking;

    const raw = await delivered(email, 'REQUEST');
    expect(raw).toMatch(/Content-Type:\s*text\/calendar;[^\r\n]*method=REQUEST/i);
    const ics = calendarPart(raw)!;
    const cal = new ICAL.Component(ICAL.parse(ics));
    expect(cal.getFirstPropertyValue('method')).toBe('REQUEST');
    const vevent = cal.getFirstSubcomponent('vevent')!;
    const ev = new ICAL.Event(vevent);
    expect(ev.uid).toBe(`${booking.id}@cuadra`);
    expect(ev.startDate.toJSDate().toISOString()).toBe(`${day}T15:15:00.000Z`);
    expect(ev.endDate.toJSDate().toISOString()).toBe(`${day}T16:00:00.000Z`);
    expect(ev.summary).toBe('Diagnóstico — Marta Núñez');
    expect(ev.location).toBe('https://meet.example/diagnostico');
    expect(ev.description).toBe('empresa: Ñandú SAS');
    expect(String(vevent.getFirstPropertyValue('organizer'))).toBe('mailto:agenda@consultora.example');
    expect(ev.attendees.map((a) => [String(a.getFirstValue()), a.getParameter('cn')])).toEqual([[`mailto:${email}`, 'Marta Núñez']]);
    const sequence = Number(vevent.getFirstPropertyValue('sequence'));

    // A calendar server takes it as is (Radicale parses every PUT and refuses what is not iCalendar: 400).
    const auth = { authorization: `Basic ${Buffer.from('ana:clave-de-prueba').toString('base64')}` };
    expect((await fetch(`${radicale.url}/ana/citas/`, { method: 'MKCALENDAR', headers: auth })).status).toBe(201);
    const put = await fetch(`${radicale.url}/ana/citas/${booking.id}.ics`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/calendar; charset=utf-8' }, body: ics });
    expect(put.status).toBe(201);
    const stored = await (await fetch(`${radicale.url}/ana/citas/${booking.id}.ics`, { headers: auth })).text();
    const back = new ICAL.Event(new ICAL.Component(ICAL.parse(stored)).getFirstSubcomponent('vevent')!);
    expect([back.uid, back.startDate.toJSDate().toISOString(), back.summary]).toEqual([`${booking.id}@cuadra`, `${day}T15:15:00.000Z`, 'Diagnóstico — Marta Núñez']);

    // Cancelled: a CANCEL of the same UID with a higher SEQUENCE, which replaces the imported one.
    expect((await svc.call('bookings.cancel', { id: booking.id }, ws)).ok).toBe(true);
    const cancelIcs = calendarPart(await delivered(email, 'CANCEL'))!;
    const cancelled = new ICAL.Component(ICAL.parse(cancelIcs)).getFirstSubcomponent('vevent')!;
    expect(cancelled.getFirstPropertyValue('uid')).toBe(`${booking.id}@cuadra`);
    expect(cancelled.getFirstPropertyValue('status')).toBe('CANCELLED');
    expect(Number(cancelled.getFirstPropertyValue('sequence'))).toBeGreaterThan(sequence);
    const replaced = await fetch(`${radicale.url}/ana/citas/${booking.id}.ics`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/calendar; charset=utf-8' }, body: cancelIcs });
    expect(replaced.status).toBe(204); // an existing resource replaced (RFC 4918 PUT)
    expect(await (await fetch(`${radicale.url}/ana/citas/${booking.id}.ics`, { headers: auth })).text()).toMatch(/STATUS:CANCELLED/);
  }, 30_000);

  it('is TENTATIVE while the booking waits for confirmation, and a confirmation sends the CONFIRMED update', async () => {
    const ws = testPrincipal();
    const email = `${newId('inv')}@example.co`.toLowerCase();
    const type = (await svc.call('booking_types.create', {
      slug: 'revision', name: 'Revisión', duration_min: 30, min_notice_min: 60, confirmation_required: true,
      weekly: { mon: [{ start: '09:00', end: '12:00' }], tue: [{ start: '09:00', end: '12:00' }], wed: [{ start: '09:00', end: '12:00' }], thu: [{ start: '09:00', end: '12:00' }], fri: [{ start: '09:00', end: '12:00' }] },
    }, ws)).output.booking_type;
    const booking = (await svc.call('bookings.create', { type_id: type.id, start: `${nextWeekday()}T14:30:00Z`, name: 'Pedro', email }, ws)).output.booking;
    expect(booking.status).toBe('pending');
    const eventOf = (ics: string) => new ICAL.Component(ICAL.parse(ics)).getFirstSubcomponent('vevent')!;
    const first = eventOf(calendarPart(await delivered(email, 'REQUEST'))!);
    expect(first.getFirstPropertyValue('status')).toBe('TENTATIVE');
    expect((await svc.call('bookings.confirm', { id: booking.id }, ws)).ok).toBe(true);
    let confirmed: ICAL.Component | undefined;
    for (let i = 0; i < 100 && !confirmed; i++) {
      confirmed = messagesTo(email).map((m) => calendarPart(m)).filter((c): c is string => !!c).map(eventOf).find((v) => v.getFirstPropertyValue('status') === 'CONFIRMED');
      if (!confirmed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(confirmed?.getFirstPropertyValue('uid')).toBe(`${booking.id}@cuadra`);
    expect(Number(confirmed!.getFirstPropertyValue('sequence'))).toBeGreaterThan(Number(first.getFirstPropertyValue('sequence')));
  }, 30_000);
});
