import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { invoices } from '../src/modules/invoices/model.ts';
import { ALL_TIME, Grain, LedgerCounter, partyShard, partyShardId, rollupId } from '../src/books/rollup-store.ts';
import { partyTotals } from '../src/books/rollup-reads.ts';
import { anyPendingChange, applyRollupIntent, markIntent, REPAIR_AFTER_MS, repairPendingRollups, rollupIntent } from '../src/books/rollup-intents.ts';
import { DONE_MARKS } from '@cuadra/shared';
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

  it('are counted once when a second applier read the intent before the first finished it (a sweep racing a slow handler, finance-faults 6,100,000)', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const model = invoices(sg.db);
    const day = '2026-11-03';
    const doc = (grain: Grain, period: string) => sg.db.collection('rollups').findOne({ _id: rollupId(owner.workspace, 'COP', grain, period) } as never);
    const counted = async () => [(await doc(Grain.Day, day))?.v.collected ?? 0, (await doc(Grain.Month, day.slice(0, 7)))?.v.collected ?? 0, (await doc(Grain.AllTime, ALL_TIME))?.v.collected ?? 0];
    const before = await counted();
    // The handler wrote its change with the intent (its marker older than the repair's wait: a slow call under load).
    const intent = rollupIntent([{ day, currency: 'COP', inc: { collected: 100_000 } }], new Date(Date.now() - REPAIR_AFTER_MS - 1000))!;
    await markIntent(sg.db, owner.workspace, model, inv.id, intent);
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
    // The sweep reads the document and finds the intent still listed …
    const seen = (await model.findById(inv.id).lean())!.pending_rollups.find((i: { id: string }) => i.id === intent.id)!;
    // … the handler applies it, takes it off the document and is done …
    await applyRollupIntent(sg.db, model, inv.id, owner.workspace, intent);
    expect(await counted()).toEqual(before.map((v) => v + 100_000));
    // … then the sweep applies what it read: nothing may count a second time.
    await applyRollupIntent(sg.db, model, inv.id, owner.workspace, seen as never);
    expect(await counted()).toEqual(before.map((v) => v + 100_000));
    expect((await model.findById(inv.id).lean())!.pending_count).toBe(0);
    expect(await sg.db.collection('pending_changes').countDocuments({ workspace: owner.workspace })).toBe(0);
    // A later change still counts (the record of finished changes keeps only their ids, never blocks a new one).
    const next = rollupIntent([{ day, currency: 'COP', inc: { collected: 7 } }], new Date())!;
    await markIntent(sg.db, owner.workspace, model, inv.id, next);
    await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: next }, $inc: { pending_count: 1 } });
    await applyRollupIntent(sg.db, model, inv.id, owner.workspace, next);
    expect(await counted()).toEqual(before.map((v) => v + 100_007));
    // The finished marks a rollup document keeps are bounded: the last DONE_MARKS, newest last, none in flight.
    let last = next;
    for (let k = 0; k < DONE_MARKS + 6; k++) {
      last = rollupIntent([{ day, currency: 'COP', inc: { collected: 1 } }], new Date())!;
      await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: last }, $inc: { pending_count: 1 } });
      await applyRollupIntent(sg.db, model, inv.id, owner.workspace, last);
    }
    const day1 = (await doc(Grain.Day, day))!;
    expect([day1.done.length, day1.done.at(-1), day1.applied]).toEqual([DONE_MARKS, `${last.id}#0`, []]);
    expect(await counted()).toEqual(before.map((v) => v + 100_007 + DONE_MARKS + 6));
  });

  it('keep a customer\'s counters by day and month only, each in its shard: no document a post writes holds every customer of its day, month or all time', async () => {
    // issue 33: the all-time document held every customer's counters (~9 MB at 90,000 customers), and the month
    // document every customer of the month (~1 MB at 8,000: one $inc there 391 ms against 21 ms at 100 customers),
    // rewritten on every post and payment.
    const owner = await configuredWorkspace(sg);
    const model = invoices(sg.db);
    const inv = await draft(sg, owner);
    const day = '2026-11-03';
    const customers = ['pty_a', 'pty_b', 'pty_c', 'pty_d', 'pty_e'];
    for (const [n, customer] of customers.entries()) {
      const intent = rollupIntent([{ day, currency: 'COP', inc: { revenue: 100 * (n + 1), invoices: 1 }, customer: { id: customer, name: `Cliente ${n}`, inc: { revenue: 100 * (n + 1) } } }], new Date());
      await markIntent(sg.db, owner.workspace, model, inv.id, intent);
      await model.updateOne({ _id: inv.id }, { $push: { pending_rollups: intent }, $inc: { pending_count: 1 } });
      await applyRollupIntent(sg.db, model, inv.id, owner.workspace, intent);
    }
    const rollupsOf = sg.db.collection('rollups');
    const doc = (grain: 'd' | 'm' | 'a', period: string) => rollupsOf.findOne({ _id: rollupId(owner.workspace, 'COP', grain, period) } as never);
    const all = (await doc('a', 'all'))!;
    expect(all.v.revenue).toBe(1500);
    expect(all.c ?? {}).toEqual({});
    for (const [grain, period] of [['d', day], ['m', '2026-11']] as const) {
      const d = (await doc(grain, period))!;
      expect(d.v.revenue).toBe(1500);
      expect(d.c ?? {}).toEqual({});
      expect(d.n ?? {}).toEqual({});
      // Each customer in the shard its id hashes to, beside only the customers that hash there too.
      for (const [n, customer] of customers.entries()) {
        const shard = partyShard(grain, customer);
        const held = (await rollupsOf.findOne({ _id: partyShardId(owner.workspace, 'COP', grain, period, shard) } as never))!;
        expect(held.c[customer]).toEqual({ revenue: 100 * (n + 1) });
        expect(held.n[customer]).toBe(`Cliente ${n}`);
        expect(Object.keys(held.c).sort()).toEqual(customers.filter((c) => partyShard(grain, c) === shard));
      }
    }
    expect(new Set(customers.map((c) => partyShard('m', c))).size).toBeGreaterThan(1);
    // Party totals read every shard, and a month document written before the shards (its customers in itself).
    await rollupsOf.updateOne({ _id: rollupId(owner.workspace, 'COP', 'm', '2026-11') } as never, { $inc: { 'c.pty_old.revenue': 50 }, $set: { 'n.pty_old': 'Cliente antiguo' } });
    const totals = (from: string, to: string) => partyTotals(sg.db, owner.workspace, 'COP', from, to, 'revenue').then((m) => Object.fromEntries([...m].map(([id, t]) => [id, t.value])));
    expect(await totals('2026-11-01', '2026-11-30')).toEqual({ pty_a: 100, pty_b: 200, pty_c: 300, pty_d: 400, pty_e: 500, pty_old: 50 });
    expect(await totals(day, day)).toEqual({ pty_a: 100, pty_b: 200, pty_c: 300, pty_d: 400, pty_e: 500 });
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
