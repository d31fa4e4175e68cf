// Booking types and bookings straight at the projects subgraph: slots on the type's clock asked from
// another zone (Madrid in summer and winter, written out), holidays, buffers, notice, daily limit, the
// workspace's events, ten bookings of one slot at once (one wins), a cancelled slot offered again,
// rescheduling, and every refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { colombianHolidays, type Principal } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { writeMissingEvents } from '../../src/modules/bookings/book.ts';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

async function ok(ws: Principal, tool: string, input: Record<string, unknown>) {
  const r = await svc.call(tool, input, ws);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

const today = new Date().toISOString().slice(0, 10);
const plusDays = (date: string, n: number) => new Date(Date.parse(`${date}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
/** The first date after `from` (at least `skip` days later) in `month` (1–12, any when 0) on ISO weekday `wd`, not a Colombian holiday. */
function nextDay(from: string, wd: number, month = 0, skip = 3): string {
  for (let d = plusDays(from, skip); ; d = plusDays(d, 1)) {
    const day = new Date(`${d}T12:00:00Z`).getUTCDay() || 7;
    if (day === wd && (!month || Number(d.slice(5, 7)) === month) && !colombianHolidays(Number(d.slice(0, 4))).some((h) => h.date === d)) return d;
  }
}

async function consultancy(ws: Principal, extra: Record<string, unknown> = {}) {
  return (await ok(ws, 'booking_types.create', {
    slug: 'asesoria', name: 'Asesoría', duration_min: 60, window_days: 365, min_notice_min: 60,
    weekly: { mon: [{ start: '09:00', end: '12:00' }], tue: [{ start: '09:00', end: '12:00' }], wed: [{ start: '09:00', end: '12:00' }], thu: [{ start: '09:00', end: '12:00' }], fri: [{ start: '09:00', end: '12:00' }] },
    ...extra,
  })).booking_type;
}

const slots = async (ws: Principal, type: string, from: string, to = from, time_zone?: string) =>
  (await ok(ws, 'bookings.availability', { type_id: type, from, to, ...(time_zone ? { time_zone } : {}) })).slots as { start: string; local: string; date: string; time: string }[];

describe('availability in the asker’s zone', () => {
  it('offers 9:00 Bogotá as 16:00 in Madrid in summer and 15:00 in winter', async () => {
    const ws = testPrincipal();
    const type = await consultancy(ws);
    // Bogotá is UTC−5 all year, so 09:00 there is 14:00Z. Madrid is UTC+2 in summer (CEST, last Sunday of March to last
    // Sunday of October) and UTC+1 in winter (CET): 14:00Z is 16:00 in July and 15:00 in January.
    const july = nextDay(today, 2, 7);
    const january = nextDay(today, 2, 1);
    const summer = await slots(ws, type.id, july, july, 'Europe/Madrid');
    expect(summer.map((s) => [s.start.slice(11, 16), s.time, s.local.slice(19)])).toEqual([['14:00', '16:00', '+02:00'], ['15:00', '17:00', '+02:00'], ['16:00', '18:00', '+02:00']]);
    const winter = await slots(ws, type.id, january, january, 'Europe/Madrid');
    expect(winter.map((s) => [s.start.slice(11, 16), s.time, s.local.slice(19)])).toEqual([['14:00', '15:00', '+01:00'], ['15:00', '16:00', '+01:00'], ['16:00', '17:00', '+01:00']]);
    // Asked in Bogotá the same slots read 09:00, 10:00, 11:00 with −05:00.
    expect((await slots(ws, type.id, july, july)).map((s) => s.local.slice(11))).toEqual(['09:00:00-05:00', '10:00:00-05:00', '11:00:00-05:00']);
  });

  it('closes Colombian public holidays unless the type keeps them, and honours date overrides', async () => {
    const ws = testPrincipal();
    const year = Number(today.slice(0, 4)) + 1;
    const holiday = colombianHolidays(year).find((h) => { const wd = new Date(`${h.date}T12:00:00Z`).getUTCDay(); return wd >= 1 && wd <= 5 && h.date > plusDays(today, 2); })!.date;
    const closed = await consultancy(ws);
    expect(await slots(ws, closed.id, holiday)).toEqual([]);
    expect(await svc.call('bookings.create', { type_id: closed.id, start: `${holiday}T14:00:00Z`, name: 'Ana', email: 'ana@example.co' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/start' });
    const open = await consultancy(ws, { slug: 'festivos', exclude_holidays: false, overrides: [{ date: holiday, intervals: [{ start: '10:00', end: '11:00' }] }] });
    expect((await slots(ws, open.id, holiday)).map((s) => s.time)).toEqual(['10:00']);
  });

  it('subtracts the workspace’s events and bookings with their buffers, and keeps the minimum notice', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 3);
    const type = await consultancy(ws, { duration_min: 30, slot_step_min: 30, buffer_after_min: 15 });
    expect((await slots(ws, type.id, day)).map((s) => s.time)).toEqual(['09:00', '09:30', '10:00', '10:30', '11:00', '11:30']);
    // An event 10:00–10:20: a slot needs its 30 minutes and 15 after free, so 09:30 (→ 10:15) and 10:00 go; 10:30 is free.
    await ok(ws, 'calendar_events.create', { title: 'Llamada', kind: 'meeting', start: `${day}T10:00`, end: `${day}T10:20` });
    expect((await slots(ws, type.id, day)).map((s) => s.time)).toEqual(['09:00', '10:30', '11:00', '11:30']);
    // A booking at 11:00 holds 11:00–11:45: 11:30 goes, and 10:30 (→ 11:15 with its buffer) too.
    await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T16:00:00Z`, name: 'Luis', email: 'luis@example.co' });
    expect((await slots(ws, type.id, day)).map((s) => s.time)).toEqual(['09:00']);
    // Minimum notice: a type needing 10 days' notice offers nothing in the next 9.
    const far = await consultancy(ws, { slug: 'lejos', min_notice_min: 10 * 24 * 60 });
    expect(await slots(ws, far.id, plusDays(today, 1), plusDays(today, 9))).toEqual([]);
  });

  it('stops at the daily limit', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 4);
    const type = await consultancy(ws, { daily_limit: 2 });
    await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T14:00:00Z`, name: 'A', email: 'a@example.co' });
    await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T15:00:00Z`, name: 'B', email: 'b@example.co' });
    expect(await slots(ws, type.id, day)).toEqual([]);
    expect(await svc.call('bookings.create', { type_id: type.id, start: `${day}T16:00:00Z`, name: 'C', email: 'c@example.co' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('never a double booking', () => {
  it('books one of ten concurrent bookings of a slot and refuses nine with 409; a cancelled slot is booked by someone else', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 5);
    const type = await consultancy(ws);
    const start = `${day}T15:00:00Z`;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => svc.call('bookings.create', { type_id: type.id, start, name: `Cliente ${i}`, email: `c${i}@example.co` }, ws)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => [r.httpStatus, r.code])).toEqual(Array.from({ length: 9 }, () => [409, 'conflict']));
    const won = results.find((r) => r.ok)!.output.booking;
    expect((await ok(ws, 'bookings.list', { status: 'confirmed' })).rows).toHaveLength(1);
    expect((await slots(ws, type.id, day)).map((s) => s.start)).not.toContain(`${day}T15:00:00.000Z`);
    await ok(ws, 'bookings.cancel', { id: won.id });
    expect((await slots(ws, type.id, day)).map((s) => s.start)).toContain(`${day}T15:00:00.000Z`);
    const other = (await ok(ws, 'bookings.create', { type_id: type.id, start, name: 'Otra persona', email: 'otra@example.co' })).booking;
    expect(other).toMatchObject({ status: 'confirmed', email: 'otra@example.co' });
    expect(await svc.call('bookings.cancel', { id: won.id }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('reschedules into a free slot, frees the old one, and refuses a taken one', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 1);
    const type = await consultancy(ws, { confirmation_required: true });
    const a = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T14:00:00Z`, name: 'A', email: 'a@example.co' })).booking;
    const b = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T15:00:00Z`, name: 'B', email: 'b@example.co' })).booking;
    expect(a.status).toBe('pending');
    expect(await svc.call('bookings.reschedule', { id: a.id, start: `${day}T15:00:00Z` }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    const moved = (await ok(ws, 'bookings.reschedule', { id: a.id, start: `${day}T16:00:00Z` })).booking;
    expect(moved.start).toBe(`${day}T16:00:00.000Z`);
    expect((await slots(ws, type.id, day)).map((s) => s.start.slice(11, 16))).toEqual(['14:00']);
    expect((await ok(ws, 'bookings.confirm', { id: b.id })).booking.status).toBe('confirmed');
    expect(await svc.call('bookings.confirm', { id: b.id }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    // The booking's event followed it: tentative until confirmed, at the new time.
    const ev = (await ok(ws, 'calendar_events.get', { id: moved.event_id })).event;
    expect(ev).toMatchObject({ start: `${day}T16:00:00.000Z`, status: 'tentative', source: 'booking', booking_id: a.id });
    expect(await svc.call('calendar_events.cancel', { id: moved.event_id }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('rescheduling under a daily limit', () => {
  it('moves the day’s place with the booking: the old day is bookable again, the new one full', async () => {
    const ws = testPrincipal();
    const day1 = nextDay(today, 2);
    const day2 = nextDay(today, 3);
    const type = await consultancy(ws, { daily_limit: 1 });
    const a = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day1}T14:00:00Z`, name: 'A', email: 'a@example.co' })).booking;
    await ok(ws, 'bookings.reschedule', { id: a.id, start: `${day2}T14:00:00Z` });
    expect(await slots(ws, type.id, day2)).toEqual([]);
    expect((await slots(ws, type.id, day1)).map((s) => s.time)).toEqual(['09:00', '10:00', '11:00']);
    expect((await ok(ws, 'bookings.create', { type_id: type.id, start: `${day1}T15:00:00Z`, name: 'B', email: 'b@example.co' })).booking.status).toBe('confirmed');
    expect(await svc.call('bookings.create', { type_id: type.id, start: `${day2}T16:00:00Z`, name: 'C', email: 'c@example.co' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    // The day's place is held by a unique claim, not only counted: two moves into one day at once keep one.
    const day3 = nextDay(today, 5);
    const b2 = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${nextDay(today, 4)}T14:00:00Z`, name: 'D', email: 'd@example.co' })).booking;
    const moves = await Promise.all([
      svc.call('bookings.reschedule', { id: a.id, start: `${day3}T14:00:00Z` }, ws),
      svc.call('bookings.reschedule', { id: b2.id, start: `${day3}T16:00:00Z` }, ws),
    ]);
    expect(moves.filter((m) => m.ok)).toHaveLength(1);
    expect(moves.find((m) => !m.ok)).toMatchObject({ code: 'conflict' });
  });
});

describe('booking_types.update', () => {
  it('changes what is offered from then on (hours, duration), and refuses to change an archived type', async () => {
    const ws = testPrincipal();
    const type = await consultancy(ws);
    const day = nextDay(today, 3);
    expect((await slots(ws, type.id, day)).map((s) => s.time)).toEqual(['09:00', '10:00', '11:00']);
    // Wednesdays 14:00–16:00 in 30-minute meetings every 30 minutes (the step is its own field, set at
    // creation to the duration then): 14:00, 14:30, 15:00, 15:30.
    const updated = (await ok(ws, 'booking_types.update', { id: type.id, duration_min: 30, slot_step_min: 30, weekly: { wed: [{ start: '14:00', end: '16:00' }] } })).booking_type;
    expect([updated.duration_min, updated.slot_step_min, updated.name]).toEqual([30, 30, 'Asesoría']);
    expect((await slots(ws, type.id, day)).map((s) => s.time)).toEqual(['14:00', '14:30', '15:00', '15:30']);
    await ok(ws, 'booking_types.archive', { id: type.id });
    const refused = await svc.call('booking_types.update', { id: type.id, name: 'Otra' }, ws);
    expect([refused.ok, refused.code]).toEqual([false, 'conflict']);
    expect((await ok(ws, 'booking_types.get', { id: type.id })).booking_type.name).toBe('Asesoría');
  });
});

describe('refusals', () => {
  const ws = testPrincipal();
  it.each([
    ['a duration off the 5-minute grain', { slug: 'x', name: 'X', duration_min: 7 }, '/duration_min'],
    ['a slug with capitals', { slug: 'Asesoría', name: 'X', duration_min: 30 }, '/slug'],
    ['hours that end before they start', { slug: 'x', name: 'X', duration_min: 30, weekly: { mon: [{ start: '12:00', end: '09:00' }] } }, '/weekly/mon/0/end'],
    ['overlapping hours', { slug: 'x', name: 'X', duration_min: 30, weekly: { mon: [{ start: '09:00', end: '12:00' }, { start: '11:00', end: '13:00' }] } }, '/weekly/mon/1/start'],
    ['an unknown zone', { slug: 'x', name: 'X', duration_min: 30, time_zone: 'America/Gotham' }, '/time_zone'],
    ['a video link that is not https', { slug: 'x', name: 'X', duration_min: 30, video_url: 'http://meet.example/x' }, '/video_url'],
  ])('refuses a type with %s', async (_w, input, field) => {
    expect(await svc.call('booking_types.create', input, ws)).toMatchObject({ ok: false, code: 'invalid_input', field });
  });

  it('refuses bookings that do not fit', async () => {
    const type = await consultancy(ws, { slug: 'preguntas', questions: [{ key: 'empresa', label: 'Empresa', required: true }] });
    const day = nextDay(today, 2);
    const at = `${day}T14:00:00Z`;
    expect(await svc.call('booking_types.create', { slug: 'preguntas', name: 'Dup', duration_min: 30 }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await svc.call('bookings.create', { type_id: type.id, start: at, name: 'A', email: 'a@example.co' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/answers/empresa' });
    expect(await svc.call('bookings.create', { type_id: type.id, start: at, name: 'A', email: 'a@example.co', answers: { empresa: 'X', otra: 'y' } }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/answers/otra' });
    expect(await svc.call('bookings.create', { type_id: type.id, start: `${day}T14:10:00Z`, name: 'A', email: 'a@example.co', answers: { empresa: 'X' } }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/start' });
    expect(await svc.call('bookings.create', { type_id: 'bkt_nope', start: at, name: 'A', email: 'a@example.co' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/type_id' });
    expect(await svc.call('bookings.availability', { type_id: type.id, from: day, to: plusDays(day, 70) }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/to' });
    expect(await svc.call('bookings.availability', { type_id: type.id, from: day, to: day }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
    await ok(ws, 'booking_types.archive', { id: type.id });
    expect(await svc.call('bookings.create', { type_id: type.id, start: at, name: 'A', email: 'a@example.co', answers: { empresa: 'X' } }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await svc.call('booking_types.archive', { id: type.id }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('claims a crash leaves behind', () => {
  // A crash can stop a cancellation between its write (the booking cancelled) and giving back its claims, or a
  // reschedule between claiming the new time and writing the booking there. The state each leaves is written here
  // directly, as the crash would leave it; the slot availability offers must still be bookable by someone else.
  const claims = () => svc.db.collection<{ _id: string; [k: string]: any }>('booking_claims');
  const bookingsColl = () => svc.db.collection<{ _id: string; [k: string]: any }>('bookings');

  it('books a slot whose cancelled booking still holds its claims', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 3);
    const type = await consultancy(ws);
    const start = `${day}T15:00:00Z`;
    const first = (await ok(ws, 'bookings.create', { type_id: type.id, start, name: 'Primera', email: 'p@example.co' })).booking;
    // The cancellation's write went through; the crash came before its claims were given back.
    await bookingsColl().updateOne({ _id: first.id }, { $set: { status: 'cancelled', claims: [], day_claim: null } });
    expect(await claims().countDocuments({ booking_id: first.id })).toBe(12); // 60 minutes in 5-minute cells
    expect((await slots(ws, type.id, day)).map((s) => s.start)).toContain(`${day}T15:00:00.000Z`);
    const second = (await ok(ws, 'bookings.create', { type_id: type.id, start, name: 'Segunda', email: 's@example.co' })).booking;
    expect(second.status).toBe('confirmed');
    expect(await claims().countDocuments({ booking_id: first.id })).toBe(0);
    expect(await claims().countDocuments({ booking_id: second.id })).toBe(12);
  });

  it('books a slot a crashed reschedule claimed but never moved to, once the claim is a minute old', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 4);
    const type = await consultancy(ws);
    const moving = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T14:00:00Z`, name: 'Mueve', email: 'm@example.co' })).booking;
    // The reschedule claimed 16:00–17:00 for the booking, then crashed before writing the booking there.
    const cells = Array.from({ length: 12 }, (_, i) => new Date(Date.parse(`${day}T16:00:00Z`) + i * 300_000).toISOString());
    const fresh = (at: Date) => cells.map((c) => ({ _id: `${ws.workspace}|${c}`, booking_id: moving.id, at }));
    await claims().insertMany(fresh(new Date()));
    expect((await slots(ws, type.id, day)).map((s) => s.start)).toContain(`${day}T16:00:00.000Z`);
    // A claim this young may be a reschedule still under way: refused, the claim kept.
    expect(await svc.call('bookings.create', { type_id: type.id, start: `${day}T16:00:00Z`, name: 'Otro', email: 'o@example.co' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    await claims().deleteMany({ booking_id: moving.id, _id: { $in: cells.map((c) => `${ws.workspace}|${c}`) } });
    await claims().insertMany(fresh(new Date(Date.now() - 61_000)));
    const other = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T16:00:00Z`, name: 'Otro', email: 'o@example.co' })).booking;
    expect(await claims().countDocuments({ booking_id: other.id })).toBe(12);
    // The booking that was moving keeps its own time.
    expect(await claims().countDocuments({ booking_id: moving.id })).toBe(12);
    expect((await ok(ws, 'bookings.get', { id: moving.id })).booking.start).toBe(`${day}T14:00:00.000Z`);
  });
});

describe('a booking whose event a crash never wrote', () => {
  it('gets the event of what it is now from the background repair, once', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 1);
    const type = await consultancy(ws, { confirmation_required: true });
    const b = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T15:00:00Z`, name: 'Sin evento', email: 'se@example.co' })).booking;
    // The crash: the booking written (still event_pending), its event never; then it was confirmed.
    await svc.db.collection<{ _id: string; [k: string]: any }>('calendar_events').deleteOne({ _id: b.event_id });
    await svc.db.collection<{ _id: string; [k: string]: any }>('bookings').updateOne({ _id: b.id }, { $set: { event_pending: true } });
    await ok(ws, 'bookings.confirm', { id: b.id });
    expect(await svc.call('calendar_events.get', { id: b.event_id }, ws)).toMatchObject({ ok: false, code: 'not_found' });
    // Younger than the orphan age (a booking call may still be writing it): left alone.
    expect(await writeMissingEvents(svc.db, new Date())).toBe(0);
    const later = new Date(Date.now() + 61_000);
    expect(await writeMissingEvents(svc.db, later)).toBe(1);
    expect(await writeMissingEvents(svc.db, later)).toBe(0);
    expect((await ok(ws, 'calendar_events.get', { id: b.event_id })).event).toMatchObject({ start: `${day}T15:00:00.000Z`, status: 'confirmed', source: 'booking', booking_id: b.id, title: 'Asesoría: Sin evento' });
    // And it is in the events lane's source of truth: the day's occurrences.
    expect((await ok(ws, 'calendar_events.list', {})).rows.map((e: any) => e.id)).toContain(b.event_id);
  });
});

describe('never two overlapping bookings', () => {
  it('of ten concurrent bookings of overlapping slots, across two types, keeps no two that overlap', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 2);
    const a = await consultancy(ws, { slot_step_min: 15 });
    const b = await consultancy(ws, { slug: 'corta', duration_min: 30, slot_step_min: 15 });
    // 09:00, 09:15 … 11:15 Bogotá (14:00Z …), alternating the 60-minute and the 30-minute type.
    const starts = Array.from({ length: 10 }, (_, i) => new Date(Date.parse(`${day}T14:00:00Z`) + i * 15 * 60_000).toISOString());
    const results = await Promise.all(starts.map((start, i) => svc.call('bookings.create', { type_id: i % 2 ? b.id : a.id, start, name: `C${i}`, email: `c${i}@example.co` }, ws)));
    const kept = results.filter((r) => r.ok).map((r) => r.output.booking as { start: string; end: string });
    expect(kept.length).toBeGreaterThan(0);
    for (const r of results.filter((r) => !r.ok)) expect([r.httpStatus, r.code]).toEqual([409, 'conflict']);
    for (const x of kept) for (const y of kept) if (x !== y) expect(x.end <= y.start || y.end <= x.start).toBe(true);
    expect((await ok(ws, 'bookings.list', { status: 'confirmed' })).rows).toHaveLength(kept.length);
  });
});

describe('booking_claims cleanup', () => {
  it('removes the claims of times that have passed in the maintenance sweep (dating older claims first), never in a read, and keeps those still ahead', async () => {
    const ws = testPrincipal();
    const day = nextDay(today, 2);
    const type = await consultancy(ws, { daily_limit: 3 });
    const b = (await ok(ws, 'bookings.create', { type_id: type.id, start: `${day}T14:00:00Z`, name: 'Futura', email: 'futura@example.co' })).booking;
    const claims = svc.db.collection<{ _id: string; booking_id: string; at: Date; until?: Date }>('booking_claims');
    // 60 minutes in 5-minute cells: 12, plus one place of the day's limit.
    const mine = await claims.find({ booking_id: b.id }).toArray();
    expect(mine).toHaveLength(13);
    // What a booking of last week left, written before claims carried `until` (cells and a day place).
    const wsId = ws.workspace;
    const old = [`${wsId}|2026-01-05T14:00:00.000Z`, `${wsId}|2026-01-05T14:05:00.000Z`, `${wsId}|${type.id}|2026-01-05|1`];
    await claims.insertMany(old.map((_id) => ({ _id, booking_id: 'bkg_antigua', at: new Date('2026-01-02T00:00:00Z') })));
    // Reads leave them alone.
    await ok(ws, 'bookings.availability', { type_id: type.id, from: day, to: day });
    await ok(ws, 'bookings.list', {});
    expect(await claims.countDocuments({ _id: { $in: old } })).toBe(3);

    await svc.sweep();
    expect(await claims.countDocuments({ _id: { $in: old } })).toBe(0);
    // The future booking's 13 claims stand, dated: 14:00Z + 5 min for the first cell, two days after its date for the day place.
    const kept = await claims.find({ booking_id: b.id }).toArray();
    expect(kept).toHaveLength(13);
    expect(kept.find((c) => c._id === `${wsId}|${day}T14:00:00.000Z`)?.until?.toISOString()).toBe(`${day}T14:05:00.000Z`);
    expect(kept.find((c) => c._id === `${wsId}|${type.id}|${day}|1`)?.until?.toISOString()).toBe(`${plusDays(day, 2)}T00:00:00.000Z`);
    // …and still refuse a second booking of that time.
    expect(await svc.call('bookings.create', { type_id: type.id, start: `${day}T14:00:00Z`, name: 'Otra', email: 'otra@example.co' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
  });
});
