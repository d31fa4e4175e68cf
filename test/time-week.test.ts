// A consultancy's week through the real gateway and subgraphs (issue 35, the parts built): bookings of
// one slot racing over REST (one booked, nine 409), a cancelled slot re-booked by someone else, a
// booking from the public page (a visitor, through the pipeline), a holiday refused, a weekly team meeting with one exception, a tax deadline, a CRM call, tasks moved
// across columns — and the agenda's events and tasks lanes and the event block (pinned and following) equal
// to the expectation written out below.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colombianHolidays } from '@cuadra/shared';
import { Agent, fetch as fetchFrom } from 'undici';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let slug: string;

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

beforeAll(async () => {
  sys = await startTestSystem('time_week');
  const ws = await sys.workspace('Consultora Andina SAS');
  key = ws.api_key;
  slug = (await sys.identity.slugOf(ws.workspace_id))!;
});
afterAll(async () => {
  await sys?.stop();
});

const plus = (date: string, n: number) => new Date(Date.parse(`${date}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const isHoliday = (d: string) => colombianHolidays(Number(d.slice(0, 4))).some((h) => h.date === d);
/** The Monday of the first week, at least a week ahead, whose Tuesday to Friday are working days. */
function weekAhead(): string {
  for (let d = plus(new Date().toISOString().slice(0, 10), 7); ; d = plus(d, 1)) {
    if (new Date(`${d}T12:00:00Z`).getUTCDay() === 1 && [1, 2, 3, 4].every((i) => !isHoliday(plus(d, i)))) return d;
  }
}

describe('a week of a consultancy', () => {
  it('books, races, cancels, meets, files and moves — and the lanes and event blocks say exactly that', async () => {
    const mon = weekAhead();
    const [tue, wed, thu, fri] = [1, 2, 3, 4].map((i) => plus(mon, i));
    const type = (await ok('booking_types.create', {
      slug: 'asesoria', name: 'Asesoría', duration_min: 60, min_notice_min: 60, window_days: 365,
      weekly: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri'].map((d) => [d, [{ start: '09:00', end: '12:00' }]])),
    })).booking_type;

    // Ten people book Tuesday 10:00 Bogotá (15:00Z) at once, over REST: one booking, nine 409 conflict.
    const tuesday10 = `${tue}T15:00:00Z`;
    const race = await Promise.all(Array.from({ length: 10 }, (_, i) => sys.invoke('bookings.create', { type_id: type.id, start: tuesday10, name: `Cliente ${i}`, email: `cliente${i}@example.co` }, key)));
    expect(race.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of race.filter((x) => x.status === 409)) expect(r.body.code).toBe('conflict');
    const first = race.find((r) => r.status === 200)!.body.output.booking;
    const slotsTuesday = async () => (await ok('bookings.availability', { type_id: type.id, from: tue, to: tue })).slots.map((s: any) => s.time);
    expect(await slotsTuesday()).toEqual(['09:00', '11:00']);
    // Cancelled, the slot is offered again and someone else takes it.
    await ok('bookings.cancel', { id: first.id });
    expect(await slotsTuesday()).toEqual(['09:00', '10:00', '11:00']);
    const second = (await ok('bookings.create', { type_id: type.id, start: tuesday10, name: 'Beatriz Ríos', email: 'beatriz@example.co' })).booking;
    // Thursday 9:00 Bogotá is 14:00Z; asked from UTC it reads 14:00.
    const thursday = (await ok('bookings.availability', { type_id: type.id, from: thu, to: thu, time_zone: 'UTC' })).slots;
    expect(thursday.map((s: any) => s.time)).toEqual(['14:00', '15:00', '16:00']);
    await ok('bookings.create', { type_id: type.id, start: thursday[0].start, name: 'Carlos Mejía', email: 'carlos@example.co', time_zone: 'UTC' });
    // A visitor books Wednesday 9:00 Bogotá (14:00Z) on the public page, without an account: the form the
    // page gave, posted from the visitor's own address (the page's limit counts per address).
    const visitor = new Agent({ localAddress: `127.${150 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}.3` });
    const pageUrl = `${sys.gatewayUrl}/book/${slug}/asesoria`;
    const ficha = /name="ficha" value="([A-Za-z0-9_-]+)"/.exec(await (await fetchFrom(`${pageUrl}?fecha=${wed}`, { dispatcher: visitor })).text())![1];
    const booked = await fetchFrom(pageUrl, {
      method: 'POST', dispatcher: visitor, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ inicio: `${wed}T14:00:00.000Z`, nombre: 'Daniela Pardo', correo: 'daniela@example.co', zona: 'America/Bogota', ficha }).toString(),
    });
    expect(booked.status).toBe(201);
    await visitor.close();
    // A holiday on a weekday is refused at /start.
    const holiday = colombianHolidays(Number(mon.slice(0, 4)) + 1).find((h) => [1, 2, 3, 4, 5].includes(new Date(`${h.date}T12:00:00Z`).getUTCDay()))!.date;
    const refused = await sys.invoke('bookings.create', { type_id: type.id, start: `${holiday}T14:00:00Z`, name: 'Festivo', email: 'f@example.co' }, key);
    expect([refused.status, refused.body.code, refused.body.field]).toEqual([422, 'invalid_input', '/start']);

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
    expect(agenda.agenda_data.entries.map((e: any) => [e.date, e.source, e.kind, e.title])).toEqual([
      [mon, 'events', 'reminder', 'Llamar a Ñandú'],
      [tue, 'events', 'meeting', 'Asesoría: Beatriz Ríos'],
      [wed, 'events', 'meeting', 'Reunión de equipo'],
      [wed, 'events', 'meeting', 'Asesoría: Daniela Pardo'],
      [thu, 'events', 'meeting', 'Asesoría: Carlos Mejía'],
      [thu, 'tasks', 'deadline', 'NAN-1 Informe'],
      [fri, 'events', 'tax', 'Declaración de IVA'],
      // The second Wednesday is the exception; the third takes place.
      [plus(wed, 14), 'events', 'meeting', 'Reunión de equipo'],
    ]);
    // Bogotá is UTC−5: Wednesday 08:00 is 13:00Z.
    expect(pinned.event_data).toEqual({
      pinned: meeting.id,
      event: { date: wed, kind: 'meeting', source: 'events', title: 'Reunión de equipo', event_id: meeting.id, recurrence_id: `${wed}T08:00`, status: 'confirmed', all_day: false, starts_at: `${wed}T13:00:00.000Z`, ends_at: `${wed}T13:30:00.000Z`, time_zone: 'America/Bogota' },
    });
    expect(following.event_data.event).toMatchObject({ date: fri, kind: 'tax', title: 'Declaración de IVA', event_id: vat.id });
    // The booking's own record and the records sources agree.
    expect((await ok('records.list', { source: 'bookings', status: 'confirmed' })).rows.map((r: any) => r.name).sort()).toEqual(['Beatriz Ríos', 'Carlos Mejía', 'Daniela Pardo']);
    // The page's booking is the visitor's call, in the ledger like any other.
    expect((await ok('ledger.list', { tool: 'bookings.create', limit: 50 })).rows.filter((e: any) => e.actor.type === 'visitor').map((e: any) => [e.actor.id, e.outcome])).toEqual([['booking-page/asesoria', 'ok']]);
    expect((await ok('records.list', { source: 'bookings', status: 'cancelled' })).rows.map((r: any) => r.id)).toEqual([first.id]);
    expect(second.status).toBe('confirmed');
  }, 120_000);
});
