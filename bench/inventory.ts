// `node bench/inventory.ts`: stock_levels and inventory_value with 100,000 stock movements against
// the same reads with 1,000 (issue 38: goal ≤ 1.5×). Both reads come from the running balances the
// ledger keeps at write time (one document per item and warehouse), never from the movements, so
// the number of movements should not show. Two databases on one mongo-java-server (memory
// backend), the same 40 balances (20 items × 2 warehouses) in each; the movements are written in
// bulk in their stored shape (writing 100,000 through the tools would take the bench's minutes, and
// what is measured is the reads). BENCH_RUNS (default 40) timed reads of each, after 5 warm-up ones;
// medians compared side by side. inventory_value is asked as of today, as of a month-end in the
// past (the month map alone) and mid-month (the day's end-of-day snapshot, `stock_days`, as the
// ledger writes it). BENCH_DAY_SNAPSHOTS=0 seeds balances without snapshots: the read then takes
// that month's movements (what it did before the snapshots; the baseline of issue 38's third session).
// The month map marks the days each balance moved (`months[m].days`, as the ledger keeps it), so the
// mid-month read asks for one snapshot per balance; BENCH_DAY_MARKS=0 seeds months without the marks:
// the read then asks for every day of the month up to the date (issue 38's fourth session).
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mongoose, { type Connection } from 'mongoose';
import { buildMongoServerJar, ensureJavaAndMaven, repoRoot, startMongo, stopAll } from '../scripts/infra.ts';
import { stockLevelsSource } from '../subgraphs/inventory/src/modules/stock/sources.ts';
import { inventoryValueMetric } from '../subgraphs/inventory/src/modules/stock/metrics.ts';
import { dayBit, stockBalances, stockDays, stockMovements, type BalanceDoc, type DayDoc, type MovementDoc } from '../subgraphs/inventory/src/modules/stock/model.ts';
import { EMPTY_STATE } from '../subgraphs/inventory/src/modules/stock/valuation.ts';
import { warehouses } from '../subgraphs/inventory/src/modules/warehouses/model.ts';

const runs = Number(process.env.BENCH_RUNS ?? 40);
const WS = 'ws_bench';
const ITEMS = 20;
const WAREHOUSES = 2;
const SNAPSHOTS = process.env.BENCH_DAY_SNAPSHOTS !== '0';
const MARKS = process.env.BENCH_DAY_MARKS !== '0';

/** Seeds `movements` movements spread over 40 balances and 2026's days, and the balances they sum to. */
async function seed(db: Connection, movements: number): Promise<void> {
  await Promise.all([stockBalances(db).init(), stockMovements(db).init(), stockDays(db).init(), warehouses(db).init()]);
  for (let w = 0; w < WAREHOUSES; w++) await warehouses(db).create({ _id: `wh_${w}`, workspace: WS, code: `W${w}`, code_key: `${WS}|w${w}`, name: `Bodega ${w}`, name_lc: `bodega ${w}`, address: null, created_at: new Date() });
  const perBalance = Math.floor(movements / (ITEMS * WAREHOUSES));
  let pos = 0;
  for (let i = 0; i < ITEMS; i++) {
    for (let w = 0; w < WAREHOUSES; w++) {
      const balance = `${WS}|itm_${i}|wh_${w}`;
      const months: BalanceDoc['months'] = {};
      let qty = 0; let value = 0;
      const batch: MovementDoc[] = [];
      // The state after each day's last movement (the ledger's `day` writes).
      const days = new Map<string, DayDoc>();
      for (let k = 0; k < perBalance; k++) {
        // Receipts of 10 at 1,000 and deliveries of 5 at 1,000, alternately, over 300 days.
        const inbound = k % 2 === 0;
        const dq = (inbound ? 10 : -5) * 1_000_000;
        const dv = (inbound ? 10 : -5) * 1_000;
        qty += dq; value += dv;
        const date = new Date(Date.UTC(2026, 0, 1 + Math.floor((k * 300) / perBalance))).toISOString().slice(0, 10);
        const m = months[date.slice(0, 7)] ?? { qty: 0, value: 0, ...(MARKS ? { days: 0 } : {}) };
        months[date.slice(0, 7)] = { qty: m.qty + dq, value: m.value + dv, ...(m.days !== undefined ? { days: m.days | dayBit(date) } : {}) };
        pos += 1;
        days.set(date, { _id: `${balance}|${date}`, workspace: WS, balance, date, qty, value, version: k + 1 });
        batch.push({
          _id: `mv_${balance}_${k}`, workspace: WS, balance, item_id: `itm_${i}`, warehouse_id: `wh_${w}`, type: inbound ? 'receipt' : 'delivery', date, seq: k + 1,
          qty: dq, value: dv, released: 0, currency: 'COP', after: { ...EMPTY_STATE, qty, value }, source: null, reason: null, counterpart: null, journal: null, restated: null,
          created_at: new Date(), ...{ pos, pos_key: `stock_movements|${WS}|${pos}` },
        } as MovementDoc);
        if (batch.length === 1_000) await stockMovements(db).collection.insertMany(batch.splice(0) as never[]);
      }
      if (batch.length) await stockMovements(db).collection.insertMany(batch as never[]);
      if (SNAPSHOTS && days.size) await stockDays(db).collection.insertMany([...days.values()] as never[]);
      await stockBalances(db).collection.insertOne({
        _id: balance, workspace: WS, item_id: `itm_${i}`, item_name: `Producto ${i}`, item_sku: null, unit: '94', warehouse_id: `wh_${w}`, warehouse_code: `W${w}`,
        method: 'average', allow_negative: false, reorder_point: 0, currency: 'COP', qty, value, layers: [], allowance: 0, last_in: null, reserved: 0, reservations: {},
        seq: perBalance, version: perBalance, last_date: '2026-10-27', months, pending: [], recent: [], status: 'ok', created_at: new Date(), pos: i * WAREHOUSES + w + 1,
        pos_key: `stock_balances|${WS}|${i * WAREHOUSES + w + 1}`, day_snapshots: SNAPSHOTS,
      } as never);
    }
  }
}

/** The median of `runs` timed calls of `read`, after 5 warm-up calls (ms). */
async function median(read: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5; i++) await read();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await read();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

await ensureJavaAndMaven();
await buildMongoServerJar();
const mongo = await startMongo({ backend: 'memory', logFile: path.join(repoRoot, 'test-output', 'bench', 'inventory', 'mongo.log') });
try {
  const small = await mongoose.createConnection(mongo.url, { dbName: 'bench_inventory_1k' }).asPromise();
  const large = await mongoose.createConnection(mongo.url, { dbName: 'bench_inventory_100k' }).asPromise();
  let t = performance.now();
  await seed(small, 1_000);
  await seed(large, 100_000);
  console.log(`seeded 1,000 and 100,000 movements in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const ctx = (db: Connection) => ({ db, workspace: WS, principal: { country: 'CO' } as never, now: new Date('2026-11-27T15:00:00Z'), governance: undefined as never });
  const reads = {
    'stock_levels (a page of 40)': (db: Connection) => () => stockLevelsSource({ source: 'stock_levels', limit: 100 }, ctx(db)),
    'inventory_value (today)': (db: Connection) => () => inventoryValueMetric({ metric: 'inventory_value' }, ctx(db)),
    'inventory_value (as of 2026-06-30)': (db: Connection) => () => inventoryValueMetric({ metric: 'inventory_value', as_of: '2026-06-30', days: 30 }, ctx(db)),
    // Mid-month: one end-of-day snapshot per balance (without snapshots: that month's movements, 1/10 of them).
    'inventory_value (as of 2026-06-15)': (db: Connection) => () => inventoryValueMetric({ metric: 'inventory_value', as_of: '2026-06-15', days: 1 }, ctx(db)),
  };
  console.log(`read                                  1k median   100k median   ratio`);
  for (const [name, read] of Object.entries(reads)) {
    t = performance.now();
    const a = await median(read(small));
    const b = await median(read(large));
    console.log(`${name.padEnd(36)} ${a.toFixed(2).padStart(8)} ms ${b.toFixed(2).padStart(10)} ms ${(b / a).toFixed(2).padStart(7)}×`);
  }
  await Promise.all([small.close(), large.close()]);
} finally {
  await mongo.stop();
  await stopAll();
}
