import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { ageDeadAttempt, holdNextInsert, type HeldInsert, type TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, draft, startInvoices, unwrap } from './setup.ts';
import { postedBill, vendor, workspace } from './bills-helpers.ts';

// The double payment after a kill (docs/measurements.md, "A double payment after a kill"): a keyed
// payments.register whose process dies with its payment insert already sent. The store applies that
// insert late — after the owner settled the dead run as having written nothing (no record carried
// its run yet; its operation marker named a payment not found, and was dropped) and handed its
// Idempotency-Key back. The retry then registered a second payment under a new random id.
//
// The order is forced here, not hoped for: the dead attempt's payment insert is held in this process
// (the attempt goes no further, as a killed one would) until the test lets it reach the store.

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

/**
 * A keyed call killed inside its payment's insert, as a kill leaves it once time has passed: the
 * insert held (it lands when the test says), the call answered outcome_unknown, and the attempt's
 * intent, key and payer's lock aged past their leases ({@link ageDeadAttempt}).
 */
async function killedInInsert(owner: Principal, tool: 'payments.register' | 'bills.pay', input: Record<string, unknown>, key: string, payer: string): Promise<{ held: HeldInsert; intentId: string }> {
  const bill = tool === 'bills.pay';
  const held = holdNextInsert(sg, bill ? 'bill_payments' : 'payments', owner.workspace);
  const dead = await sg.call(tool, input, owner, { idempotencyKey: key });
  await held.reached;
  expect(dead.code).toBe('outcome_unknown');
  const intentId = await ageDeadAttempt(sg, owner.workspace, tool, bill ? `bills:pay:${owner.workspace}:${payer}` : `payments:${owner.workspace}:${payer}`);
  return { held, intentId };
}

async function setUp() {
  const owner = await configuredWorkspace(sg);
  const d = await draft(sg, owner);
  const invoice = (await sg.output('invoices.post', { id: d.id }, owner)).invoice;
  const customer = await andina(owner);
  const input = { customer_id: customer, amount: 1_000_000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: invoice.id, amount: 1_000_000 }] };
  return { owner, customer, invoice, input };
}

async function paymentsOf(owner: Principal) {
  return sg.db.collection('payments').find({ workspace: owner.workspace }).toArray();
}

describe('a payment whose insert lands after its dead run was settled as having written nothing', () => {
  it('lands before the retry: the retry answers that payment, completed, and registers no second one', async () => {
    const { owner, customer, invoice, input } = await setUp();
    const { held, intentId } = await killedInInsert(owner, 'payments.register', input, 'late-1', customer);
    // The owner's sweep settles the dead run: nothing carries its run yet.
    await sg.sweep();
    expect(await sg.governance.intents.exists({ _id: intentId })).toBeNull();
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('payments.register', input, owner, { idempotencyKey: 'late-1' });
    expect(retry.ok).toBe(true);
    const stored = await paymentsOf(owner);
    expect(stored.map((p) => [p._id, p.status])).toEqual([[retry.output.payment.id, 'completed']]);
    const inv = (await sg.output('invoices.get', { id: invoice.id }, owner)).invoice;
    expect(inv.paid).toBe(1_000_000);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'payment' })).toBe(1);
  });

  it('lands after the retry registered the payment: refused as the same payment, one payment stays', async () => {
    const { owner, customer, invoice, input } = await setUp();
    const { held } = await killedInInsert(owner, 'payments.register', input, 'late-2', customer);
    // This time the retry itself settles the dead run (the key's lease passed; its intent stands).
    const retry = await sg.call('payments.register', input, owner, { idempotencyKey: 'late-2' });
    expect(retry.ok).toBe(true);
    expect(await held.land()).toBe('duplicate');
    // The maintenance sweep finds nothing left to finish.
    await sg.sweep();
    const stored = await paymentsOf(owner);
    expect(stored.map((p) => [p._id, p.status])).toEqual([[retry.output.payment.id, 'completed']]);
    expect((await sg.output('invoices.get', { id: invoice.id }, owner)).invoice.paid).toBe(1_000_000);
    // A replay answers the same payment.
    const again = await sg.call('payments.register', input, owner, { idempotencyKey: 'late-2' });
    expect(again.output.payment.id).toBe(retry.output.payment.id);
  });
});

describe('a late insert whose call is never retried', () => {
  it('the sweep withdraws the payment recovery said was never written; a later retry registers it once', async () => {
    const { owner, customer, invoice, input } = await setUp();
    const { held, intentId } = await killedInInsert(owner, 'payments.register', input, 'late-orphan', customer);
    await sg.sweep();
    expect(await sg.governance.intents.exists({ _id: intentId })).toBeNull();
    // Recovery's story: the call wrote nothing (its key handed back, its ledger entry interrupted).
    const told = await sg.governance.ledger.entries.find({ idempotency_key: 'late-orphan', tool: 'payments.register' }).lean();
    expect(told.map((e) => e.outcome)).toEqual(['interrupted']);
    expect(await held.land()).toBe('stored');
    const landed = await paymentsOf(owner);
    expect(landed.map((p) => p.status)).toEqual(['pending']);

    // Nobody retries. The next sweep finds the payment its marker watched for, and withdraws it.
    await sg.sweep();
    expect(await paymentsOf(owner)).toEqual([]);
    expect(await sg.db.collection('operations').countDocuments({ record: landed[0]._id })).toBe(0);
    const untouched = (await sg.output('invoices.get', { id: invoice.id }, owner)).invoice;
    expect([untouched.paid, untouched.balance]).toEqual([0, invoice.balance]);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'payment' })).toBe(0);
    // Another pass finds nothing more to do.
    await sg.sweep();
    expect(await paymentsOf(owner)).toEqual([]);

    // The key was handed back: a retry, however late, registers the payment once, completed.
    const retry = await sg.call('payments.register', input, owner, { idempotencyKey: 'late-orphan' });
    expect(retry.ok).toBe(true);
    expect((await paymentsOf(owner)).map((p) => [p._id, p.status])).toEqual([[retry.output.payment.id, 'completed']]);
    expect((await sg.output('invoices.get', { id: invoice.id }, owner)).invoice.paid).toBe(1_000_000);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.kind': 'payment' })).toBe(1);
    const entries = await sg.governance.ledger.entries.find({ idempotency_key: 'late-orphan', tool: 'payments.register' }).lean();
    expect(entries.map((e) => e.outcome).sort()).toEqual(['interrupted', 'ok']);
    await sg.sweep();
    expect((await paymentsOf(owner)).map((p) => p.status)).toEqual(['completed']);
  });

  it('a retry that took the payment over first is left to finish it: the sweep withdraws nothing', async () => {
    const { owner, customer, invoice, input } = await setUp();
    const { held } = await killedInInsert(owner, 'payments.register', input, 'late-taken', customer);
    await sg.sweep();
    expect(await held.land()).toBe('stored');
    const [landed] = await paymentsOf(owner);
    // A retry marks the payment its own (the watched marker taken over) and then dies before completing it.
    const marker = await sg.db.collection('operations').findOne({ _id: `payment:${landed._id}` } as never);
    expect(marker?.status).toBe('wrote_nothing');
    await sg.db.collection('operations').updateOne({ _id: `payment:${landed._id}`, status: 'wrote_nothing' } as never, { $set: { status: 'running', run: 'int_retry', at: new Date() } });
    await sg.sweep();
    // Within its lease: not withdrawn, not finished by the sweep; the payment stays for its operation.
    expect((await paymentsOf(owner)).map((p) => p.status)).toEqual(['pending']);
    expect((await sg.output('invoices.get', { id: invoice.id }, owner)).invoice.paid).toBe(0);
  });

  it('the dead attempt and its retry indexed on different days: payments.list and records.list show the payment once', async () => {
    const { owner, customer, input } = await setUp();
    const { held } = await killedInInsert(owner, 'payments.register', input, 'late-days', customer);
    const retry = await sg.call('payments.register', input, owner, { idempotencyKey: 'late-days' });
    expect(retry.ok).toBe(true);
    const id = retry.output.payment.id;
    expect(await held.land()).toBe('duplicate');
    // The dead attempt's day was another (it ran before midnight UTC): its entry in the recent index too.
    const days = ['2026-11-19', new Date().toISOString().slice(0, 10)];
    await sg.db.collection('recent_index').updateOne({ _id: `${owner.workspace}|payments|${days[0]}` } as never, { $addToSet: { ids: id } }, { upsert: true });
    for (const day of days) {
      expect((await sg.db.collection('recent_index').findOne({ _id: `${owner.workspace}|payments|${day}` } as never))?.ids).toContain(id);
    }
    const listed = (await sg.output('payments.list', {}, owner)).rows.map((p: { id: string }) => p.id);
    expect(listed).toEqual([id]);
    const rows = unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'payments', limit: 100 } }, owner), 'invoicesRecords').rows;
    expect(rows.map((r: { id: string }) => r.id)).toEqual([id]);
  });
});

describe('a bill payment whose insert lands after its dead run was settled as having written nothing', () => {
  it('lands before the retry: the retry answers that bill payment, completed, and records no second one', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const bill = await postedBill(sg, owner, v);
    const input = { vendor_id: v, amount: 119_000, currency: 'COP', date: '2026-11-20', bills: [{ bill_id: bill.id, amount: 119_000 }] };
    const { held, intentId } = await killedInInsert(owner, 'bills.pay', input, 'late-bill', v);
    await sg.sweep();
    expect(await sg.governance.intents.exists({ _id: intentId })).toBeNull();
    expect(await held.land()).toBe('stored');

    const retry = await sg.call('bills.pay', input, owner, { idempotencyKey: 'late-bill' });
    expect(retry.ok).toBe(true);
    const stored = await sg.db.collection('bill_payments').find({ workspace: owner.workspace }).toArray();
    expect(stored.map((p) => [p._id, p.status])).toEqual([[retry.output.payment.id, 'completed']]);
    expect((await sg.output('bills.get', { id: bill.id }, owner)).bill).toMatchObject({ status: 'paid', balance: 0 });
  });

  it('never retried: the sweep withdraws the bill payment, the bill stays owed', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const bill = await postedBill(sg, owner, v);
    const input = { vendor_id: v, amount: 119_000, currency: 'COP', date: '2026-11-20', bills: [{ bill_id: bill.id, amount: 119_000 }] };
    const { held } = await killedInInsert(owner, 'bills.pay', input, 'late-bill-orphan', v);
    await sg.sweep();
    expect(await held.land()).toBe('stored');
    expect((await sg.db.collection('bill_payments').find({ workspace: owner.workspace }).toArray()).map((p) => p.status)).toEqual(['pending']);
    await sg.sweep();
    expect(await sg.db.collection('bill_payments').countDocuments({ workspace: owner.workspace })).toBe(0);
    expect((await sg.output('bills.get', { id: bill.id }, owner)).bill).toMatchObject({ status: bill.status, balance: bill.balance });
  });
});

describe('a running marker the stale-operation pass finds before recovery settles its dead attempt', () => {
  // The sweep settles dead attempts first (recovery), then runs the modules' maintenance, whose
  // stale-operation pass finishes markers left running past the lease. A dead attempt recovery does
  // not settle yet (its process's heartbeat still fresh, this owner just restarted) leaves its marker
  // to that pass first: the pass found no payment under it and dropped it, so nothing watched for
  // the payment insert the store applied after — it stayed `pending` for good, completed by nobody
  // and withdrawn by nobody. The pass now keeps such a marker watched (`wrote_nothing`), as
  // recovery does: whichever of the two sees it first, the late payment ends whole or withdrawn.

  /** A keyed payments.register killed inside its insert, whose marker the stale pass reaches while recovery leaves the attempt alone. */
  async function staleBeforeRecovery(key: string) {
    const { owner, customer, invoice, input } = await setUp();
    const held = holdNextInsert(sg, 'payments', owner.workspace);
    const dead = await sg.call('payments.register', input, owner, { idempotencyKey: key });
    await held.reached;
    expect(dead.code).toBe('outcome_unknown');
    const intent = (await sg.governance.intents.findOne({ workspace: owner.workspace, tool: 'payments.register' }).lean())!;
    await sg.governance.executors.updateOne({ _id: 'exe_alive' }, { $set: { subgraph: 'invoices', alive_until: new Date(Date.now() + 60 * 60_000) } }, { upsert: true });
    await sg.governance.intents.updateOne({ _id: intent._id }, { $set: { executor: 'exe_alive', abandoned: false } });
    const long = new Date(Date.now() - 10 * 60_000);
    await sg.db.collection('operations').updateMany({ workspace: owner.workspace, kind: 'payment' }, { $set: { at: long } });
    await sg.db.collection('locks').updateOne({ _id: `payments:${owner.workspace}:${customer}` } as never, { $set: { until: long } });
    await sg.sweep();
    // Recovery left the attempt alone; the stale pass met its marker and found no payment.
    expect(await sg.governance.intents.exists({ _id: intent._id })).not.toBeNull();
    const marker = await sg.db.collection('operations').findOne({ workspace: owner.workspace, kind: 'payment' });
    expect(marker?.status).toBe('wrote_nothing');
    return { owner, customer, invoice, input, held };
  }

  it('the payment lands, then recovery settles the attempt: it finishes the payment and answers the call with it', async () => {
    const { owner, customer, invoice, input, held } = await staleBeforeRecovery('stale-1');
    expect(await held.land()).toBe('stored');
    await ageDeadAttempt(sg, owner.workspace, 'payments.register', `payments:${owner.workspace}:${customer}`);
    await sg.sweep();
    const [payment] = await paymentsOf(owner);
    expect(payment.status).toBe('completed');
    expect((await sg.output('invoices.get', { id: invoice.id }, owner)).invoice.paid).toBe(1_000_000);
    // The key answers the payment its attempt made.
    const again = await sg.call('payments.register', input, owner, { idempotencyKey: 'stale-1' });
    expect(again.ok).toBe(true);
    expect(again.output.payment.id).toBe(payment._id);
    expect(await paymentsOf(owner)).toHaveLength(1);
  });

  it('recovery settles the attempt as having written nothing, then the payment lands: the next sweep withdraws it', async () => {
    const { owner, customer, invoice, held } = await staleBeforeRecovery('stale-2');
    await ageDeadAttempt(sg, owner.workspace, 'payments.register', `payments:${owner.workspace}:${customer}`);
    await sg.sweep();
    const told = await sg.governance.ledger.entries.find({ idempotency_key: 'stale-2', tool: 'payments.register' }).lean();
    expect(told.map((e) => e.outcome)).toEqual(['interrupted']);
    expect(await held.land()).toBe('stored');
    await sg.sweep();
    expect(await paymentsOf(owner)).toEqual([]);
    expect((await sg.output('invoices.get', { id: invoice.id }, owner)).invoice.paid).toBe(0);
  });
});
