import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { killedAndSettled, type TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, draft, startInvoices } from './setup.ts';
import { vendor, workspace } from './bills-helpers.ts';

// The double payment after a kill (payments-late-write.test.ts), for the other records a keyed or
// approved call creates: a draft invoice, a credit note, a bill, a manual journal entry. The dead
// attempt's insert is held (it lands when the test says); recovery settles the attempt as having
// written nothing and hands its Idempotency-Key back; the retry runs the call again. Under a random
// id the late insert and the retry's each made a record: two drafts, two credit notes (two numbers,
// the invoice credited twice), a bill refused as a duplicate of its own number. Under the call's
// repeatable id (repeatableId, runs.ts) they collide on `_id` and the retry answers the one record.
//
// An open item's insert is announced first by its rollup intent (`pending_changes`, stamped with the
// run), so recovery would see the attempt as having written something — unless the rollup repair
// (the same maintenance sweep, once the marker is a minute old) dropped the marker, whose document it
// did not find, before recovery settled the attempt: a recovery held back (the dead process's
// heartbeat still fresh, the owner just restarted) is enough. That order is forced here.

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

/**
 * The rollup repair runs before recovery settles the dead attempt: its intent's executor still looks
 * alive, its `pending_changes` marker is past the repair's wait, and a sweep runs — the repair drops
 * the marker (its document is not in the store yet) while recovery leaves the attempt alone.
 */
async function repairBeforeRecovery(owner: Principal, tool: string): Promise<void> {
  const intent = await sg.governance.intents.findOne({ workspace: owner.workspace, tool }).sort({ started_at: -1 }).lean();
  if (!intent) throw new Error('the attempt has no intent');
  await sg.governance.executors.updateOne({ _id: 'exe_alive' }, { $set: { subgraph: 'invoices', alive_until: new Date(Date.now() + 60 * 60_000) } }, { upsert: true });
  await sg.governance.intents.updateOne({ _id: intent._id }, { $set: { executor: 'exe_alive', abandoned: false } });
  const long = new Date(Date.now() - 10 * 60_000);
  await sg.db.collection('pending_changes').updateMany({ workspace: owner.workspace }, { $set: { at: long } });
  await sg.sweep();
  expect(await sg.governance.intents.exists({ _id: intent._id })).not.toBeNull();
  expect(await sg.db.collection('pending_changes').countDocuments({ workspace: owner.workspace })).toBe(0);
}

/** A keyed call killed inside its insert into `collection`, then settled by recovery as having written nothing (its key handed back); an open item's rollup repair meets the attempt first. */
function killed(owner: Principal, tool: string, input: Record<string, unknown>, key: string, collection: string, options: { rollups?: boolean } = {}) {
  return killedAndSettled(sg, owner, { tool, collection, input, key }, options.rollups === false ? undefined : () => repairBeforeRecovery(owner, tool));
}

function invoiceInput(customer: string) {
  return { customer_id: customer, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02', lines: [{ description: 'Consultoría', quantity: 2, unit_price: 15000000, tax_rate_ppm: 190000 }] };
}

async function invoicesOf(owner: Principal, kind = 'invoice') {
  return sg.db.collection('invoices').find({ workspace: owner.workspace, kind }).toArray();
}

describe('a draft invoice whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('lands before the retry: the retry answers that draft, and no second one is made', async () => {
    const owner = await configuredWorkspace(sg);
    const input = invoiceInput(await andina(owner));
    const held = await killed(owner, 'invoices.create', input, 'draft-1', 'invoices');
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('invoices.create', input, owner, { idempotencyKey: 'draft-1' });
    expect(retry.ok).toBe(true);
    const stored = await invoicesOf(owner);
    expect(stored.map((d) => [d._id, d.status])).toEqual([[retry.output.invoice.id, 'draft']]);
    // The draft's own counting, which its dead writer left pending, is done.
    expect(stored[0].pending_count).toBe(0);
    expect((await sg.output('invoices.list', {}, owner)).rows.map((r: { id: string }) => r.id)).toEqual([retry.output.invoice.id]);
  });

  it('lands after the retry made the draft: refused as the same draft, one draft stays', async () => {
    const owner = await configuredWorkspace(sg);
    const input = invoiceInput(await andina(owner));
    const held = await killed(owner, 'invoices.create', input, 'draft-2', 'invoices');
    const retry = await sg.call('invoices.create', input, owner, { idempotencyKey: 'draft-2' });
    expect(retry.ok).toBe(true);
    expect(await held.land()).toBe('duplicate');
    expect((await invoicesOf(owner)).map((d) => d._id)).toEqual([retry.output.invoice.id]);
  });
});

describe('a credit note whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('the retry posts that note: one note, one number, the invoice credited once', async () => {
    const owner = await configuredWorkspace(sg);
    const d = await draft(sg, owner);
    const invoice = (await sg.output('invoices.post', { id: d.id }, owner)).invoice;
    const input = { invoice_id: invoice.id, concept: 2, reason: 'Devolución total' };
    const held = await killed(owner, 'invoices.credit_note', input, 'note-1', 'invoices');
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('invoices.credit_note', input, owner, { idempotencyKey: 'note-1' });
    expect(retry.ok).toBe(true);
    const notes = await invoicesOf(owner, 'credit_note');
    expect(notes.map((n) => [n._id, n.status])).toEqual([[retry.output.credit_note.id, 'posted']]);
    const credited = (await sg.output('invoices.get', { id: invoice.id }, owner)).invoice;
    expect(credited.status).toBe('cancelled');
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'credit_note' })).toBe(1);
  });
});

describe('a draft bill whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('the retry answers that bill instead of refusing its own supplier number', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const input = { vendor_id: v, supplier_number: 'FV-LATE-1', currency: 'COP', issue_date: '2026-11-02', lines: [{ description: 'Papelería', account: '5135', quantity: 1, unit_price: 100_000, tax_rate_ppm: 190000 }] };
    const held = await killed(owner, 'bills.create', input, 'bill-1', 'bills');
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('bills.create', input, owner, { idempotencyKey: 'bill-1' });
    expect(retry).toMatchObject({ ok: true });
    const stored = await sg.db.collection('bills').find({ workspace: owner.workspace }).toArray();
    expect(stored.map((b) => [b._id, b.status])).toEqual([[retry.output.bill.id, 'draft']]);
  });
});

describe('a manual journal entry whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('the retry answers that entry, and no second one is made', async () => {
    const owner = await configuredWorkspace(sg);
    const input = { date: '2026-11-02', memo: 'Ajuste', lines: [{ account: '5195', debit: 50_000 }, { account: '111005', credit: 50_000 }] };
    const held = await killed(owner, 'journal.create', input, 'mje-1', 'manual_entries', { rollups: false });
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('journal.create', input, owner, { idempotencyKey: 'mje-1' });
    expect(retry).toMatchObject({ ok: true });
    const stored = await sg.db.collection('manual_entries').find({ workspace: owner.workspace }).toArray();
    expect(stored.map((e) => e._id)).toEqual([retry.output.entry.id]);
  });
});

describe('a subscription whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('the retry starts that subscription: one subscription, one billing schedule, counted once', async () => {
    const owner = await configuredWorkspace(sg);
    const customer = await andina(owner);
    const plan = (await sg.output('plans.create', { name: 'Básico', price: 10_000_000, interval: 'month' }, owner)).plan;
    const input = { plan_id: plan.id, customer_id: customer, start_date: '2026-11-01' };
    const held = await killed(owner, 'plans.subscribe', input, 'sub-1', 'plan_subscriptions', { rollups: false });
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('plans.subscribe', input, owner, { idempotencyKey: 'sub-1' });
    expect(retry).toMatchObject({ ok: true });
    const subs = await sg.db.collection('plan_subscriptions').find({ workspace: owner.workspace }).toArray();
    expect(subs.map((s) => [s._id, s.status])).toEqual([[retry.output.subscription.id, 'active']]);
    expect(await sg.db.collection('recurring_invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
    expect((await sg.output('plans.get', { id: plan.id }, owner)).plan.subscribers).toBe(1);
  });
});

describe('a recurring invoice schedule whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('the retry answers that schedule: one schedule bills the customer', async () => {
    const owner = await configuredWorkspace(sg);
    const input = { customer_id: await andina(owner), currency: 'COP', interval: 'month', start_date: '2026-12-05', lines: [{ description: 'Soporte', quantity: 1, unit_price: 200_000_000, tax_rate_ppm: 190000 }] };
    const held = await killed(owner, 'invoices.recurring_create', input, 'rec-1', 'recurring_invoices', { rollups: false });
    expect(await held.land()).toBe('stored');
    const retry = await sg.call('invoices.recurring_create', input, owner, { idempotencyKey: 'rec-1' });
    expect(retry).toMatchObject({ ok: true });
    const stored = await sg.db.collection('recurring_invoices').find({ workspace: owner.workspace }).toArray();
    expect(stored.map((r) => r._id)).toEqual([retry.output.recurring.id]);
  });
});
