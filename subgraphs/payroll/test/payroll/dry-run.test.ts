import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, writesDuring, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { payrollJournal } from '../../src/modules/payroll/journal_feed.ts';
import { payrollRuns } from '../../src/modules/payroll/runs.ts';
import { hirer } from '../support.ts';

// X-Dry-Run of payroll.post (issue 39): what the post would hand to the finance journal, with not
// one write command on either of the service's connections (the MongoDB driver's command monitoring).
let payroll: TestSubgraph;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer, { monitorCommands: true });
});
afterAll(async () => {
  await payroll?.close();
});
const hire = hirer(() => payroll);

describe('payroll.post and payroll.void with X-Dry-Run', () => {
  it('shows the run\'s journal lines and changes, writes nothing, and the post then feeds exactly those lines to the journal; payroll.void alike with the reversal', async () => {
    const owner = testPrincipal();
    await hire(owner);
    const run = (await payroll.call('payroll.run', { month: '2026-03' }, owner)).output.run;
    // Not approved yet: the dry run answers the refusal the post would get, and writes nothing.
    const early = await writesDuring(payroll, async () => {
      expect(await payroll.call('payroll.post', { id: run.id }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
      // Voiding a computed run changes its status only: no entry was posted, so none is reversed.
      expect(await payroll.call('payroll.void', { id: run.id }, owner, { dryRun: true })).toMatchObject({
        ok: true, output: { would: { changes: [{ source: 'payroll_runs', id: run.id, op: 'update', before: { status: 'computed' }, after: { status: 'void' } }], journal_lines: [] } },
      });
    });
    expect(early).toEqual([]);
    expect((await payroll.call('payroll.approve', { id: run.id, amount: run.totals.net }, owner)).ok).toBe(true);
    const ledgerBefore = await payroll.governance.ledger.entries.countDocuments({ workspace: owner.workspace });
    let dry: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    const writes = await writesDuring(payroll, async () => { dry = await payroll.call('payroll.post', { id: run.id }, owner, { dryRun: true }); });
    expect(writes).toEqual([]);
    expect(dry, JSON.stringify(dry)).toMatchObject({ ok: true, output: { decision: { effect: 'allow' } } });
    expect(await payroll.governance.ledger.entries.countDocuments({ workspace: owner.workspace })).toBe(ledgerBefore);
    const { changes, journal_lines: lines } = dry!.output.would as { changes: any[]; journal_lines: { account: string; debit: number; credit: number }[] };
    expect(changes[0]).toMatchObject({ source: 'payroll_runs', id: run.id, before: { status: 'approved' }, after: { status: 'posted' } });
    expect(changes[1]).toMatchObject({ source: 'payroll_journal', id: run.journal_entry.id, op: 'insert' });
    // Balanced, and the net pay (a minimum-wage month: the run's own net) owed on 250505 salaries payable.
    const total = (side: 'debit' | 'credit') => lines.reduce((s, l) => s + l[side], 0);
    expect(total('debit')).toBe(total('credit'));
    expect(lines.filter((l) => l.account === '250505').reduce((s, l) => s + l.credit, 0)).toBe(run.totals.net);
    expect(await payrollRuns(payroll.db).countDocuments({ _id: run.id, status: 'approved' })).toBe(1);
    expect(await payrollJournal(payroll.db).countDocuments({ _id: run.journal_entry.id })).toBe(0);
    expect((await payroll.call('payroll.post', { id: run.id }, owner)).ok).toBe(true);
    const fed = await payrollJournal(payroll.db).findById(run.journal_entry.id).lean() as unknown as { lines: unknown[] };
    expect(JSON.parse(JSON.stringify(fed.lines))).toEqual(lines);

    // payroll.void of the posted run: the reversing entry — every line of the posting, debit and credit swapped — and nothing written until the void.
    let dryVoid: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    expect(await writesDuring(payroll, async () => { dryVoid = await payroll.call('payroll.void', { id: run.id, reason: 'Novedad mal digitada' }, owner, { dryRun: true }); })).toEqual([]);
    const voided = dryVoid!.output.would as { changes: any[]; journal_lines: { account: string; debit: number; credit: number }[] };
    expect(voided.journal_lines).toEqual(lines.map((l) => ({ ...l, debit: l.credit, credit: l.debit })));
    expect(voided.changes[0]).toMatchObject({ source: 'payroll_runs', id: run.id, before: { status: 'posted' }, after: { status: 'void', void_reason: 'Novedad mal digitada' } });
    expect(voided.changes[1]).toMatchObject({ source: 'payroll_journal', id: `${run.journal_entry.id}_void`, op: 'insert', after: { kind: 'reversal' } });
    expect(await payrollRuns(payroll.db).countDocuments({ _id: run.id, status: 'posted' })).toBe(1);
    expect((await payroll.call('payroll.void', { id: run.id, reason: 'Novedad mal digitada' }, owner)).ok).toBe(true);
    const reversal = await payrollJournal(payroll.db).findById(`${run.journal_entry.id}_void`).lean() as unknown as { lines: unknown[] };
    expect(JSON.parse(JSON.stringify(reversal.lines))).toEqual(voided.journal_lines);
  });
});
