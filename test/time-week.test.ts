// A consultancy's week through the real gateway and subgraphs (issue 35, "Done when"): bookings of one
// slot racing over REST (one booked, nine 409); twenty posts of the public booking page by visitors
// (two from Madrid — the 9:00 Bogotá slot shown at 15:00 in winter and 16:00 in summer —, one on a
// Colombian holiday refused, one rescheduled, one cancelled and its slot re-booked by someone else);
// a real CalDAV calendar (Radicale) synced twice with a change made on the server in between; a weekly
// team meeting with one exception, a tax deadline, a CRM call, tasks moved across columns — and every
// source, the agenda's events and tasks lanes, the event blocks and the bookings' CRM parties and
// activities equal to the expectation written out below. Runs on the lent system of the files that
// need loopback outbound (Radicale): OWN_SYSTEM_SETTINGS, no start of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colombianHolidays } from '@cuadra/shared';
import { Agent, fetch as fetchFrom } from 'undici';
import { startRadicale, type RunningRadicale } from '../scripts/radicale.ts';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';
import { until } from './helpers/until.ts';

let sys: TestSystem;
let key: string;
let slug: string;
let radicale: RunningRadicale;
const radicaleDir = mkdtempSync(path.join(tmpdir(), 'cuadra-timeweek-dav-'));

beforeAll(async () => {
  [sys, radicale] = await Promise.all([startTestSystem('time_week', OWN_SYSTEM_SETTINGS), startRadicale({ dir: radicaleDir, users: { ana: 'clave-de-ana' } })]);
  const ws = await sys.workspace('Consultora Andina SAS');
  key = ws.api_key;
  slug = (await sys.identity.slugOf(ws.workspace_id))!;
});
afterAll(async () => {
  await Promise.all([sys?.stop(), radicale?.stop()]);
  rmSync(radicaleDir, { recursive: true, force: true });
});

const ok = (tool: string, input: unknown): Promise<any> => sys.output(tool, input, key);

const plus = (date: string, n: number) => new Date(Date.parse(`${date}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const isHoliday = (d: string) => colombianHolidays(Number(d.slice(0, 4))).some((h) => h.date === d);
const isWorkday = (d: string) => [1, 2, 3, 4, 5].includes(new Date(`${d}T12:00:00Z`).getUTCDay()) && !isHoliday(d);
/** The Monday of the first week, at least a week ahead, whose Tuesday to Friday are working days. */
function weekAhead(): string {
  for (let d = plus(new Date().toISOString().slice(0, 10), 7); ; d = plus(d, 1)) {
    if (new Date(`${d}T12:00:00Z`).getUTCDay() === 1 && [1, 2, 3, 4].every((i) => !isHoliday(plus(d, i)))) return d;
  }
}
/** The first Colombian working day from `from` whose month (1–12) is one of `months`. */
const firstWorkdayIn = (from: string, months: number[]) => {
  let d = from;
  while (!(isWorkday(d) && months.includes(Number(d.slice(5, 7))))) d = plus(d, 1);
  return d;
};

/** A visitor of the public page: a browser of their own, from an address of their own (the page counts posts per address). */
function visitor(n: number) {
  const agent = new Agent({ localAddress: `127.${150 + (process.pid % 50)}.${(Date.now() >> 10) % 250}.${10 + n}` });
  const pageUrl = `${sys.gatewayUrl}/book/${slug}/asesoria`;
  return {
    /** The page for the week from `fecha`, in the visitor's zone: its HTML. */
    page: async (fecha: string, zona?: string) => (await fetchFrom(`${pageUrl}?fecha=${fecha}${zona ? `&zona=${encodeURIComponent(zona)}` : ''}`, { dispatcher: agent })).text(),
    /** Fills the form the page gave and posts it, as a browser without JavaScript does. */
    book: async (html: string, inicio: string, nombre: string, correo: string) => {
      const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1];
      const r = await fetchFrom(pageUrl, {
        method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ inicio, nombre, correo, zona: hidden('zona'), fecha: hidden('fecha'), ficha: hidden('ficha') }).toString(),
      });
      return { status: r.status, html: await r.text() };
    },
    close: () => agent.close(),
  };
}

/** Runs `jobs` at most `n` at a time. */
async function bounded<T>(n: number, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  }));
  return out;
}

describe('a week of a consultancy', () => {
  it('knows 2026\'s Colombian Monday holidays (Ley 51 de 1983 moves these feasts to the next Monday)', () => {
    // Easter 2026 is 5 April. Moved to Monday: Reyes 6 Jan → 12 Jan; San José 19 Mar → 23 Mar; Ascensión
    // (Easter + 39 = 14 May) → 18 May; Corpus Christi (Easter + 60 = 4 Jun) → 8 Jun; Sagrado Corazón
    // (Easter + 68 = 12 Jun) → 15 Jun; San Pedro y San Pablo 29 Jun (a Monday); Asunción 15 Aug → 17 Aug;
    // Día de la Raza 12 Oct (a Monday); Todos los Santos 1 Nov → 2 Nov; Independencia de Cartagena
    // 11 Nov → 16 Nov; Nuestra Señora del Rosario de Chiquinquirá (Ley 2578 de 2026, moved the same way)
    // 9 Jul → 13 Jul. Fixed, and a Monday in 2026: Independencia 20 Jul.
    const mondays = colombianHolidays(2026).map((h) => h.date).filter((d) => new Date(`${d}T12:00:00Z`).getUTCDay() === 1);
    expect(mondays).toEqual(['2026-01-12', '2026-03-23', '2026-05-18', '2026-06-08', '2026-06-15', '2026-06-29', '2026-07-13', '2026-07-20', '2026-08-17', '2026-10-12', '2026-11-02', '2026-11-16']);
  });

  it('books, races, cancels, syncs, meets, files and moves — and every source, lane and event block says exactly that', async () => {
    const mon = weekAhead();
    const [tue, wed, thu, fri] = [1, 2, 3, 4].map((i) => plus(mon, i));
    // 09:00–14:00 Bogotá, hourly: 09, 10, 11, 12, 13 o'clock, which are 14Z … 18Z (Bogotá is UTC−5 all year).
    const type = (await ok('booking_types.create', {
      slug: 'asesoria', name: 'Asesoría', duration_min: 60, min_notice_min: 60, window_days: 365,
      weekly: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri'].map((d) => [d, [{ start: '09:00', end: '14:00' }]])),
    })).booking_type;
    const at = (day: string, bogotaHour: number) => `${day}T${String(bogotaHour + 5).padStart(2, '0')}:00:00.000Z`;
    const hours = async (day: string) => (await ok('bookings.availability', { type_id: type.id, from: day, to: day })).slots.map((s: any) => s.time);

    // Ten people book Tuesday 10:00 Bogotá (15:00Z) at once, over REST: one booking, nine 409 conflict.
    const race = await Promise.all(Array.from({ length: 10 }, (_, i) => sys.invoke('bookings.create', { type_id: type.id, start: at(tue, 10), name: `Cliente ${i}`, email: `cliente${i}@example.co` }, key)));
    expect(race.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of race.filter((x) => x.status === 409)) expect(r.body.code).toBe('conflict');
    const first = race.find((r) => r.status === 200)!.body.output.booking;
    expect(await hours(tue)).toEqual(['09:00', '11:00', '12:00', '13:00']);
    // Cancelled, the slot is offered again and someone else takes it.
    await ok('bookings.cancel', { id: first.id });
    expect(await hours(tue)).toEqual(['09:00', '10:00', '11:00', '12:00', '13:00']);
    await ok('bookings.create', { type_id: type.id, start: at(tue, 10), name: 'Beatriz Ríos', email: 'beatriz@example.co' });
    // Thursday 9:00 Bogotá is 14:00Z; asked from UTC it reads 14:00.
    const thursday = (await ok('bookings.availability', { type_id: type.id, from: thu, to: thu, time_zone: 'UTC' })).slots;
    expect(thursday.map((s: any) => s.time)).toEqual(['14:00', '15:00', '16:00', '17:00', '18:00']);
    await ok('bookings.create', { type_id: type.id, start: thursday[0].start, name: 'Carlos Mejía', email: 'carlos@example.co', time_zone: 'UTC' });

    // A CalDAV calendar on a real server: Ana's phone holds an external audit Friday 12:00–13:00 Bogotá
    // (17:00Z–18:00Z) and a trip in the next week; it counts for availability.
    const auth = `Basic ${Buffer.from('ana:clave-de-ana').toString('base64')}`;
    const dav = (method: string, p: string, body?: string) => fetch(`${radicale.url}/ana/${p}`, { method, headers: { authorization: auth, ...(body ? { 'content-type': 'text/calendar; charset=utf-8' } : {}) }, body });
    const ics = (uid: string, start: string, end: string, summary: string) => ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Telefono//ES', 'BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z', `DTSTART:${start}`, `DTEND:${end}`, `SUMMARY:${summary}`, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');
    const z = (day: string, utcHour: number) => `${day.replaceAll('-', '')}T${String(utcHour).padStart(2, '0')}0000Z`;
    expect((await dav('MKCALENDAR', 'trabajo/')).status).toBe(201);
    expect((await dav('PUT', 'trabajo/auditoria.ics', ics('auditoria@telefono', z(fri, 17), z(fri, 18), 'Auditoría externa'))).status).toBe(201);
    expect((await dav('PUT', 'trabajo/viaje.ics', ics('viaje@telefono', z(plus(fri, 7), 13), z(plus(fri, 7), 23), 'Viaje a Medellín'))).status).toBe(201);
    const connected = await ok('calendar_accounts.connect', { name: 'Agenda de Ana', url: `${radicale.url}/`, username: 'ana', password: 'clave-de-ana' });
    expect(JSON.stringify(connected)).not.toContain('clave-de-ana');
    const calendar = connected.calendars.find((c: any) => c.url.endsWith('/ana/trabajo/'));
    await ok('calendar_accounts.choose', { calendar_id: calendar.id, counts_for_availability: true });
    const sync1 = await ok('calendar_accounts.sync', { id: connected.account.id });
    expect(sync1.calendars.find((c: any) => c.calendar_id === calendar.id)).toMatchObject({ method: 'etag', changed: 2, deleted: 0 });
    expect(await hours(fri)).toEqual(['09:00', '10:00', '11:00', '13:00']);

    // Twenty posts of the public page, five visitors at a time, each from an address of their own.
    // Tuesday to Friday, all but Tuesday 10:00 (Beatriz), Thursday 9:00 (Carlos) and Friday 12:00 (the
    // audit) and 13:00 (kept for the audit's move): sixteen bookings.
    const plan: [string, number, string, string][] = [
      [tue, 9, 'Daniela Pardo', 'daniela@example.co'], [tue, 11, 'Esteban Rojas', 'esteban@example.co'], [tue, 12, 'Fernanda Gil', 'fernanda@example.co'], [tue, 13, 'Gabriel Toro', 'gabriel@example.co'],
      [wed, 9, 'Helena Vargas', 'helena@example.co'], [wed, 10, 'Iván Cárdenas', 'ivan@example.co'], [wed, 11, 'Julia Ospina', 'julia@example.co'], [wed, 12, 'Kevin Duarte', 'kevin@example.co'], [wed, 13, 'Laura Nieto', 'laura@example.co'],
      [thu, 10, 'Mateo Lozano', 'mateo@example.co'], [thu, 11, 'Natalia Ruiz', 'natalia@example.co'], [thu, 12, 'Óscar Pineda', 'oscar@example.co'], [thu, 13, 'Paula Herrera', 'paula@example.co'],
      [fri, 9, 'Quintín Salas', 'quintin@example.co'], [fri, 10, 'Rosa Castaño', 'rosa@example.co'], [fri, 11, 'Santiago Mora', 'santiago@example.co'],
    ];
    const visitors = Array.from({ length: 20 }, (_, i) => visitor(i));
    const posted = await bounded(5, plan.map(([day, h, name, email], i) => async () => visitors[i].book(await visitors[i].page(tue), at(day, h), name, email)));
    expect(posted.map((p) => p.status)).toEqual(plan.map(() => 201));
    expect(posted[0].html).toContain('Reserva confirmada');
    const idOf = async (name: string) => (await ok('bookings.list', { status: 'confirmed', limit: 100 })).rows.find((b: any) => b.name === name).id;

    // From Madrid: the 9:00 Bogotá slot (14:00Z) reads 15:00 in winter (CET, UTC+1) and 16:00 in summer
    // (CEST, UTC+2 from the last Sunday of March to the last Sunday of October, Directive 2000/84/EC) —
    // a December-to-February day and a June-to-August one, both past the agenda's three weeks.
    const winter = firstWorkdayIn(plus(mon, 21), [12, 1, 2]);
    const summer = firstWorkdayIn(plus(mon, 21), [6, 7, 8]);
    const shownAt = (html: string, start: string) => new RegExp(`value="${start}" required> (\\d\\d:\\d\\d)`).exec(html)?.[1];
    const madrid = [[winter, 'Ulrike Weber', 'ulrike@correo.example', '15:00'], [summer, 'Víctor Sanz', 'victor@correo.example', '16:00']] as const;
    for (const [i, [day, name, email, madridTime]] of madrid.entries()) {
      const v = visitors[16 + i];
      const html = await v.page(day, 'Europe/Madrid');
      expect(shownAt(html, at(day, 9))).toBe(madridTime);
      expect((await v.book(html, at(day, 9), name, email)).status).toBe(201);
    }
    // On a Colombian public holiday (a weekday, past the week) the page offers nothing and a forged post is refused (400).
    const holiday = colombianHolidays(Number(mon.slice(0, 4)) + 1).find((h) => [1, 2, 3, 4, 5].includes(new Date(`${h.date}T12:00:00Z`).getUTCDay()))!.date;
    const holidayPage = await visitors[18].page(holiday);
    expect(shownAt(holidayPage, at(holiday, 9))).toBeUndefined();
    const refused = await visitors[18].book(holidayPage, at(holiday, 9), 'Festivo', 'festivo@example.co');
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('Elige uno de los horarios ofrecidos.');

    // Rosa cancels her Friday 10:00; Walter takes it on the page.
    await ok('bookings.cancel', { id: await idOf('Rosa Castaño') });
    const walter = await visitors[19].book(await visitors[19].page(tue), at(fri, 10), 'Walter Gómez', 'walter@example.co');
    expect(walter.status).toBe(201);
    // Twenty posts: sixteen, two from Madrid, the holiday's and Walter's.
    await Promise.all(visitors.map((v) => v.close()));

    // On the server, between the syncs: the audit moves to 13:00–14:00 Bogotá (18:00Z–19:00Z), the trip is deleted.
    expect((await dav('PUT', 'trabajo/auditoria.ics', ics('auditoria@telefono', z(fri, 18), z(fri, 19), 'Auditoría externa (movida)'))).status).toBe(204);
    expect((await dav('DELETE', 'trabajo/viaje.ics')).status).toBe(200);
    const sync2 = await ok('calendar_accounts.sync', { id: connected.account.id });
    expect(sync2.calendars.find((c: any) => c.calendar_id === calendar.id)).toMatchObject({ method: 'sync-collection', changed: 1, deleted: 1 });
    // Friday 12:00 is free now, 13:00 taken: Santiago moves from 11:00 to 12:00, and 11:00 is offered.
    expect(await hours(fri)).toEqual(['12:00']);
    await ok('bookings.reschedule', { id: await idOf('Santiago Mora'), start: at(fri, 12) });
    expect(await hours(fri)).toEqual(['11:00']);

    // The team meets Wednesdays 08:00 for three weeks, except the second; the VAT return is due Friday.
    const meeting = (await ok('calendar_events.create', {
      title: 'Reunión de equipo', kind: 'meeting', start: `${wed}T08:00`, end: `${wed}T08:30`, rrule: 'FREQ=WEEKLY;COUNT=3', exdates: [`${plus(wed, 7)}T08:00`],
    })).event;
    const vat = (await ok('calendar_events.create', { title: 'Declaración de IVA', kind: 'tax', all_day: true, start: fri })).event;

    // Tasks: two due this week; one moved to Doing, one to Done (done tasks leave the lane).
    const project = (await ok('projects.create', { name: 'Cliente Ñandú', key: 'NAN' })).project;
    const report = (await ok('tasks.create', { project_id: project.id, title: 'Informe', due_date: thu })).task;
    const invoice = (await ok('tasks.create', { project_id: project.id, title: 'Cuenta de cobro', due_date: fri })).task;
    await ok('tasks.move', { id: report.id, column: 'Doing' });
    await ok('tasks.move', { id: invoice.id, column: 'Done' });

    // A call scheduled in the CRM for Monday: crm's part of the same events lane.
    const party = (await ok('parties.create', { kind: 'customer', name: 'Ñandú SAS' })).party;
    await ok('activities.create', { kind: 'call', subject: 'Llamar a Ñandú', party_id: party.id, due_date: mon });

    const rendered = (await ok('dashboards.render', {
      blocks: [
        { type: 'agenda', agenda: { from: mon, to: plus(mon, 20), sources: ['events', 'tasks'], overdue: false } },
        { type: 'event', event: { event_id: meeting.id } },
        { type: 'event', event: { kind: 'tax', horizon: 30 } },
      ],
    })).blocks;
    const [agenda, pinned, following] = rendered;
    // Within a day: all-day first, then by the hour; a day's events before its tasks. Rosa's cancelled
    // booking and the first racer's are gone, Santiago's is at its new hour; the bookings' CRM
    // activities are the bookings' own entries (not shown twice); Ulrike's and Víctor's lie past the three weeks.
    expect(agenda.agenda_data.entries.map((e: any) => [e.date, e.source, e.kind, e.title])).toEqual([
      [mon, 'events', 'reminder', 'Llamar a Ñandú'],
      [tue, 'events', 'meeting', 'Asesoría: Daniela Pardo'],
      [tue, 'events', 'meeting', 'Asesoría: Beatriz Ríos'],
      [tue, 'events', 'meeting', 'Asesoría: Esteban Rojas'],
      [tue, 'events', 'meeting', 'Asesoría: Fernanda Gil'],
      [tue, 'events', 'meeting', 'Asesoría: Gabriel Toro'],
      [wed, 'events', 'meeting', 'Reunión de equipo'],
      [wed, 'events', 'meeting', 'Asesoría: Helena Vargas'],
      [wed, 'events', 'meeting', 'Asesoría: Iván Cárdenas'],
      [wed, 'events', 'meeting', 'Asesoría: Julia Ospina'],
      [wed, 'events', 'meeting', 'Asesoría: Kevin Duarte'],
      [wed, 'events', 'meeting', 'Asesoría: Laura Nieto'],
      [thu, 'events', 'meeting', 'Asesoría: Carlos Mejía'],
      [thu, 'events', 'meeting', 'Asesoría: Mateo Lozano'],
      [thu, 'events', 'meeting', 'Asesoría: Natalia Ruiz'],
      [thu, 'events', 'meeting', 'Asesoría: Óscar Pineda'],
      [thu, 'events', 'meeting', 'Asesoría: Paula Herrera'],
      [thu, 'tasks', 'deadline', 'NAN-1 Informe'],
      [fri, 'events', 'tax', 'Declaración de IVA'],
      [fri, 'events', 'meeting', 'Asesoría: Quintín Salas'],
      [fri, 'events', 'meeting', 'Asesoría: Walter Gómez'],
      [fri, 'events', 'meeting', 'Asesoría: Santiago Mora'],
      // The second Wednesday is the exception; the third takes place.
      [plus(wed, 14), 'events', 'meeting', 'Reunión de equipo'],
    ]);
    // Bogotá is UTC−5: Wednesday 08:00 is 13:00Z.
    expect(pinned.event_data).toEqual({
      pinned: meeting.id,
      event: { date: wed, kind: 'meeting', source: 'events', title: 'Reunión de equipo', event_id: meeting.id, recurrence_id: `${wed}T08:00`, status: 'confirmed', all_day: false, starts_at: `${wed}T13:00:00.000Z`, ends_at: `${wed}T13:30:00.000Z`, time_zone: 'America/Bogota' },
    });
    expect(following.event_data.event).toMatchObject({ date: fri, kind: 'tax', title: 'Declaración de IVA', event_id: vat.id, all_day: true });

    // Every source of issue 35, written out.
    const rows = async (source: string) => (await ok('records.list', { source, limit: 100 })).rows as any[];
    const racer = first.name as string;
    const racerEmail = first.email as string;
    // [name, start (UTC), status, the booker's zone]: 9:00 Bogotá is 14Z, … 13:00 is 18Z.
    const bookings: [string, string, string, string][] = [
      ['Beatriz Ríos', at(tue, 10), 'confirmed', 'America/Bogota'],
      ['Carlos Mejía', at(thu, 9), 'confirmed', 'UTC'],
      [racer, at(tue, 10), 'cancelled', 'America/Bogota'],
      ['Daniela Pardo', at(tue, 9), 'confirmed', 'America/Bogota'],
      ['Esteban Rojas', at(tue, 11), 'confirmed', 'America/Bogota'],
      ['Fernanda Gil', at(tue, 12), 'confirmed', 'America/Bogota'],
      ['Gabriel Toro', at(tue, 13), 'confirmed', 'America/Bogota'],
      ['Helena Vargas', at(wed, 9), 'confirmed', 'America/Bogota'],
      ['Iván Cárdenas', at(wed, 10), 'confirmed', 'America/Bogota'],
      ['Julia Ospina', at(wed, 11), 'confirmed', 'America/Bogota'],
      ['Kevin Duarte', at(wed, 12), 'confirmed', 'America/Bogota'],
      ['Laura Nieto', at(wed, 13), 'confirmed', 'America/Bogota'],
      ['Mateo Lozano', at(thu, 10), 'confirmed', 'America/Bogota'],
      ['Natalia Ruiz', at(thu, 11), 'confirmed', 'America/Bogota'],
      ['Óscar Pineda', at(thu, 12), 'confirmed', 'America/Bogota'],
      ['Paula Herrera', at(thu, 13), 'confirmed', 'America/Bogota'],
      ['Quintín Salas', at(fri, 9), 'confirmed', 'America/Bogota'],
      ['Rosa Castaño', at(fri, 10), 'cancelled', 'America/Bogota'],
      ['Santiago Mora', at(fri, 12), 'confirmed', 'America/Bogota'],
      ['Ulrike Weber', at(winter, 9), 'confirmed', 'Europe/Madrid'],
      ['Víctor Sanz', at(summer, 9), 'confirmed', 'Europe/Madrid'],
      ['Walter Gómez', at(fri, 10), 'confirmed', 'America/Bogota'],
    ];
    const byName = (a: any[], b: any[]) => String(a[0]).localeCompare(String(b[0]));
    expect((await rows('bookings')).map((b) => [b.name, b.start, b.status, b.time_zone]).sort(byName)).toEqual([...bookings].sort(byName));
    // Each booking has its calendar event; a cancelled booking's is cancelled.
    expect((await rows('calendar_events')).map((e) => [e.title, e.kind, e.status]).sort(byName)).toEqual([
      ['Declaración de IVA', 'tax', 'confirmed'], ['Reunión de equipo', 'meeting', 'confirmed'],
      ...bookings.map(([name, , status]) => [`Asesoría: ${name}`, 'meeting', status]),
    ].sort(byName));
    expect((await rows('booking_types')).map((t) => [t.slug, t.name, t.duration_min, t.time_zone, t.status, t.price])).toEqual([['asesoria', 'Asesoría', 60, 'America/Bogota', 'active', null]]);
    expect((await rows('calendar_accounts')).map((a) => [a.name, a.username, a.status, a.last_error])).toEqual([['Agenda de Ana', 'ana', 'connected', null]]);
    expect((await rows('connected_calendars')).map((c) => [c.name, c.counts_for_availability, c.status, c.last_sync_method])).toEqual([['ana/trabajo', true, 'active', 'sync-collection']]);
    // After the second sync: the audit at its new hour, the trip gone.
    expect((await rows('connected_calendar_events')).map((e) => [e.uid, e.title, e.start, e.end, e.busy])).toEqual([['auditoria@telefono', 'Auditoría externa (movida)', `${fri}T18:00:00.000Z`, `${fri}T19:00:00.000Z`, true]]);
    expect((await rows('project_tasks')).map((t) => [t.ref, t.title, t.column, t.due_date]).sort(byName)).toEqual([['NAN-1', 'Informe', 'Doing', thu], ['NAN-2', 'Cuenta de cobro', 'Done', fri]]);
    expect((await rows('project_columns')).map((c) => [c.column, c.position, c.tasks])).toEqual([['To do', 0, 0], ['Doing', 1, 1], ['Done', 2, 1]]);

    // The page's bookings are the visitor's calls, in the ledger like any other: nineteen booked.
    expect((await ok('ledger.list', { tool: 'bookings.create', limit: 100 })).rows.filter((e: any) => e.actor.type === 'visitor' && e.outcome === 'ok').map((e: any) => e.actor.id))
      .toEqual(Array.from({ length: 19 }, () => 'booking-page/asesoria'));

    // CRM: one party per booker's e-mail (made from the booking), one activity per booking at its hour
    // in Bogotá; a cancelled booking's activity done, Santiago's moved to 12:00.
    const activities = await until(async () => (await ok('activities.list', { limit: 100 })).rows.filter((a: any) => a.booking_id) as any[],
      (list) => list.length >= bookings.length && list.find((a) => a.subject === 'Asesoría: Santiago Mora')?.due_time === '12:00');
    const bogota = (start: string) => [start.slice(0, 10), `${String(Number(start.slice(11, 13)) - 5).padStart(2, '0')}:00`];
    expect(activities.map((a) => [a.subject, a.due_date, a.due_time, a.status]).sort(byName))
      .toEqual(bookings.map(([name, start, status]) => [`Asesoría: ${name}`, ...bogota(start), status === 'cancelled' ? 'done' : 'open']).sort(byName));
    const parties = (await ok('parties.list', { limit: 100 })).rows as any[];
    const emails = ['beatriz@example.co', 'carlos@example.co', racerEmail, ...plan.map(([, , , email]) => email), 'ulrike@correo.example', 'victor@correo.example', 'walter@example.co'];
    expect(parties.filter((p) => p.tags?.includes('from_booking')).map((p) => p.email).sort()).toEqual(emails.sort());
    expect(new Set(activities.map((a) => a.party_id)).size).toBe(emails.length);
  }, 60_000);
});

