import { CuadraError, workspaceToday, type MetricReader } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { warehouses } from '../warehouses/model.ts';
import { stockBalances, stockDays, stockMovements, type BalanceDoc, type PendingOp } from './model.ts';

type Held = Pick<BalanceDoc, '_id' | 'item_id' | 'item_name' | 'warehouse_id' | 'warehouse_code' | 'value' | 'last_date' | 'months' | 'currency' | 'pending' | 'day_snapshots'>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function addMonths(month: string, n: number): string {
  const d = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1 + n, 1));
  return d.toISOString().slice(0, 7);
}

/**
 * The carrying amount of a balance at the end of `date`: its value now when nothing moved after
 * it; at a month's end, the sum of its monthly net changes through that month; inside a month, the
 * end-of-day snapshot of its latest day with a movement in that month up to the date (`stock_days`,
 * or one its balance has committed and not yet written), else the months before. One snapshot
 * read per balance, whatever the number of movements. A balance from before the snapshots were
 * kept reads that month's movements instead.
 */
async function valueAt(db: Connection, b: Held, date: string): Promise<number> {
  if (!b.last_date || b.last_date <= date) return b.value;
  const month = date.slice(0, 7);
  const monthEnd = date === new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).toISOString().slice(0, 10);
  let value = 0;
  // At a month's end the month map alone answers.
  for (const [m, d] of Object.entries(b.months ?? {})) if (m < month || (monthEnd && m === month)) value += d.value;
  const inMonth = b.months?.[month];
  if (!inMonth || monthEnd) return value;
  if (b.day_snapshots) {
    const from = `${month}-01`;
    const [stored] = await stockDays(db).find({ balance: b._id, date: { $gte: from, $lte: date } }, { date: 1, value: 1, version: 1 }).sort({ date: -1 }).limit(1).lean();
    let best = stored ? { date: stored.date, value: stored.value, version: stored.version } : null;
    for (const p of b.pending ?? []) {
      if (p.op !== 'day' || p.date < from || p.date > date) continue;
      const op = p as Extract<PendingOp, { op: 'day' }>;
      if (!best || op.date > best.date || (op.date === best.date && op.version > best.version)) best = { date: op.date, value: op.value, version: op.version };
    }
    return best ? best.value : value;
  }
  const moved = await stockMovements(db).find({ balance: b._id, date: { $gte: `${month}-01`, $lte: date } }, { value: 1 }).lean();
  return value + moved.reduce((s, m) => s + m.value, 0);
}

/**
 * `metrics.query` inventory_value (unit money): the carrying amount of the stock (cost by each
 * item's formula, less write-downs to NRV) at `as_of` (default today; with from/to, `to`), with
 * rows by warehouse and by item; `compare` gives the value a period or a year before; the series
 * is the value at the end of each bucket of the window. Read from the running balances kept at
 * write time, never by scanning movements.
 */
export const inventoryValueMetric: MetricReader = async (q, ctx) => {
  const today = workspaceToday(ctx.principal, ctx.now);
  for (const f of ['as_of', 'from', 'to'] as const) if (q[f] !== undefined && !DATE.test(q[f]!)) throw new CuadraError('invalid_input', `${f} is a date YYYY-MM-DD.`, { field: `/${f}` });
  const asOf = q.as_of ?? q.to ?? today;
  const held = await stockBalances(ctx.db).find({ workspace: ctx.workspace }, { item_id: 1, item_name: 1, warehouse_id: 1, warehouse_code: 1, value: 1, last_date: 1, months: 1, currency: 1, pending: 1, day_snapshots: 1 }).lean<Held[]>();
  const total = async (date: string) => (await Promise.all(held.map((b) => valueAt(ctx.db, b, date)))).reduce((s, v) => s + v, 0);
  const at = await Promise.all(held.map(async (b) => ({ b, value: await valueAt(ctx.db, b, asOf) })));
  const value = at.reduce((s, r) => s + r.value, 0);
  const byWarehouse = new Map<string, { warehouse_id: string; warehouse: string; value: number }>();
  const byItem = new Map<string, { item_id: string; item: string; value: number }>();
  for (const { b, value: v } of at) {
    const w = byWarehouse.get(b.warehouse_id) ?? { warehouse_id: b.warehouse_id, warehouse: b.warehouse_code, value: 0 };
    w.value += v;
    byWarehouse.set(b.warehouse_id, w);
    const i = byItem.get(b.item_id) ?? { item_id: b.item_id, item: b.item_name, value: 0 };
    i.value += v;
    byItem.set(b.item_id, i);
  }
  // Warehouses with nothing in them yet show as 0.
  for (const w of await warehouses(ctx.db).find({ workspace: ctx.workspace }, { code: 1 }).limit(200).lean()) {
    if (!byWarehouse.has(w._id)) byWarehouse.set(w._id, { warehouse_id: w._id, warehouse: w.code, value: 0 });
  }
  let previous: number | undefined;
  if (q.compare) {
    const back = q.compare === 'previous_year'
      ? `${Number(asOf.slice(0, 4)) - 1}${asOf.slice(4)}`.replace(/-02-29$/, '-02-28')
      : new Date(Date.parse(`${asOf}T00:00:00Z`) - (q.from && q.to ? Date.parse(`${q.to}T00:00:00Z`) - Date.parse(`${q.from}T00:00:00Z`) + 86_400_000 : (q.days ?? 90) * 86_400_000)).toISOString().slice(0, 10);
    previous = await total(back);
  }
  // Month ends of the window (at most 13): the value is a position, so one point per month.
  const from = q.from ?? new Date(Date.parse(`${asOf}T00:00:00Z`) - ((q.days ?? 90) - 1) * 86_400_000).toISOString().slice(0, 10);
  const series: { period: string; period_end: string; value: number }[] = [];
  for (let m = from.slice(0, 7); m <= asOf.slice(0, 7) && series.length < 13; m = addMonths(m, 1)) {
    const lastDay = new Date(Date.UTC(Number(m.slice(0, 4)), Number(m.slice(5, 7)), 0)).toISOString().slice(0, 10);
    const end = lastDay < asOf ? lastDay : asOf;
    series.push({ period: `${m}-01` < from ? from : `${m}-01`, period_end: end, value: end === asOf ? value : await total(end) });
  }
  const summary: Record<string, number> = { value };
  if (previous !== undefined) {
    summary.previous = previous;
    if (previous !== 0) summary.change_bps = Math.round(((value - previous) * 10_000) / Math.abs(previous));
  }
  if (q.target !== undefined) summary.target = q.target;
  return {
    metric: q.metric, unit: 'money' as const, currency: held[0]?.currency ?? 'COP', series, summary,
    rows: [...[...byWarehouse.values()].map((w) => ({ dimension: 'warehouse', ...w })), ...[...byItem.values()].map((i) => ({ dimension: 'item', ...i }))],
  };
};
