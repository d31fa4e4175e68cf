import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRITE_COMMANDS, type TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { journalEntries } from '../src/books/index.ts';
import { andina, configuredWorkspace, draft, startInvoices } from './setup.ts';

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

/** Runs `work` and answers the write commands both connections sent meanwhile. */
async function writesDuring(work: () => Promise<unknown>): Promise<string[]> {
  const writes: string[] = [];
  const listener = (e: { commandName: string; command: Record<string, unknown>; databaseName: string }) => {
    if (WRITE_COMMANDS.has(e.commandName)) writes.push(`${e.databaseName}.${String(e.command[e.commandName])} ${e.commandName}`);
  };
  const clients = [sg.db.getClient(), sg.governance.db.getClient()];
  for (const c of clients) c.on('commandStarted', listener);
  try {
    await work();
  } finally {
    for (const c of clients) c.off('commandStarted', listener);
  }
  return writes;
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
});
