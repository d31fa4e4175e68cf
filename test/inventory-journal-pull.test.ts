// Inventory's journal entries reach finance's books exactly once, in order, across crashes
// (issue 38): deliveries of a weighted-average item post cost of sales (6135 / 1435) through
// inventory's ordered feed (shared ordered-feed.ts), which finance pulls in the background
// (invoices accounting/feed_pull.ts). Finance is SIGKILLed while it is taking the entries in,
// then inventory is SIGKILLed in the middle of a burst of deliveries; every delivery that did not
// answer is sent again (its source document names its movement). Counted here, from the three
// databases, against the figures worked by hand: every delivery moved stock once, every movement
// has one feed entry with its own place (1…n, no hole), and finance holds exactly one entry per
// movement with its amounts.
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let ws: string;
let finance: Connection;
let inventory: Connection;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // A short repair wait: an entry whose writer (finance) was killed while counting it is counted by the sweep within the test.
  sys = await startTestSystem('invpull', OWN_SYSTEM_SETTINGS);
  ({ api_key: key, workspace_id: ws } = await sys.workspace('Bodega Andina SAS'));
  finance = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb.replace(/_gateway$/, '_invoices'));
  inventory = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb.replace(/_gateway$/, '_inventory'));
});
afterAll(async () => {
  await finance?.close();
  await inventory?.close();
  await sys?.stop();
});

/** Waits until `done()` holds (polling), or fails after `ms`. */
async function until(what: string, done: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const stockEntries = () => finance.collection('journal_entries').find({ workspace: ws, 'source.kind': 'stock_movement' }).toArray();

describe('inventory journal feed into the books, under SIGKILL', () => {
  it('posts each delivery\'s cost of sales once: finance killed mid-pull, inventory killed mid-burst, nothing lost or doubled', async () => {
    const item = (await sys.output('items.create', { name: 'Café 500 g', kind: 'product', sku: 'CAF-500', price: { amount: 25_000, currency: 'COP' }, tax_rate_ppm: 50_000 }, key)).item.id;
    const bog = (await sys.output('warehouses.create', { code: 'BOG', name: 'Bodega Bogotá' }, key)).warehouse.id;
    // 100 @ 1,000 = 100,000 and 100 @ 1,300 = 130,000 → 200 units, 230,000: average 1,150.
    await sys.output('stock.receive', { item_id: item, warehouse_id: bog, quantity: 100, unit_cost: 1_000, date: '2026-11-02', source: { kind: 'bill', id: 'bill_1' } }, key);
    await sys.output('stock.receive', { item_id: item, warehouse_id: bog, quantity: 100, unit_cost: 1_300, date: '2026-11-03', source: { kind: 'bill', id: 'bill_2' } }, key);
    // Each delivery of 2 takes value × 2 / quantity: 230,000 × 2 / 200 = 2,300, and the average stays
    // 1,150 (227,700 / 198 = 1,150), so every delivery costs exactly 2,300.
    const deliver = (i: number) => sys.invoke('stock.deliver', { item_id: item, warehouse_id: bog, quantity: 2, date: '2026-11-20', source: { kind: 'invoice', id: `inv_${i}`, line: 1 } }, key);
    const failed: number[] = [];

    // Phase 1: 40 deliveries one after another; finance is killed as soon as it has taken in the
    // first entries (the pull under way, more to come), and restarted.
    let killedAt = -1;
    const watcher = (async () => {
      await until('the first entries in the books', async () => (await stockEntries()).length > 0);
      killedAt = (await stockEntries()).length;
      await sys.killSubgraph('invoices');
      await sleep(300);
      await sys.restartSubgraph('invoices');
    })();
    for (let i = 0; i < 40; i++) {
      const r = await deliver(i);
      if (r.status !== 200) failed.push(i);
    }
    await watcher;
    console.log('[inventory-journal-pull] finance killed with', killedAt, 'entries in; deliveries refused meanwhile', failed.length);
    expect(killedAt).toBeGreaterThan(0);
    expect(killedAt).toBeLessThan(40);

    // Phase 2: 30 deliveries from 6 workers; inventory is killed after a third and restarted.
    let next = 40;
    let killed = false;
    await Promise.all(Array.from({ length: 6 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= 70) return;
        if (i === 50 && !killed) {
          killed = true;
          void sys.killSubgraph('inventory').then(async () => {
            await sleep(300);
            await sys.restartSubgraph('inventory');
          });
        }
        const r = await deliver(i);
        if (r.status !== 200) {
          expect(['unavailable', 'outcome_unknown']).toContain(r.body?.code);
          failed.push(i);
        }
      }
    }));
    for (let t = 0; t < 100 && (await sys.fetch('/healthz')).status !== 200; t++) await sleep(200);
    // Every delivery that did not answer, again with its source document: applied once, or answered as done.
    for (const i of failed) {
      let r = await deliver(i);
      for (let t = 0; t < 40 && r.status !== 200; t++) {
        await sleep(250);
        r = await deliver(i);
      }
      expect([i, r.status]).toEqual([i, 200]);
    }

    // The sweeps finish what the dead processes left; finance takes every entry in.
    const balances = inventory.collection('stock_balances');
    await until('inventory\'s pending writes', async () => (await balances.countDocuments({ workspace: ws, 'pending.0': { $exists: true } })) === 0);
    await until('all 70 entries in the books', async () => (await stockEntries()).length >= 70);

    // Inventory: one delivery per source document; 200 − 70 × 2 = 60 units, 60 × 1,150 = 69,000.
    const moves = await inventory.collection('stock_movements').find({ workspace: ws, type: 'delivery' }).toArray();
    expect(moves.map((m) => m.source.id).sort()).toEqual(Array.from({ length: 70 }, (_, i) => `inv_${i}`).sort());
    expect(moves.every((m) => m.value === -2_300)).toBe(true);
    const balance = await balances.findOne({ workspace: ws });
    expect([balance!.qty, balance!.value]).toEqual([60_000_000, 69_000]);
    // The feed: one entry per delivery, its places 1…70 with no hole and none twice.
    const feed = await inventory.collection('inventory_journal').find({ workspace: ws }).toArray();
    expect(feed.map((f) => f.movement_id).sort()).toEqual(moves.map((m) => m._id).sort());
    expect(feed.map((f) => f.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));

    // Finance: exactly one entry per movement, each 6135 Dr 2,300 / 1435 Cr 2,300, all counted.
    const entries = await stockEntries();
    expect(entries.map((e) => e._id).sort()).toEqual(moves.map((m) => `je_${m._id}`).sort());
    expect(entries.map((e) => e.source.id).sort()).toEqual(moves.map((m) => m._id).sort());
    for (const e of entries) expect(e.lines.map((l: { account: string; debit: number; credit: number }) => [l.account, l.debit, l.credit])).toEqual([['6135', 2_300, 0], ['1435', 0, 2_300]]);
    // Σ by account, added here: 70 × 2,300 = 161,000 on each side.
    const sum = (account: string, side: 'debit' | 'credit') => entries.flatMap((e) => e.lines).filter((l: { account: string }) => l.account === account).reduce((s: number, l: Record<string, number>) => s + l[side]!, 0);
    expect([sum('6135', 'debit'), sum('1435', 'credit')]).toEqual([161_000, 161_000]);
    await until('the entries counted in the rollups', async () => (await finance.collection('journal_entries').countDocuments({ workspace: ws, pending_count: { $gt: 0 } })) === 0);
    const mark = await finance.collection('inventory_pull_marks').findOne({ _id: ws as never });
    expect(mark?.waiting).toEqual([]);
  });
});
