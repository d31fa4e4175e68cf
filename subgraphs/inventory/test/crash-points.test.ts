import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { finishPendingEverywhere, newBalance, writeMovement } from '../src/modules/stock/ledger.ts';
import { inventoryFeed, inventoryJournal } from '../src/modules/stock/journal_feed.ts';
import { stockBalances, stockDays, stockMovements, type BalanceDoc } from '../src/modules/stock/model.ts';

/*
 * A process SIGKILLed at the two points of a movement where a crash leaves the most behind:
 * between the balance's conditional update (the commit) and the movement document's insert, and
 * between that insert and the journal entry's place in the feed finance pulls. A child process
 * (helpers/crash-child.ts) writes the delivery and kills itself at the point; then the sweep's
 * repair runs and the same delivery is sent again. Counted here from the collections: zero lost,
 * zero doubled. Real MongoDB-protocol server (npm test's).
 */

let db: Connection;
let name: string;
const workspace = `ws_crash_${process.pid}`;
const unit = 1_000_000;
const child = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'crash-child.ts');

beforeAll(async () => {
  const url = process.env.MONGO_URL;
  if (!url) throw new Error('MONGO_URL is not set: run the tests with `npm test`.');
  name = `inventory_crash_${process.pid}_${Date.now()}`;
  db = await connectDatabase(url, name);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

/** Runs the child to its crash point; answers the signal it died of. */
function crashAt(point: 'movement' | 'feed', balance: string, sourceId: string): string | null {
  const r = spawnSync(process.execPath, [child, process.env.MONGO_URL!, name, balance, workspace, point, sourceId], { encoding: 'utf8', timeout: 30_000 });
  if (r.signal !== 'SIGKILL') throw new Error(`the child did not die at ${point}: status ${r.status}, ${r.stderr}`);
  return r.signal;
}

describe('stock ledger: SIGKILL mid-movement', () => {
  for (const point of ['movement', 'feed'] as const) {
    it(`killed after the commit (${point === 'movement' ? 'before the movement document' : 'before the feed entry'}): the sweep finishes it once, a retry changes nothing`, async () => {
      const b = newBalance({ workspace, item_id: `itm_${point}`, item_name: 'Café 500 g', item_sku: null, unit: 'und', warehouse_id: 'bog', warehouse_code: 'BOG', method: 'average', allow_negative: false, reorder_point: 0, currency: 'COP', created_at: new Date() });
      await stockBalances(db).create(b);
      // 10 units at 1,150 = 11,500 (finished by its writer: receipts post no entry).
      await writeMovement(db, undefined, b, { type: 'receipt', date: '2026-11-01', qty: 10 * unit, value: 11_500, source: null, reason: null }, { now: new Date(), dryRun: false, skipOpenCheck: true });
      const feedBefore = (await inventoryFeed.heads(db).findOne({ _id: workspace }))?.head ?? 0;

      expect(crashAt(point, b._id, `inv_${point}`)).toBe('SIGKILL');

      // What the dead process left: the balance moved (2 units out at 11,500 × 2 / 10 = 2,300) and lists the insert still to do.
      const left = (await stockBalances(db).findOne({ _id: b._id }).lean<BalanceDoc>())!;
      expect([left.qty, left.value]).toEqual([8 * unit, 9_200]);
      // Version 0 created, 1 the receipt, 2 this delivery: its end-of-day snapshot is to write too.
      expect(left.pending.map((p) => p.key)).toEqual([`insert:mv_inv_${point}`, 'day:2026-11-20:2']);
      expect(await stockMovements(db).countDocuments({ _id: `mv_inv_${point}` })).toBe(point === 'movement' ? 0 : 1);
      expect(await inventoryJournal(db).countDocuments({ movement_id: `mv_inv_${point}` })).toBe(0);

      // The sweep's repair (the stock module's maintenance hook), twice: the second finds nothing.
      expect(await finishPendingEverywhere(db, new Date())).toBeGreaterThanOrEqual(1);
      await finishPendingEverywhere(db, new Date());
      // The same delivery again (its source document names the same movement): replayed, nothing moves.
      const again = await writeMovement(db, undefined, b, { type: 'delivery', date: '2026-11-20', qty: -2 * unit, source: { kind: 'invoice', id: `inv_${point}`, line: 1 }, reason: null, id: `mv_inv_${point}` }, { now: new Date(), dryRun: false, skipOpenCheck: true });
      expect(again.replayed).toBe(true);

      const after = (await stockBalances(db).findOne({ _id: b._id }).lean<BalanceDoc>())!;
      expect([after.qty, after.value, after.pending]).toEqual([8 * unit, 9_200, []]);
      const moves = await stockMovements(db).find({ balance: b._id }).lean();
      expect(moves.map((m) => [m.type, m.qty, m.value])).toEqual([['receipt', 10 * unit, 11_500], ['delivery', -2 * unit, -2_300]]);
      // Its entry: in the feed once, with the next place in the order (dense: the head moved by one).
      const feed = await inventoryJournal(db).find({ movement_id: `mv_inv_${point}` }).lean();
      expect(feed.map((f) => [f._id, f.seq, f.lines.map((l) => [l.account, l.debit, l.credit])])).toEqual([
        [`je_mv_inv_${point}`, feedBefore + 1, [['6135', 2_300, 0], ['1435', 0, 2_300]]],
      ]);
      expect((await inventoryFeed.heads(db).findOne({ _id: workspace }))?.head).toBe(feedBefore + 1);
      // The day's snapshot: 8 units, 9,200, as of version 2.
      expect(await stockDays(db).findOne({ _id: `${b._id}|2026-11-20` }).lean()).toMatchObject({ qty: 8 * unit, value: 9_200, version: 2 });
    });
  }
});
