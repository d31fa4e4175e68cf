// Calendar events straight at the projects subgraph: recurrence expanded on the event's wall clock
// (DST written out by hand), exceptions and overridden instances, the `events` lane with overdue
// obligations, the records source, and every refusal with its code and pointer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;

beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

async function make(ws: Principal, input: Record<string, unknown>) {
  const r = await svc.call('calendar_events.create', input, ws);
  if (!r.ok) throw new Error(`${r.code} ${r.field} ${r.message}`);
  return r.output.event;
}

async function lane(ws: Principal, from: string, to: string, overdue = true) {
  const r = await svc.graphql('query($w: JSON!) { projectsAgenda(lane: "events", window: $w) }', { w: { from, to, limit: 400, overdue } }, ws);
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data.projectsAgenda as any[];
}

describe('recurrence in the event’s zone', () => {
  it('keeps a weekly 10:00 Madrid meeting at 10:00 across the March 2026 change, which moves it an hour for a Bogotá attendee', async () => {
    const ws = testPrincipal();
    const e = await make(ws, { title: 'Comité', kind: 'meeting', start: '2026-03-16T10:00', end: '2026-03-16T11:00', time_zone: 'Europe/Madrid', rrule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=4' });
    // Europe/Madrid: CET (UTC+1) until Sunday 29 March 2026 01:00 UTC, CEST (UTC+2) after.
    // 16 and 23 March: 10:00 − 1 h = 09:00Z (Bogotá, UTC−5: 04:00). 30 March and 6 April: 10:00 − 2 h = 08:00Z (Bogotá 03:00).
    const entries = await lane(ws, '2026-03-01', '2026-04-30');
    expect(entries.map((x) => [x.date, x.starts_at, x.ends_at, x.recurrence_id])).toEqual([
      ['2026-03-16', '2026-03-16T09:00:00.000Z', '2026-03-16T10:00:00.000Z', '2026-03-16T10:00'],
      ['2026-03-23', '2026-03-23T09:00:00.000Z', '2026-03-23T10:00:00.000Z', '2026-03-23T10:00'],
      ['2026-03-30', '2026-03-30T08:00:00.000Z', '2026-03-30T09:00:00.000Z', '2026-03-30T10:00'],
      ['2026-04-06', '2026-04-06T08:00:00.000Z', '2026-04-06T09:00:00.000Z', '2026-04-06T10:00'],
    ]);
    expect(e.start).toBe('2026-03-16T09:00:00.000Z');
  });

  it('removes one occurrence (EXDATE) and moves another (RECURRENCE-ID), each by its original start', async () => {
    const ws = testPrincipal();
    const e = await make(ws, { title: 'Equipo', kind: 'meeting', start: '2026-12-07T09:00', end: '2026-12-07T09:30', rrule: 'FREQ=WEEKLY;BYDAY=MO,WE' });
    expect((await svc.call('calendar_events.cancel', { id: e.id, occurrence: '2026-12-09T09:00' }, ws)).ok).toBe(true);
    const moved = await svc.call('calendar_events.update', { id: e.id, occurrence: '2026-12-14T09:00', start: '2026-12-15T15:00', end: '2026-12-15T16:00', title: 'Equipo (martes)' }, ws);
    expect(moved.ok).toBe(true);
    // Bogotá is UTC−5 all year: 09:00 local = 14:00Z.
    const entries = await lane(ws, '2026-12-07', '2026-12-16');
    expect(entries.map((x) => [x.date, x.starts_at, x.title])).toEqual([
      ['2026-12-07', '2026-12-07T14:00:00.000Z', 'Equipo'],
      ['2026-12-15', '2026-12-15T20:00:00.000Z', 'Equipo (martes)'],
      ['2026-12-16', '2026-12-16T14:00:00.000Z', 'Equipo'],
    ]);
    // Refusals: an instance the rule does not make; a field one instance cannot change; cancelling it twice.
    expect(await svc.call('calendar_events.cancel', { id: e.id, occurrence: '2026-12-08T09:00' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/occurrence' });
    expect(await svc.call('calendar_events.update', { id: e.id, occurrence: '2026-12-16T09:00', location: 'Sala 2' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/location' });
    expect(await svc.call('calendar_events.cancel', { id: e.id, occurrence: '2026-12-09T09:00' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('stores an all-day event as dates and shows it on its own date whatever the zone', async () => {
    const ws = testPrincipal();
    const e = await make(ws, { title: 'Declaración de renta', kind: 'tax', all_day: true, start: '2026-08-12', time_zone: 'Europe/Madrid' });
    expect(e).toMatchObject({ all_day: true, start_local: '2026-08-12', end_local: '2026-08-12', start: '2026-08-11T22:00:00.000Z', end: '2026-08-12T22:00:00.000Z' });
    expect((await lane(ws, '2026-08-12', '2026-08-12')).map((x) => [x.date, x.kind, x.title])).toEqual([['2026-08-12', 'tax', 'Declaración de renta']]);
  });
});

describe('the events lane', () => {
  it('shows obligations of the 90 days before the window that were never closed as overdue, and drops them once done', async () => {
    const ws = testPrincipal();
    const filed = await make(ws, { title: 'IVA bimestral', kind: 'tax', all_day: true, start: '2026-09-10' });
    const open = await make(ws, { title: 'Renovar matrícula', kind: 'legal', all_day: true, start: '2026-10-01' });
    await make(ws, { title: 'Muy vieja', kind: 'deadline', all_day: true, start: '2026-07-01' });
    await make(ws, { title: 'Reunión pasada', kind: 'meeting', start: '2026-10-05T10:00', end: '2026-10-05T11:00' });
    await make(ws, { title: 'Cancelada', kind: 'deadline', all_day: true, start: '2026-10-06' }).then((e) => svc.call('calendar_events.cancel', { id: e.id }, ws));
    expect((await svc.call('calendar_events.complete', { id: filed.id }, ws)).ok).toBe(true);
    // Window from 2026-11-01: 90 days before reaches 2026-08-03. The July deadline is older; the meeting is no obligation;
    // the filed VAT is done; the cancelled deadline is closed. Only the registration renewal is overdue.
    const entries = await lane(ws, '2026-11-01', '2026-11-30');
    expect(entries.map((x) => [x.date, x.title, x.overdue])).toEqual([['2026-10-01', 'Renovar matrícula', true]]);
    expect(await lane(ws, '2026-11-01', '2026-11-30', false)).toEqual([]);
    expect((await svc.call('calendar_events.complete', { id: open.id }, ws)).ok).toBe(true);
    expect(await lane(ws, '2026-11-01', '2026-11-30')).toEqual([]);
    expect(await svc.call('calendar_events.complete', { id: open.id }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('never shows another workspace’s events', async () => {
    const a = testPrincipal();
    const b = testPrincipal();
    await make(a, { title: 'Secreto', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T11:00' });
    expect(await lane(b, '2026-12-01', '2026-12-01')).toEqual([]);
  });
});

describe('refusals', () => {
  const ws = testPrincipal();
  it.each([
    ['an unknown zone', { title: 'x', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T11:00', time_zone: 'Mars/Olympus' }, '/time_zone'],
    ['an end before the start', { title: 'x', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T09:00' }, '/end'],
    ['a timed event without end', { title: 'x', kind: 'meeting', start: '2026-12-01T10:00' }, '/end'],
    ['a date on a timed event', { title: 'x', kind: 'meeting', start: '2026-12-01' }, '/start'],
    ['a time skipped by the clocks (Madrid, 29 March 2026 02:30)', { title: 'x', kind: 'meeting', start: '2026-03-29T02:30', end: '2026-03-29T04:00', time_zone: 'Europe/Madrid' }, '/start'],
    ['a rule that is not RFC 5545', { title: 'x', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T11:00', rrule: 'EVERY MONDAY' }, '/rrule'],
    ['a rule repeating every minute', { title: 'x', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T11:00', rrule: 'FREQ=MINUTELY' }, '/rrule'],
    ['exceptions without a rule', { title: 'x', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T11:00', exdates: ['2026-12-08T10:00'] }, '/exdates'],
    ['an event of 70 days', { title: 'x', kind: 'event', all_day: true, start: '2026-01-01', end: '2026-03-11' }, '/end'],
    ['an unknown kind', { title: 'x', kind: 'party', start: '2026-12-01T10:00', end: '2026-12-01T11:00' }, '/kind'],
  ])('refuses %s', async (_what, input, field) => {
    expect(await svc.call('calendar_events.create', input, ws)).toMatchObject({ ok: false, code: 'invalid_input', field });
  });

  it('answers not_found for another workspace’s event and conflict for a cancelled one', async () => {
    const e = await make(ws, { title: 'Mía', kind: 'meeting', start: '2026-12-01T10:00', end: '2026-12-01T11:00' });
    expect(await svc.call('calendar_events.update', { id: e.id, title: 'Suya' }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    expect((await svc.call('calendar_events.cancel', { id: e.id }, ws)).ok).toBe(true);
    expect(await svc.call('calendar_events.update', { id: e.id, title: 'Otra' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('answers the records source by kind and status, and one event by ref with its next occurrence', async () => {
    const w = testPrincipal();
    const e = await make(w, { title: 'Cierre mensual', kind: 'deadline', all_day: true, start: '2026-01-31', rrule: 'FREQ=MONTHLY;BYMONTHDAY=-1' });
    await make(w, { title: 'Almuerzo', kind: 'meeting', start: '2026-12-01T12:00', end: '2026-12-01T13:00' });
    const r = await svc.graphql('query($q: JSON!) { projectsRecords(query: $q) }', { q: { source: 'calendar_events', kind: 'deadline' } }, w);
    expect(r.body.data.projectsRecords.rows.map((x: any) => x.title)).toEqual(['Cierre mensual']);
    const one = await svc.graphql('query($q: JSON!) { projectsRecords(query: $q) }', { q: { source: 'calendar_events', ref: e.id } }, w);
    expect(one.body.data.projectsRecords.rows[0].next.start >= new Date().toISOString().slice(0, 10)).toBe(true);
    const bad = await svc.graphql('query($q: JSON!) { projectsRecords(query: $q) }', { q: { source: 'calendar_events', status: 'open' } }, w);
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/status' });
  });
});
