import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { finishPending, newBalance, revalueTransferIn, writeMovement } from '../src/modules/stock/ledger.ts';
import { stockBalances, stockMovements, type BalanceDoc } from '../src/modules/stock/model.ts';

/*
 * The other side of a transfer is finished by whoever comes first — the writer, the next change
 * of the sending balance, the sweep — and often by several at once. However they interleave, the
 * receiving warehouse takes the goods in exactly once. Real MongoDB-protocol server (npm test's).
 */

let db: Connection;
const workspace = `ws_finishers_${process.pid}`;
const unit = 1_000_000;

beforeAll(async () => {
  const url = process.env.MONGO_URL;
  if (!url) throw new Error('MONGO_URL is not set: run the tests with `npm test`.');
  db = await connectDatabase(url, `inventory_finishers_${process.pid}_${Date.now()}`);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

function balanceOf(item: string, warehouse: string): BalanceDoc {
  return newBalance({ workspace, item_id: item, item_name: 'Café 500 g', item_sku: null, unit: 'und', warehouse_id: warehouse, warehouse_code: warehouse.toUpperCase(), method: 'average', allow_negative: false, reorder_point: 0, currency: 'COP', created_at: new Date() });
}

describe('stock ledger: the other side of a transfer', () => {
  it('is applied once at the receiving warehouse when several finishers run it at the same time', async () => {
    const now = new Date();
    const rounds = 8;
    for (let round = 0; round < rounds; round++) {
      const item = `itm_${round}`;
      const from = balanceOf(item, 'bog');
      const to = balanceOf(item, 'med');
      await stockBalances(db).create([from, to]);
      // BOG receives 10 units worth 100,000 (finished by its writer).
      await writeMovement(db, undefined, from, { type: 'receipt', date: '2026-01-10', qty: 10 * unit, value: 100_000, source: null, reason: null }, { now, dryRun: false, skipOpenCheck: true });
      // The transfer of 3 units (3 × 10,000 = 30,000) committed on BOG, its writer gone before finishing:
      // BOG's pending list holds the transfer in at MED.
      const inId = `mv_in_${round}`;
      await stockBalances(db).updateOne({ _id: from._id }, { $push: { pending: { key: `transfer_in:${inId}`, op: 'transfer_in', to: { item_id: item, warehouse_id: 'med' }, id: inId, counterpart: `mv_out_${round}`, date: '2026-04-02', qty: 3 * unit, value: 30_000, released: 0, reason: null } } });
      // Four finishers (the writer, the next change, the sweep, …), each a little later than the one before.
      await Promise.all([0, 1, 2, 3].map(async (i) => {
        for (let k = 0; k < i * (round % 4); k++) await new Promise((r) => setImmediate(r));
        await finishPending(db, undefined, from._id, now);
      }));
      await finishPending(db, undefined, to._id, now);
      const med = await stockBalances(db).findOne({ _id: to._id }).lean<BalanceDoc>();
      // MED: 0 + 3 units, 30,000 — not 6 units, 60,000.
      expect([round, med!.qty, med!.value]).toEqual([round, 3 * unit, 30_000]);
      expect(await stockMovements(db).countDocuments({ balance: to._id })).toBe(1);
      expect(med!.pending).toEqual([]);
    }
  });

  it('revalues a transfer in once when several finishers run the same revaluation at the same time', async () => {
    const now = new Date();
    for (let round = 0; round < 20; round++) {
      const item = `itm_rv_${round}`;
      const to = balanceOf(item, 'med');
      await stockBalances(db).create(to);
      // MED takes in 3 units worth 30,000 (04-02), then delivers 1: 30,000 / 3 = 10,000 → 2 units, 20,000.
      const inId = `mv_rv_in_${round}`;
      await writeMovement(db, undefined, to, { type: 'transfer_in', date: '2026-04-02', qty: 3 * unit, value: 30_000, source: null, reason: null, id: inId }, { now, dryRun: false, skipOpenCheck: true });
      await writeMovement(db, undefined, to, { type: 'delivery', date: '2026-05-15', qty: -1 * unit, source: null, reason: null }, { now, dryRun: false, skipOpenCheck: true });
      // A backdated receipt at BOG made the transfer cost 36,000: the transfer in is revalued,
      // the delivery restated at 36,000 / 3 = 12,000 → MED 2 units, 24,000.
      const c = { key: `revalue_in:${inId}:mv_late`, op: 'revalue_in' as const, id: inId, value: 36_000, released: 0, by: `mv_late_${round}` };
      await Promise.all([0, 1, 2, 3].map(async (i) => {
        for (let k = 0; k < i * (round % 5); k++) await new Promise((r) => setImmediate(r));
        await revalueTransferIn(db, undefined, c, { now, dryRun: false });
      }));
      await finishPending(db, undefined, to._id, now);
      const med = await stockBalances(db).findOne({ _id: to._id }).lean<BalanceDoc>();
      // By month: April +30,000 → +36,000; May −10,000 → −12,000: Σ 24,000, the carrying amount (counted once).
      const byMonth = Object.values(med!.months).reduce((s, m) => s + m.value, 0);
      expect([round, med!.value, byMonth]).toEqual([round, 24_000, 24_000]);
      expect(await stockMovements(db).countDocuments({ balance: to._id, type: 'revaluation' })).toBe(2); // one per month touched
    }
  });
});
