import { CuadraError, workspaceToday, type MetricReader } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { warehouses } from '../warehouses/model.ts';
import { latestMarkedDay, stockBalances, stockDays, stockMovements, type BalanceDoc, type PendingOp } from './model.ts';

type Held = Pick<BalanceDoc, '_id' | 'item_id' | 'item_name' | 'warehouse_id' | 'warehouse_code' | 'value' | 'last_date' | 'months' | 'currency' | 'pending' | 'day_snapshots'>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function addMonths(month: string, n: number): string {
  const d = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1 + n, 1));
  return d.toISOString().slice(0, 7);
}

/**
 * The carrying amount of each balance at the end of `date`: its value now when nothing moved after
 * it; at a month's end, the sum of its monthly net changes through that month; inside a month, the
 * end-of-day snapshot of its latest day with a movement in that month up to the date (`stock_days`,
 * or one its balance has committed and not yet written), else the months before. Which day that is
 * the month map says (`days`, the days it moved, marked by the commits that wrote their snapshots),
 * so the snapshots of every balance are read in one query by id, one per balance, whatever the
 * number of movements or days; a month first moved before the marks were kept reads each of its
 * days up to the date. A balance from before the snapshots were kept reads that month's movements
 * instead.
 */
async function valuesAt(db: Connection, held: Held[], date: string): Promise<number[]> {
  const month = date.slice(0, 7);
  const from = `${month}-01`;
  const monthEnd = date === new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).toISOString().slice(0, 10);
  const days = Array.from({ length: Number(date.slice(8, 10)) }, (_, i) => `${month}-${String(i + 1).padStart(2, '0')}`);
  // Balances that need a day of this month: moved after the date, and in this month.
  const inside = (b: Held) => !!b.last_date && b.last_date > date && !monthEnd && !!b.months?.[month];
  // One snapshot per balance: the latest day its month marks on or before the date (none marked:
  // the months before answer); a month first moved before the marks were kept: each of its days.
  const ids = held.filter((b) => inside(b) && b.day_snapshots).flatMap((b) => {
    const marked = b.months[month]!.days;
    if (marked === undefined) return days.map((d) => `${b._id}|${d}`);
    const latest = latestMarkedDay(marked, date);
    return latest ? [`${b._id}|${latest}`] : [];
  });
  const best = new Map<string, { date: string; value: number; version: number }>();
  const take = (balance: string, d: { date: string; value: number; version: number }) => {
    const cur = best.get(balance);
    if (!cur || d.date > cur.date || (d.date === cur.date && d.version > cur.version)) best.set(balance, d);
  };
  if (ids.length) for (const d of await stockDays(db).find({ _id: { $in: ids } }, { balance: 1, date: 1, value: 1, version: 1 }).lean()) take(d.balance, d);
  return Promise.all(held.map(async (b) => {
    if (!b.last_date || b.last_date <= date) return b.value;
    let value = 0;
    // At a month's end the month map alone answers.
    for (const [m, d] of Object.entries(b.months ?? {})) if (m < month || (monthEnd && m === month)) value += d.value;
    if (!inside(b)) return value;
    if (b.day_snapshots) {
      for (const p of b.pending ?? []) if (p.op === 'day' && p.date >= from && p.date <= date) take(b._id, p as Extract<PendingOp, { op: 'day' }>);
      return best.get(b._id)?.value ?? value;
    }
    const moved = await stockMovements(db).find({ balance: b._id, date: { $gte: from, $lte: date } }, { value: 1 }).lean();
    return value + moved.reduce((s, m) => s + m.value, 0);
  }));
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
  const total = async (date: string) => (await valuesAt(ctx.db, held, date)).reduce((s, v) => s + v, 0);
  const at = (await valuesAt(ctx.db, held, asOf)).map((value, i) => ({ b: held[i]!, value }));
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
