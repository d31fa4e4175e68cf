import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writesDuring as writesOf, type TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { journalEntries } from '../src/books/index.ts';
import { andina, configuredWorkspace, draft, startInvoices } from './setup.ts';
import { draftBill, postedBill, vendor } from './bills-helpers.ts';
import { bills } from '../src/modules/bills/model.ts';
import { manualEntries } from '../src/modules/journal/manual.ts';
import { payments } from '../src/modules/payments/model.ts';
import type { Principal } from '@cuadra/shared';

// X-Dry-Run (issue 39): the owner answers what a write would do and does nothing. "Nothing" is
// checked with the MongoDB driver's command monitoring on both of the service's connections (its
// own database and the governance one: ledger, approvals, idempotency): not one write command.
let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices({ monitorCommands: true });
});
afterAll(async () => {
  await sg?.close();
});

/** Runs `work` and answers the write commands both of the service's connections sent meanwhile. */
function writesDuring(work: () => Promise<unknown>): Promise<string[]> {
  return writesOf(sg, work);
}

describe('dry runs', () => {
  it('invoices.post with X-Dry-Run shows the journal lines and the changes, and writes nothing: the invoice stays a draft, the ledger has no action', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await draft(sg, owner);
    const ledgerBefore = await sg.governance.ledger.entries.countDocuments({ workspace: owner.workspace });
    let answer: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    const writes = await writesDuring(async () => { answer = await sg.call('invoices.post', { id: invoice.id }, owner, { dryRun: true }); });
    expect(writes).toEqual([]);
    expect(answer).toMatchObject({ ok: true, httpStatus: 200 });
    const { decision, would } = answer!.output;
    expect(decision).toEqual({ effect: 'allow', policy: null });
    // By hand: 2 × 15,000,000 = 30,000,000 of revenue; VAT 19 % = 5,700,000; receivable 35,700,000.
    const lines = would.journal_lines as { account: string; debit: number; credit: number }[];
    const total = (side: 'debit' | 'credit', prefix: string) => lines.filter((l) => l.account.startsWith(prefix)).reduce((s, l) => s + (l[side] ?? 0), 0);
    expect(total('debit', '1305')).toBe(35_700_000);
    expect(total('credit', '4')).toBe(30_000_000);
    expect(total('credit', '2408')).toBe(5_700_000);
    expect(lines.reduce((s, l) => s + (l.debit ?? 0), 0)).toBe(lines.reduce((s, l) => s + (l.credit ?? 0), 0));
    expect(would.changes[0]).toMatchObject({ source: 'invoices', id: invoice.id, op: 'update', before: { status: 'draft' }, after: { status: 'posted', journal_entry_id: `je_${invoice.id}` } });
    expect(would.changes[1]).toMatchObject({ source: 'journal_entries', id: `je_${invoice.id}`, op: 'insert', after: { lines } });
    // Nothing happened: still a draft, no journal entry, no ledger entry at all.
    expect((await invoices(sg.db).findById(invoice.id).lean())).toMatchObject({ status: 'draft', number: null, journal_entry_id: null });
    expect(await journalEntries(sg.db).countDocuments({ _id: `je_${invoice.id}` })).toBe(0);
    expect(await sg.governance.ledger.entries.countDocuments({ workspace: owner.workspace })).toBe(ledgerBefore);
    // The post itself then writes exactly those lines.
    const posted = await sg.call('invoices.post', { id: invoice.id }, owner);
    expect(posted).toMatchObject({ ok: true, output: { invoice: { status: 'posted' } } });
    const entry = await journalEntries(sg.db).findById(`je_${invoice.id}`).lean() as unknown as { lines: unknown[] };
    expect(JSON.parse(JSON.stringify(entry.lines))).toMatchObject(lines);
  });

  it('answers the policy decision a real call would get, and the refusals it would get, without doing anything', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await draft(sg, owner);
    const writes = await writesDuring(async () => {
      expect(await sg.call('invoices.post', { id: 'inv_nope' }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'not_found' });
      expect(await sg.call('invoices.post', { id: 5 }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'invalid_input', field: '/id' });
    });
    // A refusal of the schema check is recorded like any refused call; the preview's own refusals write nothing.
    expect(writes.filter((w) => !w.includes('ledger'))).toEqual([]);
    await sg.call('invoices.post', { id: invoice.id }, owner);
    expect(await sg.call('invoices.post', { id: invoice.id }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('a write tool that cannot say what it would do refuses X-Dry-Run (dry_run_unsupported) and does nothing; a read answers its decision only', async () => {
    const owner = await configuredWorkspace(sg);
    const customer = await andina(owner);
    const before = await invoices(sg.db).countDocuments({ workspace: owner.workspace });
    const writes = await writesDuring(async () => {
      const r = await sg.call('invoices.create', { customer_id: customer, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02', lines: [{ description: 'Consultoría', quantity: 1, unit_price: 100, tax_rate_ppm: 190000 }] }, owner, { dryRun: true });
      expect(r).toMatchObject({ ok: false, code: 'dry_run_unsupported', httpStatus: 400 });
      expect(await sg.call('invoices.list', {}, owner, { dryRun: true })).toMatchObject({ ok: true, output: { decision: { effect: 'allow' }, would: null } });
    });
    expect(writes).toEqual([]);
    expect(await invoices(sg.db).countDocuments({ workspace: owner.workspace })).toBe(before);
  });

  /**
   * The dry run of `tool` (its writes counted: there must be none), then the real call: the
   * journal entry the real call wrote (`entryOf` its output) has exactly the lines the dry run
   * showed — the preview and the call run one path.
   */
  async function dryThenReal(tool: string, input: Record<string, unknown>, owner: Principal, entryOf: (output: any) => string) {
    const ledgerBefore = await sg.governance.ledger.entries.countDocuments({ workspace: owner.workspace });
    let dry: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    const writes = await writesDuring(async () => { dry = await sg.call(tool, input, owner, { dryRun: true }); });
    expect(writes).toEqual([]);
    expect(dry, JSON.stringify(dry)).toMatchObject({ ok: true, httpStatus: 200, output: { decision: { effect: 'allow' } } });
    expect(await sg.governance.ledger.entries.countDocuments({ workspace: owner.workspace })).toBe(ledgerBefore);
    const would = dry!.output.would as { changes: { source: string; id: string; op: string; before?: any; after: any }[]; journal_lines: { account: string; debit: number; credit: number }[] };
    const real = await sg.call(tool, input, owner);
    expect(real, JSON.stringify(real)).toMatchObject({ ok: true });
    const entry = await journalEntries(sg.db).findById(entryOf(real.output)).lean() as unknown as { lines: unknown[] };
    expect(JSON.parse(JSON.stringify(entry.lines))).toEqual(would.journal_lines);
    return { would, output: real.output };
  }

  /** Σ of one side of the lines on accounts starting with `prefix`. */
  function sum(lines: { account: string; debit: number; credit: number }[], side: 'debit' | 'credit', prefix: string) {
    return lines.filter((l) => l.account.startsWith(prefix)).reduce((s, l) => s + (l[side] ?? 0), 0);
  }

  it('bills.post: the dry run shows the payable\'s journal lines and leaves the bill a draft; the post then writes exactly those lines', async () => {
    const owner = await configuredWorkspace(sg);
    const bill = await draftBill(sg, owner, await vendor(owner));
    const writes = await writesDuring(() => sg.call('bills.post', { id: bill.id }, owner, { dryRun: true }));
    expect(writes).toEqual([]);
    expect((await bills(sg.db).findById(bill.id).lean())).toMatchObject({ status: 'draft', journal_entry_id: null });
    const { would } = await dryThenReal('bills.post', { id: bill.id }, owner, (o) => o.bill.journal_entry_id);
    // By hand: 1 × 100,000 = 100,000 of expense (5135); VAT 19 % = 19,000 deductible (2408); payable 119,000 (2205).
    expect(sum(would.journal_lines, 'debit', '5135')).toBe(100_000);
    expect(sum(would.journal_lines, 'debit', '2408')).toBe(19_000);
    expect(sum(would.journal_lines, 'credit', '22')).toBe(119_000);
    expect(would.changes[0]).toMatchObject({ source: 'bills', id: bill.id, op: 'update', before: { status: 'draft' }, after: { status: 'posted', journal_entry_id: `je_${bill.id}` } });
    expect(would.changes[1]).toMatchObject({ source: 'journal_entries', id: `je_${bill.id}`, op: 'insert' });
    // Posted now: its dry run answers the refusal the post would get.
    expect(await sg.call('bills.post', { id: bill.id }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('journal.post and journal.reverse: each dry run shows its entry\'s lines (the reversal swapped) and changes nothing; the calls then write exactly those', async () => {
    const owner = await configuredWorkspace(sg);
    const created = await sg.call('journal.create', { date: '2026-11-03', memo: 'Ajuste de caja', lines: [{ account: '5195', debit: 25_000 }, { account: '110505', credit: 25_000 }] }, owner);
    expect(created, JSON.stringify(created)).toMatchObject({ ok: true });
    const id = created.output.entry.id as string;
    const posted = await dryThenReal('journal.post', { id }, owner, (o) => o.entry.journal_entry_id);
    expect(posted.would.journal_lines.map((l) => [l.account, l.debit, l.credit])).toEqual([['5195', 25_000, 0], ['110505', 0, 25_000]]);
    expect(posted.would.changes[0]).toMatchObject({ source: 'manual_entries', id, before: { status: 'draft' }, after: { status: 'posted' } });
    const reversed = await dryThenReal('journal.reverse', { id, date: '2026-11-04' }, owner, (o) => o.entry.reversal_entry_id);
    expect(reversed.would.journal_lines.map((l) => [l.account, l.debit, l.credit])).toEqual([['5195', 0, 25_000], ['110505', 25_000, 0]]);
    expect(reversed.would.changes[1]).toMatchObject({ source: 'journal_entries', id: `je_${id}_rev`, op: 'insert', after: { date: '2026-11-04' } });
    expect(await manualEntries(sg.db).countDocuments({ _id: id, status: 'reversed' })).toBe(1);
  });

  it('payments.register and invoices.credit_note: the dry runs show the balances they would settle and the journal lines, write nothing, and match what the calls then do', async () => {
    const owner = await configuredWorkspace(sg);
    const invoice = await draft(sg, owner);
    expect(await sg.call('invoices.post', { id: invoice.id }, owner)).toMatchObject({ ok: true });
    const customer = await andina(owner);
    // A credit of line 0, quantity 1: 15,000,000 of revenue + VAT 19 % 2,850,000 = 17,850,000 off the 35,700,000 receivable.
    const note = await dryThenReal('invoices.credit_note', { invoice_id: invoice.id, concept: 3, reason: 'Descuento acordado', lines: [{ line: 0, quantity: 1 }] }, owner, (o) => o.credit_note.journal_entry_id);
    expect(sum(note.would.journal_lines, 'debit', '4')).toBe(15_000_000);
    expect(sum(note.would.journal_lines, 'debit', '2408')).toBe(2_850_000);
    expect(sum(note.would.journal_lines, 'credit', '1305')).toBe(17_850_000);
    expect(note.would.changes.find((c) => c.id === invoice.id)).toMatchObject({ op: 'update', before: { balance: 35_700_000 }, after: { balance: 17_850_000 } });
    expect(note.output.invoice.balance).toBe(17_850_000);
    // 20,000,000 received: 17,850,000 settles the invoice, 2,150,000 is kept as the customer's credit.
    const paid = await dryThenReal('payments.register', { customer_id: customer, amount: 20_000_000, currency: 'COP', date: '2026-11-05' }, owner, (o) => o.payment.journal_entry_id);
    expect(sum(paid.would.journal_lines, 'debit', '11')).toBe(20_000_000);
    expect(sum(paid.would.journal_lines, 'credit', '1305')).toBe(17_850_000);
    expect(sum(paid.would.journal_lines, 'credit', '28')).toBe(2_150_000);
    expect(paid.would.changes.find((c) => c.id === invoice.id)).toMatchObject({ before: { balance: 17_850_000 }, after: { balance: 0, status: 'paid' } });
    expect(paid.would.changes[0]).toMatchObject({ source: 'payments', op: 'insert', after: { applied: 17_850_000, unapplied: 2_150_000 } });
    expect(await payments(sg.db).findById(paid.output.payment.id).lean()).toMatchObject({ applied: 17_850_000, unapplied: 2_150_000 });
    // The refusals a real call would get, without writing: a paid invoice takes no payment.
    const writes = await writesDuring(async () => {
      expect(await sg.call('payments.register', { customer_id: customer, amount: 1, currency: 'COP', invoices: [{ invoice_id: invoice.id }] }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
    });
    expect(writes).toEqual([]);
  });

  it('bills.void, bills.credit_note and bills.pay: each dry run shows what it would change and its journal lines, writes nothing, and the calls then store exactly that', async () => {
    const owner = await configuredWorkspace(sg);
    const vendorId = await vendor(owner);
    // A draft voided: its status only (a draft has no entry), nothing written until the call.
    const mistaken = await draftBill(sg, owner, vendorId);
    let dryVoid: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    expect(await writesDuring(async () => { dryVoid = await sg.call('bills.void', { id: mistaken.id }, owner, { dryRun: true }); })).toEqual([]);
    expect(dryVoid!.output.would).toEqual({ changes: [{ source: 'bills', id: mistaken.id, op: 'update', before: { status: 'draft', balance: mistaken.balance }, after: { status: 'void', balance: 0 } }], journal_lines: [] });
    expect(await bills(sg.db).findById(mistaken.id).lean()).toMatchObject({ status: 'draft' });
    expect(await sg.call('bills.void', { id: mistaken.id }, owner)).toMatchObject({ ok: true, output: { bill: { status: 'void', balance: 0 } } });
    expect(await sg.call('bills.void', { id: mistaken.id }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });

    // 2 × 100,000 = 200,000 of maintenance (5135) + VAT 19 % 38,000 (2408) = 238,000 payable (2205).
    const bill = await postedBill(sg, owner, vendorId, { lines: [{ description: 'Mantenimiento', account: '5135', quantity: 2, unit_price: 100000, tax_rate_ppm: 190000 }] });
    expect(bill.balance).toBe(238_000);
    // A vendor's credit note for 1 of the 2: 100,000 + 19,000 VAT = 119,000 less owed; its entry reverses the bill's for that share.
    const note = await dryThenReal('bills.credit_note', { bill_id: bill.id, supplier_number: 'NC-7', reason: 'Un servicio no prestado', lines: [{ line: 0, quantity: 1 }] }, owner, (o) => o.credit_note.journal_entry_id);
    expect(sum(note.would.journal_lines, 'debit', '2205')).toBe(119_000);
    expect(sum(note.would.journal_lines, 'credit', '5135')).toBe(100_000);
    expect(sum(note.would.journal_lines, 'credit', '2408')).toBe(19_000);
    expect(note.would.changes.find((c) => c.id === bill.id)).toEqual({ source: 'bills', id: bill.id, op: 'update', before: { balance: 238_000, status: 'posted' }, after: { balance: 119_000, status: note.output.bill.status } });
    expect(note.would.changes[0]).toMatchObject({ source: 'bills', op: 'insert', after: { kind: 'credit_note', supplier_number: 'NC-7', amount_due: 119_000 } });
    expect(note.output.bill.balance).toBe(119_000);
    // The same note number again is the same note: its dry run changes nothing.
    expect(await sg.call('bills.credit_note', { bill_id: bill.id, supplier_number: 'NC-7', reason: 'Un servicio no prestado', lines: [{ line: 0, quantity: 1 }] }, owner, { dryRun: true })).toMatchObject({ ok: true, output: { would: { changes: [], journal_lines: [] } } });

    // The 119,000 left, paid from 111005: Dr payables 119,000, Cr bank 119,000; the bill paid.
    const paid = await dryThenReal('bills.pay', { vendor_id: vendorId, amount: 119_000, currency: 'COP', date: '2026-11-06', bills: [{ bill_id: bill.id }] }, owner, (o) => o.payment.journal_entry_id);
    expect(paid.would.journal_lines.map((l) => [l.account, l.debit, l.credit])).toEqual([['220505', 119_000, 0], ['111005', 0, 119_000]]);
    expect(paid.would.changes[0]).toMatchObject({ source: 'bill_payments', op: 'insert', after: { status: 'completed', amount: 119_000, allocations: [{ bill_id: bill.id, applied: 119_000 }] } });
    expect(paid.would.changes.find((c) => c.id === bill.id)).toMatchObject({ before: { balance: 119_000 }, after: { balance: 0, status: 'paid' } });
    expect(await bills(sg.db).findById(bill.id).lean()).toMatchObject({ balance: 0, status: 'paid' });
    // Paid now: a second payment's dry run answers the refusal the payment would get, writing nothing.
    expect(await writesDuring(async () => {
      expect(await sg.call('bills.pay', { vendor_id: vendorId, amount: 1, currency: 'COP', bills: [{ bill_id: bill.id }] }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
    })).toEqual([]);
  });
});
