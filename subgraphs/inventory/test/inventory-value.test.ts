import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { newBalance, writeMovement, type MovementRequest } from '../src/modules/stock/ledger.ts';
import { inventoryValueMetric } from '../src/modules/stock/metrics.ts';
import { stockBalances, type BalanceDoc } from '../src/modules/stock/model.ts';

/*
 * inventory_value inside a month reads one end-of-day snapshot per balance — the latest day the
 * balance moved on or before the date, which the month map marks — not every day of the month up to
 * the date: what keeps the read bounded by the balances at 100,000 movements (bench/inventory.ts).
 * The queries are the ones the driver sends to the real MongoDB-protocol server (npm test's),
 * watched through mongoose's debug hook on this connection.
 */

let db: Connection;
const workspace = `ws_value_${process.pid}`;
const unit = 1_000_000;

beforeAll(async () => {
  const url = process.env.MONGO_URL;
  if (!url) throw new Error('MONGO_URL is not set: run the tests with `npm test`.');
  db = await connectDatabase(url, `inventory_value_${process.pid}_${Date.now()}`);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => undefined);
  await db?.close();
});

/** The metric's value as of `asOf`, and the snapshot ids it asked for. */
async function valueAt(asOf: string): Promise<{ value: number; asked: string[] }> {
  const asked: string[] = [];
  db.set('debug', (collection: string, method: string, query: { _id?: { $in?: string[] } }) => {
    if (collection === 'stock_days' && method === 'find') asked.push(...(query?._id?.$in ?? ['(not by id)']));
  });
  try {
    const out = (await inventoryValueMetric({ metric: 'inventory_value', as_of: asOf, days: 1 }, { db, workspace, principal: { country: 'CO' } as never, now: new Date('2026-11-27T15:00:00Z'), governance: undefined as never })) as { summary: { value: number } };
    return { value: out.summary.value, asked };
  } finally {
    db.set('debug', false);
  }
}

describe('inventory_value mid-month', () => {
  it('reads one snapshot per balance, the latest day marked on or before the date, backdated days included', async () => {
    const b = newBalance({ workspace, item_id: 'itm_cafe', item_name: 'Café 500 g', item_sku: null, unit: 'und', warehouse_id: 'bog', warehouse_code: 'BOG', method: 'average', allow_negative: false, reorder_point: 0, currency: 'COP', created_at: new Date() });
    await stockBalances(db).create(b);
    const move = (req: Omit<MovementRequest, 'source' | 'reason'>) => writeMovement(db, undefined, b, { ...req, source: null, reason: null }, { now: new Date(), dryRun: false, skipOpenCheck: true });
    // Weighted average, by hand:
    //   06-02 receipt 10 at 10,000                     → 10 units, 10,000
    //   06-05 receipt 10 at 12,000                     → 20 units, 22,000
    //   06-10 delivery 4 at 22,000 / 20 = 1,100 → 4,400 → 16 units, 17,600
    //   07-01 receipt 1 at 1,000                       → 17 units, 18,600 (so June is in the past)
    // then backdated: 06-03 receipt 2 at 3,300         → 06-03: 12 units, 13,300
    //   06-05: 22 units, 25,300; the 06-10 delivery restated at 25,300 / 22 = 1,150 → 4,600: 18 units, 20,700.
    await move({ type: 'receipt', date: '2026-06-02', qty: 10 * unit, value: 10_000 });
    await move({ type: 'receipt', date: '2026-06-05', qty: 10 * unit, value: 12_000 });
    await move({ type: 'delivery', date: '2026-06-10', qty: -4 * unit });
    await move({ type: 'receipt', date: '2026-07-01', qty: 1 * unit, value: 1_000 });
    await move({ type: 'receipt', date: '2026-06-03', qty: 2 * unit, value: 3_300 });

    const after = (await stockBalances(db).findOne({ _id: b._id }).lean<BalanceDoc>())!;
    // June marks days 2, 3, 5 and 10 (bits 1, 2, 4 and 9); July day 1 (bit 0).
    expect([after.months['2026-06']?.days, after.months['2026-07']?.days]).toEqual([2 ** 1 + 2 ** 2 + 2 ** 4 + 2 ** 9, 1]);

    for (const [asOf, value, day] of [
      ['2026-06-01', 0, null], ['2026-06-02', 10_000, '2026-06-02'], ['2026-06-04', 13_300, '2026-06-03'],
      ['2026-06-07', 25_300, '2026-06-05'], ['2026-06-15', 20_700, '2026-06-10'],
    ] as const) {
      const got = await valueAt(asOf);
      expect([asOf, got.value, got.asked]).toEqual([asOf, value, day ? [`${b._id}|${day}`] : []]);
    }

    // A month first moved before the marks were kept (no `days`) reads each of its days up to the date, and agrees.
    await stockBalances(db).updateOne({ _id: b._id }, { $unset: { 'months.2026-06.days': 1 } });
    const unmarked = await valueAt('2026-06-15');
    expect([unmarked.value, unmarked.asked.length]).toEqual([20_700, 15]);
  });
});
