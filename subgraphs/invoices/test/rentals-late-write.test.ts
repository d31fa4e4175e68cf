import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { ageDeadAttempt, approvedAndKilled, holdNextInsert, killedAndSettled, type TestSubgraph } from '@cuadra/shared/testing';
import { workspace } from './bills-helpers.ts';
import { party, startInvoices } from './setup.ts';

// The double booking after a kill (asset12's find): a rentals.create whose process dies with the
// rental's insert sent, its hold on the resource already claimed (and stamped with its run, so
// recovery settles the attempt as having written something: the key's retry replays
// outcome_unknown, the approval ends failed). The sweep then meets the hold unconfirmed and, the
// rental not being there, releases it. Before, the store could still apply the dead attempt's insert
// after that: a `reserved` rental with no hold, and an overlapping rental of the same item accepted —
// two customers booked on one tent. Now the sweep withdraws the rental id before it releases the
// hold (a tombstone under that id), so the late insert is refused on `_id` and nothing was booked,
// as the approval's `failed` says. Recovery itself withdraws the id when it settles the call (its
// booking's marker, booking.ts), so no rental lands after the call's story was told; and a rental
// that landed first is the call's answer: its key replays it, its approval ends `executed` with it.
//
// The order is forced, not hoped for: the dead attempt's insert is held in this process until the
// test lets it reach the store (holdNextInsert).

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

async function tentFor(owner: Principal) {
  const customer = await party(owner, { name: 'Eventos Caribe SAS', kind: 'customer' });
  const item = (await sg.output('items.create', { name: 'Carpa 10×10', kind: 'product', price: { amount: 20000000, currency: 'COP' } }, owner)).item;
  const booking = { item_id: item.id, customer_id: customer, unit: 'day', rate: 20000000, start: '2026-12-05T10:00:00Z', end: '2026-12-07T10:00:00Z' };
  const overlapping = { ...booking, start: '2026-12-06T10:00:00Z', end: '2026-12-08T10:00:00Z' };
  return { booking, overlapping };
}

async function rentalsOf(owner: Principal) {
  return sg.db.collection('rentals').find({ workspace: owner.workspace }).toArray();
}

/** What time does to a dead attempt's hold: claimed ten minutes ago, past the sweep's repair delay. */
async function ageHolds(owner: Principal) {
  const long = new Date(Date.now() - 10 * 60_000);
  for (const cal of await sg.db.collection('rental_calendars').find({ workspace: owner.workspace }).toArray()) {
    await sg.db.collection('rental_calendars').updateOne({ _id: cal._id }, { $set: { holds: (cal.holds as object[]).map((h) => ({ ...h, at: long })) } });
  }
}

async function holdsOf(owner: Principal) {
  const cals = await sg.db.collection('rental_calendars').find({ workspace: owner.workspace }).toArray();
  return cals.flatMap((c) => (c.holds as { rental_id: string; confirmed: boolean }[]).map((h) => [h.rental_id, h.confirmed]));
}

describe('a keyed rentals.create whose insert lands after the sweep met its unconfirmed hold', () => {
  it('lands after the hold was released: refused, and an overlapping booking is the one rental, held', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    const held = await killedAndSettled(sg, owner, { tool: 'rentals.create', collection: 'rentals', input: booking, key: 'rent-1' }, () => ageHolds(owner));
    // Recovery saw the stamped hold: the key replays outcome_unknown, nothing is run again.
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-1' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    // The same sweep's rentals pass met the hold unconfirmed, its rental absent, and released it.
    expect(await holdsOf(owner)).toEqual([]);
    expect(await held.land()).toBe('duplicate');

    const other = await sg.call('rentals.create', overlapping, owner, { idempotencyKey: 'rent-2' });
    expect(other).toMatchObject({ ok: true });
    expect((await rentalsOf(owner)).map((r) => r._id)).toEqual([other.output.rental.id]);
    expect(await holdsOf(owner)).toEqual([[other.output.rental.id, true]]);
    expect((await sg.output('rentals.list', {}, owner)).rows.map((r: { id: string }) => r.id)).toEqual([other.output.rental.id]);
  });

  it('lands before the sweep: the hold is confirmed for it, and an overlapping booking is refused', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    const held = holdNextInsert(sg, 'rentals', owner.workspace);
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-3' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    await held.reached;
    expect(await held.land()).toBe('stored');
    await ageHolds(owner);
    await ageDeadAttempt(sg, owner.workspace, 'rentals.create');
    await sg.sweep();
    const stored = await rentalsOf(owner);
    expect(stored.map((r) => r.status)).toEqual(['reserved']);
    expect(await holdsOf(owner)).toEqual([[stored[0]._id, true]]);
    expect(await sg.call('rentals.create', overlapping, owner, { idempotencyKey: 'rent-4' })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await rentalsOf(owner)).toHaveLength(1);
    // The call's answer is the rental that exists: the key replays it, as the first answer would have been.
    const replay = await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-3' });
    expect(replay, JSON.stringify(replay)).toMatchObject({ ok: true });
    expect(replay.output.rental).toMatchObject({ id: stored[0]._id, status: 'reserved', customer_id: booking.customer_id });
    // Its booking's marker is finished, not left for a later pass.
    expect((await sg.db.collection('operations').find({ workspace: owner.workspace, kind: 'rental_booking' }).toArray()).map((m) => [m.record, m.status])).toEqual([[stored[0]._id, 'done']]);
  });

  it('lands after recovery settled the call, before the hold is old enough to repair: refused, nothing booked', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    const held = holdNextInsert(sg, 'rentals', owner.workspace);
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-5' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    await held.reached;
    // Recovery settles the dead attempt at once (its process gone); its hold is young, the hold sweep leaves it.
    await ageDeadAttempt(sg, owner.workspace, 'rentals.create');
    await sg.sweep();
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-5' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    // Recovery withdrew the id when it told the call's story: the late insert cannot make a rental the key says is unknown.
    expect(await held.land()).toBe('duplicate');
    await ageHolds(owner);
    await sg.sweep();
    expect(await rentalsOf(owner)).toEqual([]);
    expect(await holdsOf(owner)).toEqual([]);
    expect(await sg.call('rentals.create', overlapping, owner, { idempotencyKey: 'rent-6' })).toMatchObject({ ok: true });
  });
});

describe('an approved rentals.create whose first attempt died inside its insert', () => {
  it('the late insert lands after the sweep released the hold: refused; the approval failed and nothing was booked', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    const { held, approvalId } = await approvedAndKilled(sg, owner, { tool: 'rentals.create', collection: 'rentals', input: booking });
    await ageHolds(owner);
    await sg.sweep();
    // The hold carries the dead run: recovery cannot say it did nothing, so the approval is not run again;
    // the same sweep's rentals pass met the hold unconfirmed, its rental absent, and released it.
    expect((await sg.governance.approvals.get(owner.workspace, approvalId))?.status).toBe('failed');
    expect(await holdsOf(owner)).toEqual([]);
    expect(await held.land()).toBe('duplicate');
    expect(await rentalsOf(owner)).toEqual([]);
    expect((await sg.governance.approvals.get(owner.workspace, approvalId))?.status).toBe('failed');
    // The tent is free again (the workspace's policy holds every rentals.create, so it is asked, not booked).
    expect(await holdsOf(owner)).toEqual([]);
    expect((await sg.output('rentals.availability', { item_id: overlapping.item_id, start: overlapping.start, end: overlapping.end }, owner))).toMatchObject({ available: true });
  });
});

describe('an approved rentals.create whose dead attempt\'s insert landed before the sweep', () => {
  it('the approval ends executed with the rental that exists, held; nothing is run again', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    const { held, approvalId } = await approvedAndKilled(sg, owner, { tool: 'rentals.create', collection: 'rentals', input: booking });
    expect(await held.land()).toBe('stored');
    await ageHolds(owner);
    await sg.sweep();
    const stored = await rentalsOf(owner);
    expect(stored.map((r) => r.status)).toEqual(['reserved']);
    expect(await holdsOf(owner)).toEqual([[stored[0]._id, true]]);
    const approval = await sg.governance.approvals.get(owner.workspace, approvalId);
    expect(approval?.status).toBe('executed');
    expect((approval?.result as { body?: { output?: { rental?: { id?: string } } } } | null)?.body?.output?.rental?.id).toBe(stored[0]._id);
    await sg.sweep();
    expect(await rentalsOf(owner)).toHaveLength(1);
    expect((await sg.output('rentals.availability', { item_id: overlapping.item_id, start: overlapping.start, end: overlapping.end }, owner))).toMatchObject({ available: false });
  });
});

describe('a rentals.create whose insert the store applied but whose answer was lost', () => {
  it('keeps its hold: recovery confirms it and answers the rental; an overlapping booking is refused', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    // The insert reaches the store; the connection breaks before its answer comes back.
    const coll = sg.db.collection('rentals') as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const insertOne = coll.insertOne;
    coll.insertOne = async function (this: unknown, ...args: unknown[]) {
      delete (coll as Record<string, unknown>).insertOne;
      await insertOne.apply(this, args);
      throw new Error('connection reset while reading the answer');
    };
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-7' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    const stored = await rentalsOf(owner);
    expect(stored).toHaveLength(1);
    // Before, the failed insert released the hold: a rental stood with none, and the overlapping booking below was accepted.
    expect(await holdsOf(owner)).toEqual([[stored[0]._id, false]]);
    await ageDeadAttempt(sg, owner.workspace, 'rentals.create');
    await sg.sweep();
    expect(await holdsOf(owner)).toEqual([[stored[0]._id, true]]);
    const replay = await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-7' });
    expect(replay, JSON.stringify(replay)).toMatchObject({ ok: true });
    expect(replay.output.rental.id).toBe(stored[0]._id);
    expect(await sg.call('rentals.create', overlapping, owner, { idempotencyKey: 'rent-8' })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await rentalsOf(owner)).toHaveLength(1);
  });
});

describe('the tombstone of a withdrawn rental id', () => {
  async function records(owner: Principal, query: Record<string, unknown>) {
    const r = await sg.graphql(`query($q: JSON!) { ${sg.name}Records(query: $q) }`, { q: query }, owner);
    if (r.body.errors?.length) throw new Error(r.body.errors[0].message);
    return r.body.data[`${sg.name}Records`];
  }
  const withdrawals = (owner: Principal) => sg.db.collection('rental_withdrawals').find({ workspace: owner.workspace }).toArray();
  /** What an hour and more does to the withdrawals. */
  async function ageWithdrawals(owner: Principal) {
    await sg.db.collection('rental_withdrawals').updateMany({ workspace: owner.workspace }, { $set: { at: new Date(Date.now() - 61 * 60_000) } });
  }

  it('shows in no list, count, search, lookup or availability of the workspace; kept an hour, then removed', async () => {
    const owner = workspace();
    const { booking, overlapping } = await tentFor(owner);
    const held = holdNextInsert(sg, 'rentals', owner.workspace);
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-9' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    await held.reached;
    // The list's total before the tombstone: the dead attempt's position is in it already (a known limit: its counter stays moved).
    const before = (await records(owner, { source: 'rentals' })).total;
    await ageHolds(owner);
    await ageDeadAttempt(sg, owner.workspace, 'rentals.create');
    await sg.sweep();
    const tombstones = await sg.db.collection('rentals').find({ workspace: `withdrawn:${owner.workspace}` }).toArray();
    expect(tombstones).toHaveLength(1);
    const withdrawnId = tombstones[0]._id;
    const other = (await sg.output('rentals.create', overlapping, owner)).rental;

    expect((await sg.output('rentals.list', {}, owner)).rows.map((r: { id: string }) => r.id)).toEqual([other.id]);
    const listed = await records(owner, { source: 'rentals' });
    expect(listed.rows.map((r: { id: string }) => r.id)).toEqual([other.id]);
    // The tombstone moves no counter: the total grew by the one rental booked.
    expect(listed.total).toBe(before + 1);
    expect((await records(owner, { source: 'rentals', search: 'carpa' })).rows.map((r: { id: string }) => r.id)).toEqual([other.id]);
    expect((await records(owner, { source: 'rentals', status: 'reserved' })).rows.map((r: { id: string }) => r.id)).toEqual([other.id]);
    expect(await sg.call('rentals.get', { id: withdrawnId }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('rentals.cancel', { id: withdrawnId }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('rentals.deliver', { id: withdrawnId }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const free = await sg.output('rentals.availability', { item_id: booking.item_id, start: booking.start, end: booking.end }, owner);
    expect(free.held_by.map((h: { rental_id: string }) => h.rental_id)).toEqual([other.id]);

    // Within the hour it still refuses the dead attempt's insert; a pass of the sweep keeps it.
    await sg.sweep();
    expect(await held.land()).toBe('duplicate');
    expect(await sg.db.collection('rentals').countDocuments({ _id: withdrawnId })).toBe(1);
    expect((await withdrawals(owner)).map((w) => w._id)).toEqual([withdrawnId]);
    // An hour on, nothing can land under the id any more: the tombstone and its record go; the rental stays.
    await ageWithdrawals(owner);
    await sg.sweep();
    expect(await sg.db.collection('rentals').countDocuments({ _id: withdrawnId })).toBe(0);
    expect(await withdrawals(owner)).toEqual([]);
    expect((await rentalsOf(owner)).map((r) => r._id)).toEqual([other.id]);
  });

  it('a tombstone the older sweep stored (no withdrawal record) is dated once and expires like the others', async () => {
    const owner = workspace();
    const old = { _id: `rnt_old${Date.now()}`, workspace: `withdrawn:${owner.workspace}`, withdrawn_at: new Date(Date.now() - 2 * 3_600_000) };
    const young = { _id: `rnt_young${Date.now()}`, workspace: `withdrawn:${owner.workspace}`, withdrawn_at: new Date() };
    await sg.db.collection('rentals').insertMany([old, young] as never[]);
    await sg.db.collection('migrations').deleteOne({ _id: 'rental-tombstones-dated' } as never);
    await sg.sweep();
    expect((await sg.db.collection('rentals').find({ workspace: `withdrawn:${owner.workspace}` }).toArray()).map((t) => t._id)).toEqual([young._id]);
    expect((await withdrawals(owner)).map((w) => w._id)).toEqual([young._id]);
    expect(await sg.db.collection('migrations').countDocuments({ _id: 'rental-tombstones-dated' } as never)).toBe(1);
  });

  it('a withdrawal refused because the rental had landed expires nothing: the rental stands', async () => {
    const owner = workspace();
    const { booking } = await tentFor(owner);
    const held = holdNextInsert(sg, 'rentals', owner.workspace);
    expect(await sg.call('rentals.create', booking, owner, { idempotencyKey: 'rent-10' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    await held.reached;
    expect(await held.land()).toBe('stored');
    await ageHolds(owner);
    await ageDeadAttempt(sg, owner.workspace, 'rentals.create');
    await sg.sweep();
    await ageWithdrawals(owner);
    await sg.sweep();
    const stored = await rentalsOf(owner);
    expect(stored.map((r) => r.status)).toEqual(['reserved']);
    expect(await holdsOf(owner)).toEqual([[stored[0]._id, true]]);
    expect(await sg.db.collection('rentals').countDocuments({ workspace: `withdrawn:${owner.workspace}` })).toBe(0);
  });
});

describe('a live rentals.create slower than the sweep\'s repair delay', () => {
  it('its id withdrawn and its hold released while its insert was on the way: answered conflict, nothing booked', async () => {
    const owner = workspace();
    const { booking } = await tentFor(owner);
    // The booking's insert waits (a slow store) until the sweep has met its hold.
    const coll = sg.db.collection('rentals') as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const insertOne = coll.insertOne;
    let reached!: () => void;
    let go!: () => void;
    const atInsert = new Promise<void>((r) => { reached = r; });
    const gate = new Promise<void>((r) => { go = r; });
    coll.insertOne = async function (this: unknown, ...args: unknown[]) {
      delete (coll as Record<string, unknown>).insertOne;
      reached();
      await gate;
      return insertOne.apply(this, args);
    };
    const call = sg.call('rentals.create', booking, owner);
    await atInsert;
    await ageHolds(owner);
    await sg.sweep();
    expect(await holdsOf(owner)).toEqual([]);
    go();
    expect(await call).toMatchObject({ ok: false, code: 'conflict' });
    expect(await rentalsOf(owner)).toEqual([]);
    expect(await holdsOf(owner)).toEqual([]);
  });
});
