import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { ALL_TIME, Grain, LedgerCounter, rollupId } from '../src/books/rollup-store.ts';
import { anyPendingChange, applyRollupIntent, markIntent, REPAIR_AFTER_MS, repairPendingRollups, rollupIntent } from '../src/books/rollup-intents.ts';
import { receivablesMetrics } from '../src/modules/invoices/metrics.ts';
import { localDate } from '../src/lib/money.ts';
import { configuredWorkspace, draft, startInvoices } from './setup.ts';
import { createPositioned } from '@cuadra/shared';
import { journalEntries, LEDGER_ROLLUP_VERSION, ledgerCurrency, ledgerDeltas, type JournalEntryDoc } from '../src/books/journal.ts';
import { postEntry } from '../src/books/index.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

describe('the rollups\' stored vocabulary', () => {
  it('keeps the stored grain ids and counter keys (names in code, the same values on disk: no migration)', () => {
    expect(Grain).toEqual({ Day: 'd', Month: 'm', AllTime: 'a', DueDay: 'due', DueMonth: 'duem' });
    expect(rollupId('w1', 'COP', Grain.AllTime, ALL_TIME)).toBe('w1|COP|a|all');
    expect([LedgerCounter.debit('4135'), LedgerCounter.credit('4135'), LedgerCounter.closingDebit('4135'), LedgerCounter.closingCredit('4135')]).toEqual(['d4135', 'c4135', 'kd4135', 'kc4135']);
    expect(['d4135', 'c130505', 'kd4135', 'kc4135', 'pi~x'].map(LedgerCounter.accountOf)).toEqual(['4135', '130505', null, null, null]);
  });
});

describe('rollup intents', () => {
  it('are applied once even when applied twice, and a dead handler’s intent is finished by the repair', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const model = invoices(sg.db);
    const day = '2026-11-02';
    const total = () => sg.db.collection('rollups').findOne({ _id: rollupId(owner.workspace, 'COP', 'd', day) } as never);
    const before = (await total())?.v.revenue ?? 0;
    // A handler marked its intent, wrote its change with it, then died before touching the rollups.
    const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: 1234 } }], new Date(Date.now() - REPAIR_AFTER_MS - 1000))!;
    await markIntent(sg.db, owner.workspace, model, inv.id, intent);
    // Another marked a change that never happened (it lost its race): the repair just drops the marker.
    const lost = rollupIntent([{ day, currency: 'COP', inc: { revenue: 99 } }], intent.at)!;
    await markIntent(sg.db, owner.workspace, model, inv.id, lost);
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    // Too fresh for the repair: it belongs to a live handler.
    expect(await repairPendingRollups(sg.db, owner.workspace, [model], new Date(intent.at.getTime() + 1000))).toBe(0);
    expect(await repairPendingRollups(sg.db, owner.workspace, [model])).toBe(1);
    expect((await total())!.v.revenue).toBe(before + 1234);
    expect(await sg.db.collection('pending_changes').countDocuments({ workspace: owner.workspace })).toBe(0);
    // Applying the same intent again (a repair racing the handler) changes nothing.
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    await sg.db.collection('rollups').updateOne({ _id: rollupId(owner.workspace, 'COP', 'd', day) } as never, { $addToSet: { applied: `${intent.id}#0` } });
    await applyRollupIntent(sg.db, model, inv.id, owner.workspace, intent);
    expect((await total())!.v.revenue).toBe(before + 1234);
    expect((await model.findById(inv.id).lean())!.pending_count).toBe(0);
    expect((await total())!.applied).toEqual([]);
  });

  it('keep a customer\'s counters by day and month only: the all-time document does not grow with every customer a post names', async () => {
    // issue 33: the all-time document held every customer's counters (~9 MB at 90,000 customers), rewritten on
    // every post and payment and read whole by as_of metrics, though no read takes customers from it.
    const owner = await configuredWorkspace(sg);
    const model = invoices(sg.db);
    const inv = await draft(sg, owner);
    const day = '2026-11-03';
    for (const [n, customer] of ['pty_a', 'pty_b', 'pty_c'].entries()) {
      const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: 100 * (n + 1), invoices: 1 }, customer: { id: customer, name: `Cliente ${n}`, inc: { revenue: 100 * (n + 1) } } }], new Date());
      await markIntent(sg.db, owner.workspace, model, inv.id, intent);
      await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
      await applyRollupIntent(sg.db, model, inv.id, owner.workspace, intent);
    }
    const doc = (grain: 'd' | 'm' | 'a', period: string) => sg.db.collection('rollups').findOne({ _id: rollupId(owner.workspace, 'COP', grain, period) } as never);
    const all = (await doc('a', 'all'))!;
    expect(all.v.revenue).toBe(600);
    expect(all.c ?? {}).toEqual({});
    expect(all.n ?? {}).toEqual({});
    // The day and the month keep them (top_customers reads those): 100 + 200 + 300 by customer.
    for (const [grain, period] of [['d', day], ['m', '2026-11']] as const) {
      const d = (await doc(grain, period))!;
      expect(d.c).toEqual({ pty_a: { revenue: 100 }, pty_b: { revenue: 200 }, pty_c: { revenue: 300 } });
      expect(d.n).toEqual({ pty_a: 'Cliente 0', pty_b: 'Cliente 1', pty_c: 'Cliente 2' });
    }
  });

  it('the sweep finishes a dead handler’s intent (never a metrics read), and finds nothing to do once none is left', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const model = invoices(sg.db);
    const now = new Date();
    const day = localDate(now);
    const read = async () => ((await receivablesMetrics.revenue({ metric: 'revenue', days: 7 }, { db: sg.db, workspace: owner.workspace, now: new Date() } as never)) as { summary: { value: number } }).summary.value;
    const before = await read();
    const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: 4321 } }], new Date(now.getTime() - REPAIR_AFTER_MS - 1000))!;
    await markIntent(sg.db, owner.workspace, model, inv.id, intent);
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    expect(await anyPendingChange(sg.db, owner.workspace)).toBe(true);
    // The owner's background sweep runs the modules' maintenance hooks (reads never write).
    await sg.sweep();
    expect(await read()).toBe(before + 4321);
    expect(await anyPendingChange(sg.db, owner.workspace)).toBe(false);
    expect(await read()).toBe(before + 4321);
  });

  it('a second writer of a journal entry whose holder never counts it gives up with conflict, having applied nothing', async () => {
    const owner = await configuredWorkspace(sg);
    const day = '2026-11-03';
    const entry: JournalEntryDoc = {
      _id: `je_settle_${owner.workspace}`, workspace: owner.workspace, date: day, currency: 'COP', memo: 'Nómina', source: { kind: 'payroll', id: 'prun_x' },
      lines: [{ account: '510506', name: 'Sueldos', debit: 5_000, credit: 0, party_id: null }, { account: '250505', name: 'Salarios por pagar', debit: 0, credit: 5_000, party_id: null }],
      created_at: new Date(Date.now() - REPAIR_AFTER_MS - 1000),
    };
    const model = journalEntries(sg.db);
    const ledger = () => sg.db.collection('rollups').findOne({ _id: rollupId(owner.workspace, ledgerCurrency('COP'), 'd', day) } as never);
    const before = (await ledger())?.v ?? {};
    // The holder wrote the entry with its intent (holding the mark), then never counted it.
    const intent = rollupIntent(ledgerDeltas(entry), entry.created_at)!;
    await markIntent(sg.db, owner.workspace, model, entry._id, intent);
    await createPositioned(model, { ...entry, pending_rollups: [intent], pending_count: 1, rolled: LEDGER_ROLLUP_VERSION });
    const postAgain = () => postEntry({ db: sg.db, workspace: entry.workspace, now: entry.created_at }, entry.source, entry.lines, { id: entry._id, date: entry.date, currency: entry.currency, memo: entry.memo }, { settleWaitMs: 300 });
    const started = Date.now();
    await expect(postAgain()).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('still being counted') });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    // Nothing applied by the second writer: the mark is still the holder's, the rollups as before.
    expect((await model.findById(entry._id).lean())!.pending_count).toBe(1);
    expect((await ledger())?.v ?? {}).toEqual(before);
    // The repair counts it once; a later writer then answers at once and counts nothing again.
    expect(await repairPendingRollups(sg.db, owner.workspace, [model])).toBe(1);
    const counted = (await ledger())!.v;
    expect(counted).not.toEqual(before);
    await postAgain();
    expect((await ledger())!.v).toEqual(counted);
    expect(await model.countDocuments({ _id: entry._id })).toBe(1);
  });
});
