// Connected calendars against a real CalDAV server (Radicale from PyPI, started here on a free
// loopback port): connect with a sealed password, discovery, sync with sync-collection (RFC 6578)
// and its ETag fallback, recurrence (EXDATE, an overridden instance, a daylight-saving change)
// expanded into busy times that bookings.availability subtracts, a server-side change between two
// syncs, and Cuadra's events written back under If-Match with a conflict becoming a proposal.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { dumpDatabase, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { startRadicale, type RunningRadicale } from '../../../../scripts/radicale.ts';
import { createServer, name } from '../../src/server.ts';

const PASSWORD = `clave-${randomBytes(6).toString('hex')}`;
let svc: TestSubgraph;
let radicale: RunningRadicale;
let dir: string;
const saved = { seal: process.env.CUADRA_SEAL_KEY, outbound: process.env.CUADRA_OUTBOUND_PRIVATE };
beforeAll(async () => {
  process.env.CUADRA_SEAL_KEY ??= randomBytes(32).toString('base64');
  process.env.CUADRA_OUTBOUND_PRIVATE = 'allow'; // the test's Radicale is on loopback
  dir = mkdtempSync(path.join(os.tmpdir(), 'cuadra-caldav-'));
  [svc, radicale] = await Promise.all([startTestSubgraph(name, createServer), startRadicale({ dir, users: { ana: PASSWORD } })]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), radicale?.stop()]);
  rmSync(dir, { recursive: true, force: true });
  process.env.CUADRA_OUTBOUND_PRIVATE = saved.outbound;
  if (saved.seal === undefined) delete process.env.CUADRA_SEAL_KEY;
});

const auth = () => `Basic ${Buffer.from(`ana:${PASSWORD}`).toString('base64')}`;
/** Another client writing straight to the server (no If-Match: what a phone's calendar app does). */
async function dav(method: string, p: string, body?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${radicale.url}${p}`, { method, headers: { authorization: auth(), 'content-type': 'text/calendar; charset=utf-8', ...headers }, body });
}
const vcal = (...events: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Otro cliente//ES', ...events, 'END:VCALENDAR', ''].join('\r\n');
const vevent = (...lines: string[]) => ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT'].join('\r\n');

async function ok(p: Principal, tool: string, input: Record<string, unknown>) {
  const r = await svc.call(tool, input, p);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}
async function records(p: Principal, q: Record<string, unknown>) {
  const r = await svc.graphql('query($q: JSON!) { projectsRecords(query: $q) }', { q }, p);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data.projectsRecords as { rows: Record<string, any>[] };
}

const day = (d: string, n: number) => new Date(Date.parse(`${d}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const compact = (d: string) => d.replaceAll('-', '');
/** The last Sunday of a month. */
function lastSunday(year: number, month: number): string {
  const last = new Date(Date.UTC(year, month, 0));
  return new Date(last.getTime() - last.getUTCDay() * 86_400_000).toISOString().slice(0, 10);
}
/**
 * The next Madrid daylight-saving change at least 16 days ahead (EU rule: last Sunday of March,
 * clocks UTC+1 → UTC+2; last Sunday of October, UTC+2 → UTC+1).
 */
function nextChange(): { sunday: string; before: number; after: number } {
  const soon = day(new Date().toISOString().slice(0, 10), 16);
  const year = Number(soon.slice(0, 4));
  const candidates = [lastSunday(year, 3), lastSunday(year, 10), lastSunday(year + 1, 3)];
  const sunday = candidates.find((s) => s >= soon)!;
  return sunday.slice(5, 7) === '03' ? { sunday, before: 1, after: 2 } : { sunday, before: 2, after: 1 };
}
/** `HH:00Z` of 15:00 (or `h` o'clock) Madrid at a UTC offset of `off` hours. */
const madridZ = (date: string, h: number, off: number) => `${date}T${String(h - off).padStart(2, '0')}:00:00.000Z`;

describe('calendar_accounts over CalDAV (real Radicale)', () => {
  it('refuses a server on a private address unless the deployment allows it, and a wrong password, storing nothing', async () => {
    const ws = testPrincipal();
    process.env.CUADRA_OUTBOUND_PRIVATE = '';
    try {
      const r = await svc.call('calendar_accounts.connect', { url: `${radicale.url}/`, username: 'ana', password: PASSWORD }, ws);
      expect(r).toMatchObject({ ok: false, code: 'invalid_input', field: '/url' });
      expect(await svc.call('calendar_accounts.connect', { url: 'http://169.254.169.254/latest/', username: 'ana', password: 'x' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/url' });
    } finally {
      process.env.CUADRA_OUTBOUND_PRIVATE = 'allow';
    }
    expect(await svc.call('calendar_accounts.connect', { url: `${radicale.url}/`, username: 'ana', password: 'equivocada' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/password' });
    expect((await records(ws, { source: 'calendar_accounts' })).rows).toEqual([]);
  });

  it('syncs twice with a server-side change in between, expands recurrence across a DST change, subtracts busy times, follows deletions, and falls back to ETags', async () => {
    const ws = testPrincipal();
    const base = `/ana/${randomBytes(4).toString('hex')}`;
    expect((await dav('MKCALENDAR', `${base}-trabajo/`)).status).toBe(201);
    expect((await dav('MKCALENDAR', `${base}-personal/`)).status).toBe(201);
    const { sunday, before, after } = nextChange();
    const mon = [day(sunday, -13), day(sunday, -6), day(sunday, 1), day(sunday, 8)];
    // A weekly 15:00–16:00 Madrid meeting, four Mondays around the change: the 2nd removed (EXDATE),
    // the 3rd moved to 17:00–18:00 (RECURRENCE-ID), so busy: Monday 1 at 15:00 − before, Monday 3 at
    // 17:00 − after, Monday 4 at 15:00 − after (UTC hours).
    const series = vcal(
      vevent('UID:serie@otro', `DTSTART;TZID=Europe/Madrid:${compact(mon[0])}T150000`, `DTEND;TZID=Europe/Madrid:${compact(mon[0])}T160000`,
        'RRULE:FREQ=WEEKLY;COUNT=4', `EXDATE;TZID=Europe/Madrid:${compact(mon[1])}T150000`, 'SUMMARY:Comité'),
      vevent('UID:serie@otro', `RECURRENCE-ID;TZID=Europe/Madrid:${compact(mon[2])}T150000`, `DTSTART;TZID=Europe/Madrid:${compact(mon[2])}T170000`,
        `DTEND;TZID=Europe/Madrid:${compact(mon[2])}T180000`, 'SUMMARY:Comité (movido)'),
    );
    expect((await dav('PUT', `${base}-trabajo/serie.ics`, series)).status).toBe(201);
    expect((await dav('PUT', `${base}-trabajo/libre.ics`, vcal(vevent('UID:libre@otro', `DTSTART;VALUE=DATE:${compact(mon[2])}`, `DTEND;VALUE=DATE:${compact(day(mon[2], 1))}`, 'TRANSP:TRANSPARENT', 'SUMMARY:Cumpleaños')))).status).toBe(201);
    expect((await dav('PUT', `${base}-personal/dentista.ics`, vcal(vevent('UID:dentista@otro', `DTSTART:${compact(mon[2])}T160000Z`, `DTEND:${compact(mon[2])}T170000Z`, 'SUMMARY:Dentista')))).status).toBe(201);

    const connected = await ok(ws, 'calendar_accounts.connect', { name: 'Agenda de Ana', url: `${radicale.url}/`, username: 'ana', password: PASSWORD });
    expect(JSON.stringify(connected)).not.toContain(PASSWORD);
    expect(await dumpDatabase(svc.db)).not.toContain(PASSWORD); // sealed at rest
    const cals = connected.calendars as { id: string; url: string; sync_collection: boolean }[];
    const trabajo = cals.find((c) => c.url.endsWith(`${base}-trabajo/`))!;
    const personal = cals.find((c) => c.url.endsWith(`${base}-personal/`))!;
    expect(trabajo.sync_collection).toBe(true);
    for (const c of cals) await ok(ws, 'calendar_accounts.choose', { calendar_id: c.id, counts_for_availability: c.id === trabajo.id });

    const first = await ok(ws, 'calendar_accounts.sync', { id: connected.account.id });
    const firstOf = (id: string) => first.calendars.find((c: { calendar_id: string }) => c.calendar_id === id);
    expect(firstOf(trabajo.id)).toMatchObject({ method: 'etag', changed: 2, deleted: 0 }); // no token yet: a full listing
    expect(firstOf(personal.id)).toMatchObject({ method: 'etag', changed: 1 });

    const rows = (await records(ws, { source: 'connected_calendar_events', limit: 20 })).rows;
    const comite = rows.find((r) => r.uid === 'serie@otro')!;
    expect(comite.occurrences).toEqual([
      { start: madridZ(mon[0], 15, before), end: madridZ(mon[0], 16, before), busy: true },
      { start: madridZ(mon[2], 17, after), end: madridZ(mon[2], 18, after), busy: true },
      { start: madridZ(mon[3], 15, after), end: madridZ(mon[3], 16, after), busy: true },
    ]);
    expect(rows.find((r) => r.uid === 'libre@otro')).toMatchObject({ all_day: true, busy: false });

    // Bookings 07:00–12:00 Bogotá (UTC−5 all year), hourly. Monday 3: the moved meeting, 17:00–18:00
    // Madrid at UTC+after, is (17 − after + … ) in Bogotá: 17 − after − 5 o'clock; the dentist
    // (personal calendar, not counted) and the transparent birthday take nothing.
    const type = (await ok(ws, 'booking_types.create', {
      slug: 'asesoria', name: 'Asesoría', duration_min: 60, window_days: 365, min_notice_min: 60, exclude_holidays: false,
      weekly: { mon: [{ start: '07:00', end: '12:00' }] },
    })).booking_type;
    const hours = async (date: string) => ((await ok(ws, 'bookings.availability', { type_id: type.id, from: date, to: date })).slots as { time: string }[]).map((s) => s.time);
    const all = ['07:00', '08:00', '09:00', '10:00', '11:00'];
    const hh = (h: number) => `${String(h).padStart(2, '0')}:00`;
    expect(await hours(mon[2])).toEqual(all.filter((t) => t !== hh(17 - after - 5)));
    expect(await hours(mon[3])).toEqual(all.filter((t) => t !== hh(15 - after - 5)));
    expect(await hours(mon[1])).toEqual(all); // the removed instance

    // On the server, between the syncs: the 4th meeting removed too, the birthday deleted, a new
    // event on Monday 3 at 11:00 Bogotá (16:00Z).
    expect((await dav('PUT', `${base}-trabajo/serie.ics`, series.replace(`EXDATE;TZID=Europe/Madrid:${compact(mon[1])}T150000`, `EXDATE;TZID=Europe/Madrid:${compact(mon[1])}T150000,${compact(mon[3])}T150000`))).status).toBe(204);
    expect((await dav('DELETE', `${base}-trabajo/libre.ics`)).status).toBe(200);
    expect((await dav('PUT', `${base}-trabajo/nuevo.ics`, vcal(vevent('UID:nuevo@otro', `DTSTART:${compact(mon[2])}T160000Z`, `DTEND:${compact(mon[2])}T170000Z`, 'SUMMARY:Cliente nuevo')))).status).toBe(201);

    const second = await ok(ws, 'calendar_accounts.sync', { id: connected.account.id });
    expect(second.calendars.find((c: { calendar_id: string }) => c.calendar_id === trabajo.id)).toMatchObject({ method: 'sync-collection', changed: 2, deleted: 1 });
    expect(second.calendars.find((c: { calendar_id: string }) => c.calendar_id === personal.id)).toMatchObject({ method: 'sync-collection', changed: 0, deleted: 0 });
    const after2 = (await records(ws, { source: 'connected_calendar_events', limit: 20 })).rows;
    expect(after2.map((r) => r.uid).sort()).toEqual(['dentista@otro', 'nuevo@otro', 'serie@otro']);
    expect(after2.find((r) => r.uid === 'serie@otro')!.occurrences).toHaveLength(2);
    expect(await hours(mon[2])).toEqual(all.filter((t) => t !== hh(17 - after - 5) && t !== '11:00'));
    expect(await hours(mon[3])).toEqual(all);

    // A token the server no longer accepts (RFC 6578 §3.2): the sync lists ETags instead and still
    // finds the deletion made meanwhile.
    const calendarsModel = svc.db.collection('connected_calendars');
    await calendarsModel.updateOne({ _id: trabajo.id as never }, { $set: { sync_token: 'http://radicale.org/ns/sync/caducado' } });
    expect((await dav('DELETE', `${base}-trabajo/nuevo.ics`)).status).toBe(200);
    const third = await ok(ws, 'calendar_accounts.sync', { id: connected.account.id });
    expect(third.calendars.find((c: { calendar_id: string }) => c.calendar_id === trabajo.id)).toMatchObject({ method: 'etag', changed: 0, deleted: 1 });
    expect(await hours(mon[2])).toEqual(all.filter((t) => t !== hh(17 - after - 5)));
    // … and the token it fetched then works for the next sync.
    expect((await ok(ws, 'calendar_accounts.sync', { id: connected.account.id })).calendars.find((c: { calendar_id: string }) => c.calendar_id === trabajo.id)).toMatchObject({ method: 'sync-collection', changed: 0, deleted: 0 });
  });

  it('writes a Cuadra event to a calendar under If-Match: a change made there meanwhile becomes a proposal, never overwritten until decided', async () => {
    const ws = testPrincipal();
    const base = `/ana/${randomBytes(4).toString('hex')}-equipo/`;
    expect((await dav('MKCALENDAR', base)).status).toBe(201);
    const connected = await ok(ws, 'calendar_accounts.connect', { url: `${radicale.url}/`, username: 'ana', password: PASSWORD });
    const cal = (connected.calendars as { id: string; url: string }[]).find((c) => c.url.endsWith(base))!;
    const start = `${day(new Date().toISOString().slice(0, 10), 10)}T10:00`;
    const event = (await ok(ws, 'calendar_events.create', { title: 'Revisión trimestral', kind: 'meeting', start, end: start.replace('T10:00', 'T11:00'), time_zone: 'America/Bogota' })).event;

    const first = await ok(ws, 'calendar_accounts.publish', { event_id: event.id, calendar_id: cal.id });
    expect(first.written).toBe(true);
    const path1 = new URL(first.href).pathname;
    const read = async () => {
      const r = await dav('GET', path1);
      const v = new ICAL.Component(ICAL.parse(await r.text())).getFirstSubcomponent('vevent')!;
      return { etag: r.headers.get('etag'), summary: v.getFirstPropertyValue('summary'), uid: v.getFirstPropertyValue('uid'), start: (v.getFirstPropertyValue('dtstart') as ICAL.Time).toString() };
    };
    expect(await read()).toMatchObject({ summary: 'Revisión trimestral', uid: `${event.id}@cuadra`, start: `${start}:00` });

    // Someone edits the copy on their phone; then the event changes in Cuadra and is written again.
    const phone = (await (await dav('GET', path1)).text()).replace('SUMMARY:Revisión trimestral', 'SUMMARY:Revisión (movida por Ana)');
    expect((await dav('PUT', path1, phone)).status).toBe(204);
    await ok(ws, 'calendar_events.update', { id: event.id, title: 'Revisión trimestral con gerencia' });
    const second = await ok(ws, 'calendar_accounts.publish', { event_id: event.id, calendar_id: cal.id });
    expect(second.written).toBe(false);
    expect(second.proposal.theirs).toContain('Revisión (movida por Ana)');
    expect(second.proposal.ours).toContain('Revisión trimestral con gerencia');
    expect((await read()).summary).toBe('Revisión (movida por Ana)'); // not overwritten
    expect(await svc.call('calendar_accounts.publish', { event_id: event.id, calendar_id: cal.id }, ws)).toMatchObject({ ok: false, code: 'conflict' });

    const decided = await ok(ws, 'calendar_accounts.resolve', { proposal_id: second.proposal.id, keep: 'cuadra' });
    expect(decided.proposal.status).toBe('kept_cuadra');
    expect((await read()).summary).toBe('Revisión trimestral con gerencia');
    expect(await svc.call('calendar_accounts.resolve', { proposal_id: second.proposal.id, keep: 'calendar' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    // Another workspace sees none of it.
    expect(await svc.call('calendar_accounts.publish', { event_id: event.id, calendar_id: cal.id }, testPrincipal())).toMatchObject({ ok: false, code: 'invalid_input', field: '/event_id' });
  });
});
