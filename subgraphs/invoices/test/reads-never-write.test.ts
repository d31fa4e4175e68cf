import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@cuadra/shared';
import { testServiceKeys, writesOfEveryRead, type TestSubgraph } from '@cuadra/shared/testing';
import { payrollPull } from '../src/accounting/payroll_pull.ts';
import { owned } from '../src/modules/index.ts';
import { invoices } from '../src/modules/invoices/model.ts';
import { journalEntries } from '../src/books/index.ts';
import { rollupId } from '../src/books/rollup-store.ts';
import { anyPendingChange, markIntent, REPAIR_AFTER_MS, rollupIntent } from '../src/books/rollup-intents.ts';
import { andina, configuredWorkspace, draft, payrollPeer, startInvoices } from './setup.ts';
import { postedBill, vendor } from './bills-helpers.ts';
import { bankAccount } from './bank-helpers.ts';

// Every read the finance subgraph answers — read tools, records sources, metrics, agenda lanes —
// run against a workspace with documents of every kind and with what a crashed process leaves
// (rollup intents never applied, older than the repair's wait) and with a payroll posting finance
// has not taken in yet, with the MongoDB driver's command monitoring on: not one write command.
// The leftovers are finished by the background sweep, the payroll posting by the background pull.
let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices({ monitorCommands: true, payroll: true });
});
afterAll(async () => {
  await sg?.close();
});

async function call(owner: Parameters<TestSubgraph['call']>[2], tool: string, input: Record<string, unknown>) {
  const r = await sg.call(tool, input, owner);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

describe('reads never write', () => {
  it('runs every read tool, records source, metric and agenda lane without one write command; the sweep then finishes what a crash left', async () => {
    const owner = await configuredWorkspace(sg);
    const customer = await andina(owner);
    const invoice = (await call(owner, 'invoices.post', { id: (await draft(sg, owner)).id })).invoice;
    const payment = (await call(owner, 'payments.register', { customer_id: customer, amount: 10_000_000, currency: 'COP', date: '2026-11-10', invoices: [{ invoice_id: invoice.id, amount: 10_000_000 }] })).payment;
    const vendorId = await vendor(owner);
    const bill = await postedBill(sg, owner, vendorId);
    const bank = await bankAccount(sg, owner);
    await call(owner, 'accounts.create', { parent: '5140', code: '514001', name: 'Notariales' });
    const manual = (await call(owner, 'journal.create', { date: '2026-11-03', memo: 'Ajuste', lines: [{ account: '514001', debit: 5_000 }, { account: '110505', credit: 5_000 }] })).entry;
    await call(owner, 'journal.post', { id: manual.id });

    // What a process killed mid-write leaves: an invoice carrying a rollup intent never applied,
    // and a journal entry whose ledger intent was never counted, both older than the repair's wait.
    const day = '2026-11-02';
    const at = new Date(Date.now() - REPAIR_AFTER_MS - 1_000);
    const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: 1_234 } }], at)!;
    await markIntent(sg.db, owner.workspace, invoices(sg.db), invoice.id, intent);
    await invoices(sg.db).updateOne({ _id: invoice.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    const ledgerIntent = rollupIntent([{ day, currency: 'gl:COP', inc: { d514001: 777, c110505: 777 } }], at)!;
    await markIntent(sg.db, owner.workspace, journalEntries(sg.db), `je_${manual.id}`, ledgerIntent);
    await journalEntries(sg.db).updateOne({ _id: `je_${manual.id}` }, { $push: { pending_rollups: ledgerIntent }, $inc: { pending_count: 1 } });
    expect(await anyPendingChange(sg.db, owner.workspace)).toBe(true);

    // A payroll run posted in payroll, waiting in its journal feed: finance's reads must not take it in.
    const payroll = payrollPeer();
    const employee = await payroll.call('employees.create', {
      name: 'Ana Mínimo', document: { type: 'CC', number: '1023456789' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner);
    expect(employee.ok, JSON.stringify(employee)).toBe(true);
    const run = (await payroll.output('payroll.run', { month: '2026-10' }, owner)).run;
    await payroll.output('payroll.approve', { id: run.id, amount: run.totals.net }, owner);
    await payroll.output('payroll.post', { id: run.id }, owner);

    const ids = { 'invoices.get': { id: invoice.id }, 'payments.get': { id: payment.id }, 'bills.get': { id: bill.id }, 'journal.get': { id: `je_${manual.id}` }, 'bank.get_account': { id: bank } };
    const { runs, writes } = await writesOfEveryRead(sg, owned, owner, {
      inputs: {
        ...ids,
        'invoices.render': { id: invoice.id }, 'invoices.pdf': { id: invoice.id },
        'tax.withholdings': { month: '2026-11' }, 'accounts.get': { code: '110505' },
      },
      metric: { days: 30 },
      window: { from: '2026-11-01', to: '2026-12-31', limit: 50 },
    });
    const expected = owned.tools.filter((t) => t.risk === 'read').length + Object.keys(owned.readers.sources).length + Object.keys(owned.readers.metrics).length + Object.keys(owned.readers.agenda).length;
    console.log('[reads-never-write]', { reads: runs.length, answered: runs.filter((r) => r.ok).length, refused: runs.filter((r) => !r.ok).map((r) => `${r.read}: ${r.code}`) });
    expect(runs).toHaveLength(expected);
    // The reads did their work: every one that names a seeded record answered.
    for (const tool of Object.keys(ids)) expect(runs.find((r) => r.read === `tool ${tool}`)).toEqual({ read: `tool ${tool}`, ok: true });
    expect(runs.filter((r) => r.read.startsWith('metric ') && r.ok).length).toBeGreaterThan(10);
    expect(writes).toEqual([]);
    expect(await journalEntries(sg.db).countDocuments({ _id: `je_${run.id}` })).toBe(0);

    // The leftovers are still there (no read repaired them); the owner's sweep finishes them, once.
    expect(await anyPendingChange(sg.db, owner.workspace)).toBe(true);
    const revenue = async () => ((await sg.db.collection('rollups').findOne({ _id: rollupId(owner.workspace, 'COP', 'd', day) } as never))?.v.revenue ?? 0) as number;
    const before = await revenue();
    await sg.sweep();
    expect(await anyPendingChange(sg.db, owner.workspace)).toBe(false);
    expect(await revenue()).toBe(before + 1_234);
    await sg.sweep();
    expect(await revenue()).toBe(before + 1_234);
    // The payroll posting: the reads woke the workspace (it has no mark yet), the background pull's next pass takes it in, once.
    const peers = { ...testServiceKeys(), urls: { payroll: payroll.url } };
    expect(await payrollPull.pass(sg.db, peers, createLogger('invoices', 'silent'), new Date())).toBe(1);
    expect(await payrollPull.pass(sg.db, peers, createLogger('invoices', 'silent'), new Date())).toBe(0);
    expect(await journalEntries(sg.db).countDocuments({ _id: `je_${run.id}` })).toBe(1);
  }, 60_000);
});
