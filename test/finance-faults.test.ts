// Payments under a crash: the finance subgraph (invoices) is SIGKILLed in the middle of a burst of
// keyed payments.register calls — each one a multi-step write (settle the invoices, post the
// journal entry, complete the payment, count the rollups) — and restarted. Every call that did not
// answer is sent again with its Idempotency-Key. Then nothing may be lost, doubled or half-done:
// exactly one payment per key, each completed, each with one journal entry, every retry answered; every invoice's balance is its
// amount due less its settlements; the receivables and ledger rollups equal what the test adds up
// from the documents and the journal itself; no marker is left for the sweep.
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let ws: string;
let db: Connection;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // Short leases so the sweep finishes what the dead process left within the test.
  sys = await startTestSystem('finfaults', OWN_SYSTEM_SETTINGS);
  ({ api_key: key, workspace_id: ws } = await sys.workspace('Fallas Financieras SAS'));
  db = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb.replace(/_gateway$/, '_invoices'));
});
afterAll(async () => {
  await db?.close();
  await sys?.stop();
});

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

/**
 * Sends `call(0)` … `call(total - 1)` on 8 workers; when call `total / 3` is about to be sent, the
 * finance subgraph is SIGKILLed (and restarted 300 ms later), so calls in flight die mid-write. Waits
 * until the gateway is healthy again; the answers, in the order they came.
 */
async function burstKillingFinance(total: number, call: (i: number) => Promise<{ status: number; body: any }>): Promise<{ i: number; status: number; code?: string }[]> {
  let sent = 0;
  let killed = false;
  const answers: { i: number; status: number; code?: string }[] = [];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (;;) {
      const i = sent++;
      if (i >= total) return;
      if (i === Math.floor(total / 3) && !killed) {
        killed = true;
        void sys.killSubgraph('invoices').then(async () => {
          await sleep(300);
          await sys.restartSubgraph('invoices');
        });
      }
      const r = await call(i);
      answers.push({ i, status: r.status, code: r.body?.code });
    }
  }));
  for (let t = 0; t < 100 && (await sys.fetch('/healthz')).status !== 200; t++) await sleep(200);
  return answers;
}

/**
 * Asks each interrupted call again with its key, 8 at a time, every 250 ms until it answers 200 or
 * 12.5 s have passed (the 2.5 s past the action lease and the 20 tries of 500 ms it had before, one
 * call after another); a call asked while its lease still runs is asked again. The last answer of each.
 */
async function askAgain<T extends { i: number }>(caught: T[], call: (i: number) => Promise<{ status: number; body: any }>): Promise<Map<T, { status: number; body: any }>> {
  const last = new Map<T, { status: number; body: any }>();
  const deadline = Date.now() + 12_500;
  const queue = [...caught];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let a = queue.shift(); a !== undefined; a = queue.shift()) {
      let r = await call(a.i);
      while (r.status !== 200 && Date.now() < deadline) {
        await sleep(250);
        r = await call(a.i);
      }
      last.set(a, r);
    }
  }));
  return last;
}

/**
 * What a keyed call of finance leaves in governance when its process dies inside the handler: the
 * Idempotency-Key held and the call's intent, its executor gone. The intent's id (the run).
 */
async function callOfADeadProcess(apiKey: string, workspace: string, tool: string, input: unknown, idempotencyKey: string): Promise<string> {
  const governance = sys.governanceFor();
  const principal = await sys.identity.authenticateApiKey(apiKey);
  const { idempotencyScope, inputDigest } = await import('@cuadra/shared');
  const started = await governance.idempotency.begin(workspace, `${idempotencyScope(principal)}:${idempotencyKey}`, tool, inputDigest(input));
  if (started.kind !== 'run') throw new Error('expected to hold the key');
  const run = `int_${started.run}`;
  await governance.intents.create({
    _id: run, workspace, subgraph: 'invoices', tool, risk: 'write', input_digest: inputDigest(input),
    principal, approval_id: null, idempotency_key: idempotencyKey, started_at: new Date(), executor: 'dead-process',
  });
  return run;
}

// One kill serves both bursts (a restart of finance is its whole start-up): payments in one workspace
// and bill posts in another, interleaved, so the kill catches both in the middle of their writes.
describe('finance killed in the middle of payments and of bill posts', () => {
  it('loses, doubles and half-does nothing: one completed payment per key, balances, journal and rollups agree; no bill half-posted or posted twice, and every keyed retry answers the posted bill', async () => {
    await ok('einvoicing.configure', {
      issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS', responsibilities: ['O-15'], address: { line: 'Calle 93 # 11-28', municipality_code: '11001' }, email: 'facturacion@cuadra.example.co' },
      technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
      numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' } },
    });
    const customer = (await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' } })).party.id;
    const invoiceIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const d = (await ok('invoices.create', { customer_id: customer, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02', lines: [{ description: `Servicio ${i}`, quantity: 1, unit_price: 10_000_000, tax_rate_ppm: 190000 }] })).invoice;
      invoiceIds.push((await ok('invoices.post', { id: d.id })).invoice.id);
    }

    const total = 60;
    const AMOUNT = 100_000;
    const pay = (i: number) => sys.invoke('payments.register', { customer_id: customer, amount: AMOUNT, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: invoiceIds[i % invoiceIds.length], amount: AMOUNT }] }, key, { 'Idempotency-Key': `fault-pay-${i}` });

    // The bills' workspace: 36 drafts, 8 made at a time (their order does not matter: bill i is FP-i).
    const { api_key: billsKey, workspace_id: billsWs } = await sys.workspace('Cuentas por Pagar Interrumpidas SAS');
    const vendor = (await sys.output('parties.create', { name: 'Suministros del Valle SAS', kind: 'vendor', tax_id: { type: 'NIT', number: '800197268-4' } }, billsKey) as any).party.id;
    const bills = 36;
    const billIds: string[] = [];
    let made = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = made++; i < bills; i = made++) {
        // 100,000 + 19 % VAT = 119,000 owed by each.
        billIds[i] = (await sys.output('bills.create', { vendor_id: vendor, supplier_number: `FP-${i}`, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02', lines: [{ description: `Mantenimiento ${i}`, account: '5135', quantity: 1, unit_price: 100_000, tax_rate_ppm: 190000 }] }, billsKey) as any).bill.id;
      }
    }));
    const post = (i: number) => sys.invoke('bills.post', { id: billIds[i] }, billsKey, { 'Idempotency-Key': `fault-post-${i}` });

    // Call k of the burst: payments and posts alternate while both last, then the rest of the payments.
    const callOf = (k: number): { kind: 'pay' | 'post'; i: number } => (k < 2 * bills ? (k % 2 === 0 ? { kind: 'pay', i: k / 2 } : { kind: 'post', i: (k - 1) / 2 }) : { kind: 'pay', i: k - bills });
    const call = (k: number) => (callOf(k).kind === 'pay' ? pay(callOf(k).i) : post(callOf(k).i));
    const answers = await burstKillingFinance(total + bills, call);
    const caughtOf = (kind: 'pay' | 'post') => answers.filter((a) => a.status !== 200 && callOf(a.i).kind === kind);
    const [caught, caughtPosts] = [caughtOf('pay'), caughtOf('post')];
    console.log('[finance-faults] answers', { ok: total - caught.length, caught: caught.length, codes: [...new Set(caught.map((a) => a.code))] });
    console.log('[finance-faults] posts', { ok: bills - caughtPosts.length, caught: caughtPosts.length, codes: [...new Set(caughtPosts.map((a) => a.code))] });
    // The kill caught calls of each kind, or the test proved nothing.
    expect(caught.length).toBeGreaterThan(0);
    expect(caughtPosts.length).toBeGreaterThan(0);
    expect([...caught, ...caughtPosts].every((a) => a.code === 'unavailable' || a.code === 'outcome_unknown')).toBe(true);

    // Each interrupted call again, with its key: it answers its real outcome (replayed, or run once)
    // — an interrupted run once it is settled, past the action lease; a post answers the posted bill
    // (replayed, run once, or finished from its operation).
    const retriedBad: unknown[] = [];
    const postsRetriedBad: unknown[] = [];
    for (const [a, r] of await askAgain([...caught, ...caughtPosts], call)) {
      const { kind, i } = callOf(a.i);
      if (kind === 'pay' && r.status !== 200) retriedBad.push({ i, first: a.code, status: r.status, body: r.body });
      if (kind === 'post' && (r.status !== 200 || r.body.output?.bill?.id !== billIds[i] || r.body.output.bill.status !== 'posted')) postsRetriedBad.push({ i, first: a.code, status: r.status, code: r.body.code, bill: r.body.output?.bill?.status });
    }
    console.log('[finance-faults] retried', { retried: caught.length, stillUnknown: retriedBad.length });
    console.log('[finance-faults] posts retried', { retried: caughtPosts.length, bad: postsRetriedBad });
    expect(postsRetriedBad).toEqual([]);
    // Every interrupted call answers its real outcome: a payment killed inside its handler is a
    // durable operation (shared/src/operations.ts) that the owner finishes and answers from.
    expect(retriedBad).toEqual([]);
    // The sweep finishes what the dead process left (markers older than the repair's wait).
    for (let t = 0; t < 100 && (await db.collection('pending_changes').countDocuments({ workspace: ws })) + (await db.collection('operations').countDocuments({ workspace: ws, status: 'running' })) > 0; t++) await sleep(200);
    expect(await db.collection('pending_changes').countDocuments({ workspace: ws })).toBe(0);
    expect(await db.collection('operations').countDocuments({ workspace: ws, status: 'running' })).toBe(0);

    // One payment per key, every one completed, each with exactly one journal entry.
    const payments = await db.collection('payments').find({ workspace: ws }).toArray();
    // Exactly one payment per key: every key answered 200, and none has two.
    expect(payments.length).toBe(total);
    expect(payments.filter((p) => p.status !== 'completed')).toEqual([]);
    const entries = await db.collection('journal_entries').find({ workspace: ws }).toArray();
    const paymentEntries = entries.filter((e) => e.source.kind === 'payment');
    expect(paymentEntries.map((e) => e.source.id).sort()).toEqual(payments.map((p) => p._id).sort());
    expect(entries.filter((e) => e.pending_count)).toEqual([]);

    // Every invoice: settled by exactly the payments that say they paid it, nothing twice.
    const invoices = await db.collection('invoices').find({ workspace: ws }).toArray();
    const appliedTo = new Map<string, number>();
    for (const p of payments) for (const a of p.allocations) appliedTo.set(a.invoice_id, (appliedTo.get(a.invoice_id) ?? 0) + (a.applied ?? 0));
    for (const inv of invoices) {
      const refs = inv.settlements.map((s: { ref: string }) => s.ref);
      expect(new Set(refs).size).toBe(refs.length);
      const settled = inv.settlements.reduce((s: number, x: { amount: number }) => s + x.amount, 0);
      expect(inv.paid).toBe(settled);
      expect(inv.balance).toBe(inv.amount_due - settled);
      expect(settled).toBe(appliedTo.get(String(inv._id)) ?? 0);
      expect(inv.pending_rollups ?? []).toEqual([]);
    }
    // Payments of 100,000, each applied in full to an invoice owing 11,900,000.
    expect(payments.reduce((s, p) => s + p.applied, 0)).toBe(payments.length * AMOUNT);

    // The rollups equal what the documents and the journal add up to, by this test's own sums.
    const all = await db.collection('rollups').findOne({ _id: `${ws}|COP|a|all` } as never);
    expect(all!.v.collected).toBe(payments.length * AMOUNT);
    expect(all!.v.payments).toBe(payments.length);
    const ledger = await db.collection('rollups').findOne({ _id: `${ws}|gl:COP|a|all` } as never);
    const sums: Record<string, number> = {};
    for (const e of entries) for (const l of e.lines) {
      sums[`d${l.account}`] = (sums[`d${l.account}`] ?? 0) + l.debit;
      sums[`c${l.account}`] = (sums[`c${l.account}`] ?? 0) + l.credit;
    }
    for (const [k, v] of Object.entries(sums)) expect([k, ledger!.v[k] ?? 0]).toEqual([k, v]);

    // The bills: the sweep finished what the dead process left.
    for (let t = 0; t < 100 && (await db.collection('pending_changes').countDocuments({ workspace: billsWs })) + (await db.collection('operations').countDocuments({ workspace: billsWs, status: 'running' })) > 0; t++) await sleep(200);
    expect(await db.collection('operations').countDocuments({ workspace: billsWs, status: 'running' })).toBe(0);
    expect(await db.collection('pending_changes').countDocuments({ workspace: billsWs })).toBe(0);

    // Every bill posted once: its entry je_<bill>, exactly one entry per bill, none for anything else.
    const posted = await db.collection('bills').find({ workspace: billsWs }).toArray();
    expect(posted.length).toBe(bills);
    expect(posted.filter((b) => b.status !== 'posted' || b.journal_entry_id !== `je_${b._id}` || b.post_lock || b.posting).map((b) => [b._id, b.status, b.journal_entry_id])).toEqual([]);
    const billEntries = await db.collection('journal_entries').find({ workspace: billsWs }).toArray();
    expect(billEntries.map((e) => e._id).sort()).toEqual(posted.map((b) => `je_${b._id}`).sort());
    expect(billEntries.filter((e) => e.source.kind !== 'bill' || e.pending_count)).toEqual([]);
    // The payables rollup: 36 bills × 119,000 = 4,284,000 owed, 36 bills counted once each.
    const payables = await db.collection('rollups').findOne({ _id: `${billsWs}|ap:COP|a|all` } as never);
    expect([payables!.v.ap, payables!.v.bills]).toEqual([bills * 119_000, bills]);
  }, 240_000);
});

describe('a payment whose process died in the middle of its operation', () => {
  it('is finished by its retry, which answers the completed payment, once (not outcome_unknown)', async () => {
    const { api_key, workspace_id } = await sys.workspace('Pago Interrumpido SAS');
    const out = (tool: string, input: unknown) => sys.output(tool, input, api_key) as Promise<any>;
    await out('einvoicing.configure', {
      issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS', responsibilities: ['O-15'], address: { line: 'Calle 93 # 11-28', municipality_code: '11001' }, email: 'facturacion@cuadra.example.co' },
      technical_key: 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c', software_pin: '75315',
      numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' } },
    });
    const customer = (await out('parties.create', { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' } })).party.id;
    const draft = (await out('invoices.create', { customer_id: customer, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02', lines: [{ description: 'Servicio', quantity: 1, unit_price: 1_000_000, tax_rate_ppm: 190000 }] })).invoice;
    const invoice = (await out('invoices.post', { id: draft.id })).invoice;
    const AMOUNT = 400_000;
    const input = { customer_id: customer, amount: AMOUNT, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: invoice.id, amount: AMOUNT }] };

    // The state payments.register leaves when its process dies right after writing the payment:
    // the key held, the call's intent (its process gone), the operation's marker naming the run,
    // the recent-documents index (bookkeeping, unstamped) and the pending payment stamped with the
    // run — whose record alone would answer a payment still pending, not what the call answers.
    const governance = sys.governanceFor();
    const run = await callOfADeadProcess(api_key, workspace_id, 'payments.register', input, 'died-mid-payment');
    const now = new Date();
    await db.collection('operations').insertOne({ _id: 'payment:pay_died', workspace: workspace_id, kind: 'payment', record: 'pay_died', run, status: 'running', at: now } as never);
    await db.collection('recent_index').updateOne({ _id: `${workspace_id}|payments|${now.toISOString().slice(0, 10)}` } as never, { $addToSet: { ids: 'pay_died' } }, { upsert: true });
    await db.collection('payments').insertOne({
      _id: 'pay_died', workspace: workspace_id, direction: 'incoming', status: 'pending', customer_id: customer, customer_name: 'Tienda Andina SAS', search_lc: 'tienda andina sas ',
      currency: 'COP', amount: AMOUNT, date: '2026-11-20', method: 'bank_transfer', reference: null, allocations: [{ invoice_id: invoice.id, number: invoice.number, requested: AMOUNT, applied: null }],
      applied: 0, unapplied: 0, journal_entry_id: null, pending_rollups: [], pending_count: 0, created_at: now, updated_at: now, pos: 1_000_000, _runs: [run],
    } as never);

    const retry = await sys.invoke('payments.register', input, api_key, { 'Idempotency-Key': 'died-mid-payment' });
    expect([retry.status, retry.body.code]).toEqual([200, undefined]);
    expect(Object.keys(retry.body.output)).toEqual(['payment']);
    expect(retry.body.output.payment).toMatchObject({ id: 'pay_died', status: 'completed', amount: AMOUNT, journal_entry_id: 'je_pay_died' });
    expect(retry.body.output.payment.allocations).toMatchObject([{ invoice_id: invoice.id, applied: AMOUNT }]);
    // Ran once: one payment, the invoice settled by it once (1,190,000 − 400,000 = 790,000 open), one entry.
    expect(await db.collection('payments').countDocuments({ workspace: workspace_id })).toBe(1);
    const stored = await db.collection('invoices').findOne({ _id: invoice.id } as never);
    expect(stored!.settlements.map((x: { ref: string; amount: number }) => [x.ref, x.amount])).toEqual([['pay_died', AMOUNT]]);
    expect(stored!.balance).toBe(1_190_000 - AMOUNT);
    expect((await db.collection('journal_entries').find({ workspace: workspace_id, 'source.kind': 'payment' }).toArray()).map((e) => e._id)).toEqual(['je_pay_died']);
    expect(await db.collection('operations').findOne({ _id: 'payment:pay_died' } as never)).toMatchObject({ status: 'done' });
    const again = await sys.invoke('payments.register', input, api_key, { 'Idempotency-Key': 'died-mid-payment' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(retry.body);
    expect(await governance.ledger.entries.countDocuments({ workspace: workspace_id, idempotency_key: 'died-mid-payment', outcome: 'interrupted' })).toBe(1);
  }, 60_000);
});

describe('a payment run whose confirm died in the middle', () => {
  // payment_runs.confirm pays each bill of the run (one bill payment each, under the id the run
  // chose) and then marks the run confirmed. Its process dies right after the run became
  // `confirming`: the bank has paid, the books not yet.
  it('is finished by the sweep with no retry, each bill paid once, and its keyed retry answers the confirmed run', async () => {
    const { api_key, workspace_id } = await sys.workspace('Pagos a Proveedores Interrumpidos SAS');
    const out = (tool: string, input: unknown) => sys.output(tool, input, api_key) as Promise<any>;
    const vendor = (await out('parties.create', { name: 'Suministros del Valle SAS', kind: 'vendor', tax_id: { type: 'NIT', number: '800197268-4' } })).party.id;
    const runs: any[] = [];
    for (const n of [1, 2]) {
      const ids: string[] = [];
      for (const i of [1, 2]) {
        // 100,000.00 + 19 % VAT = 119,000.00 owed by each bill (11,900,000 cents).
        const bill = (await out('bills.create', { vendor_id: vendor, supplier_number: `PR-${n}-${i}`, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-11-12', lines: [{ description: 'Insumos', account: '5135', quantity: 1, unit_price: 10_000_000, tax_rate_ppm: 190000 }] })).bill;
        ids.push((await out('bills.post', { id: bill.id })).bill.id);
      }
      const made = (await out('payment_runs.create', {
        currency: 'COP', bank_account: '111005', bill_ids: ids, payment_date: '2026-11-20',
        debtor: { name: 'Cuadra Demo SAS', tax_id: '900373115', account_number: '12345678901', account_type: 'checking', bic: 'COLOCOBM' },
        payees: [{ vendor_id: vendor, account_number: '00112233445', account_type: 'savings', bank_code: '5600078', bic: 'COLOCOBM' }],
      })).payment_run;
      await out('payment_runs.approve', { id: made.id, amount: 2 * 11_900_000 });
      await out('payment_runs.export', { id: made.id, format: 'pain.001.001.03' });
      runs.push(made);
    }
    // Run 1: its keyed call died (the key held, the intent of a dead process). Run 2: a confirm
    // whose call was already settled (no intent left). Both died after exported → confirming,
    // their operation's marker older than the repair's wait.
    const input = { id: runs[0].id, paid_on: '2026-11-20' };
    const intent = await callOfADeadProcess(api_key, workspace_id, 'payment_runs.confirm', input, 'died-mid-confirm');
    const before = new Date(Date.now() - 5_000);
    for (const [r, run] of [[runs[0], intent], [runs[1], null]] as const) {
      await db.collection('operations').insertOne({ _id: `payment_run_confirm:${r.id}`, workspace: workspace_id, kind: 'payment_run_confirm', record: r.id, run, status: 'running', at: before } as never);
      await db.collection('payment_runs').updateOne({ _id: r.id } as never, { $set: { status: 'confirming', paid_on: '2026-11-20', updated_at: before } });
    }

    // Nobody asks again: the sweep finishes both.
    const status = async (id: string) => (await db.collection('payment_runs').findOne({ _id: id } as never))!.status;
    for (let t = 0; t < 50 && ((await status(runs[0].id)) !== 'confirmed' || (await status(runs[1].id)) !== 'confirmed'); t++) await sleep(200);
    expect([await status(runs[0].id), await status(runs[1].id)]).toEqual(['confirmed', 'confirmed']);
    // Each bill paid once, by the payment the run chose for it, with one entry: Dr 220505 119,000.00, Cr 111005.
    for (const r of runs) {
      for (const l of r.lines) {
        expect(await db.collection('bill_payments').find({ workspace: workspace_id, 'allocations.bill_id': l.bill_id }).map((p) => [p._id, p.status, p.amount]).toArray()).toEqual([[l.payment_id, 'completed', 11_900_000]]);
        expect((await db.collection('journal_entries').find({ workspace: workspace_id, 'source.id': l.payment_id }).toArray()).map((e) => e.lines.map((x: any) => [x.account, x.debit, x.credit]))).toEqual([[['220505', 11_900_000, 0], ['111005', 0, 11_900_000]]]);
        expect((await db.collection('bills').findOne({ _id: l.bill_id } as never))).toMatchObject({ status: 'paid', balance: 0 });
      }
    }
    expect(await db.collection('payment_run_claims').countDocuments({ workspace: workspace_id })).toBe(0);
    expect(await db.collection('operations').countDocuments({ workspace: workspace_id, status: 'running' })).toBe(0);

    // The interrupted call, asked again with its key, answers the run it confirmed (not outcome_unknown).
    const retry = await sys.invoke('payment_runs.confirm', input, api_key, { 'Idempotency-Key': 'died-mid-confirm' });
    expect([retry.status, retry.body.code]).toEqual([200, undefined]);
    expect(retry.body.output.payment_run).toMatchObject({ id: runs[0].id, status: 'confirmed', paid_on: '2026-11-20' });
    expect(await db.collection('bill_payments').countDocuments({ workspace: workspace_id })).toBe(4);
  }, 60_000);
});
