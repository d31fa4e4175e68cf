import { createHash } from 'node:crypto';
import { CuadraError, createPositioned, newId, type PeerGraph } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { closedMonthsFrom } from '../../lib/finance.ts';
import { differenceLines, movementLines, type JournalLine } from './journal.ts';
import { publishMovementEntry } from './journal_feed.ts';
import { balanceId, dayBit, stockBalances, stockDays, stockMovements, type BalanceDoc, type MovementDoc, type MovementEntry, type MovementType, type PendingOp, type SourceRef } from './model.ts';
import { EMPTY_STATE, fromMicro, share, takeBack, takeIn, takeOut, writeDown, type Applied, type StockState } from './valuation.ts';

/*
 * The stock ledger: how a movement is written exactly once, atomically against every other change
 * of the same item in the same warehouse, and how a backdated one revalues what follows it.
 *
 * One document per atomic change (INFRA.md: mongo-java-server has no multi-document
 * transactions). The balance document of the item and warehouse is the commit point: a movement
 * happens when one conditional update (`{_id, version}`) moves the balance to its new state and
 * puts, in the same write, what the ledger must still write (`pending`: the movement document,
 * the restated valuations of a revaluation, the other side of a transfer). Those writes are
 * idempotent (by id) and are finished right after by the writer, or by the next change of the
 * same balance, or by the subgraph's background sweep (`finishPendingEverywhere`) — so a crash
 * between the two leaves the balance right and its movement written later, never twice, never
 * lost. Ten deliveries of the last unit at once: each reads the balance, one conditional update
 * wins, the nine others read it again, find nothing on hand and are refused (409 `conflict`).
 */

/** Months changed by a movement and the restatements it causes: refused when finance has closed one. */
async function assertOpen(graph: PeerGraph | undefined, dates: string[]): Promise<void> {
  const earliest = [...dates].sort()[0];
  if (!earliest) return;
  const closed = new Set(await closedMonthsFrom(graph, earliest));
  const hit = [...dates].sort().find((d) => closed.has(d.slice(0, 7)));
  if (hit) {
    throw new CuadraError('conflict', `The accounting period ${hit.slice(0, 7)} is closed: the stock ledger cannot change on ${hit}${dates[0] === hit ? '' : ' (a movement this one revalues)'}. Reopen the month in finance (periods.reopen) or date the movement in an open month.`);
  }
}

/** What a movement asks of a balance. */
export interface MovementRequest {
  type: Exclude<MovementType, 'revaluation'>;
  date: string;
  /** Signed millionths: in +, out − (a write-down: 0). */
  qty: number;
  /**
   * For goods coming in: their value (a return: none, it comes back at its delivery's cost). For a
   * write-down: minus the amount written down. For a purchase return: the vendor's credit (its price).
   */
  value?: number;
  /** For a transfer in: the allowance the goods bring with them. */
  released?: number;
  source: SourceRef | null;
  reason: string | null;
  /** The sales order (or the posted document) whose reservation a delivery or a purchase return fulfils. */
  salesOrder?: string | null;
  counterpart?: string | null;
  /** For a transfer out: where the goods go. */
  transferTo?: { item_id: string; warehouse_id: string; in_id: string } | null;
  /** A set id (the same source document always names the same movement); else a new one. */
  id?: string;
}

/** A movement's id from the document it comes from: a retry of the same document finds the same movement. */
export function movementIdFor(workspace: string, type: string, itemId: string, warehouseId: string, source: SourceRef): string {
  return `mv_${createHash('sha256').update([workspace, type, itemId, warehouseId, source.kind, source.id, source.line ?? 0].join('|')).digest('hex').slice(0, 24)}`;
}

/** A movement restated by a backdated one. */
export interface Restated { id: string; warehouse_id: string; date: string; type: MovementType; old_value: number; new_value: number }

/** What writing (or trying, with dry_run) a movement answers. */
export interface MovementOutcome {
  movement: MovementDoc;
  /** The movements after it that it revalued (a backdated movement), with their values before and after. */
  affected: Restated[];
  /** Σ of the change in cost of goods sold of the affected movements (minor units; + costs more). */
  cost_of_sales_change: number;
  /** The revaluation movements written (one per month touched), carrying the journal entries of the difference. */
  revaluations: string[];
  /** True when the same source document had already been written: nothing new was done. */
  replayed: boolean;
  dry_run: boolean;
}

/** `value`: goods coming in, their value; a write-down, minus its amount; a purchase return, its price. */
function apply(state: StockState, method: BalanceDoc['method'], type: MovementType, qty: number, value: number, released: number): Applied {
  switch (type) {
    case 'purchase_return': return takeBack(state, method, -qty, value);
    case 'receipt': case 'transfer_in': case 'return': {
      const a = takeIn(state, method, qty, value);
      return { ...a, state: { ...a.state, allowance: a.state.allowance + released } };
    }
    case 'delivery': case 'transfer_out': return takeOut(state, method, -qty);
    case 'adjustment': case 'count': return qty >= 0 ? takeIn(state, method, qty, value) : takeOut(state, method, -qty);
    case 'write_down': return writeDown(state, method, -value);
    default: return { state, value: 0, released: 0 };
  }
}

function stateOf(b: Pick<BalanceDoc, keyof StockState>): StockState {
  return { qty: b.qty, value: b.value, layers: b.layers ?? [], allowance: b.allowance ?? 0, last_in: b.last_in ?? null };
}

function entryFor(id: string, type: MovementType, date: string, value: number, released: number, price: number | undefined, memo: string): MovementEntry | null {
  const lines = movementLines(type, value, released, price);
  return lines.length ? { id: `je_${id}`, date, memo, lines } : null;
}

const MEMO: Record<string, string> = {
  delivery: 'Costo de la mercancía vendida', return: 'Devolución de mercancía vendida (nota crédito)', purchase_return: 'Devolución de mercancía al proveedor (nota crédito del proveedor): diferencia con su costo', adjustment: 'Ajuste de inventario', count: 'Diferencia de conteo de inventario',
  write_down: 'Deterioro de inventario al valor neto realizable (NIIF pymes 13.19)', revaluation: 'Revaluación del costo de ventas por un movimiento con fecha anterior',
};

/**
 * Writes one movement into a balance (see the top of this file), or with `dryRun` answers what it
 * would do and writes nothing. Refusals: 409 `conflict` for stock that is not there (an item
 * that does not allow negative stock), for a date in a month finance has closed (the movement's,
 * or one it revalues).
 */
export async function writeMovement(db: Connection, graph: PeerGraph | undefined, balance: Pick<BalanceDoc, '_id' | 'workspace'> & { initial?: BalanceDoc }, req: MovementRequest, opts: { now: Date; dryRun: boolean; skipOpenCheck?: boolean }): Promise<MovementOutcome> {
  const balances = stockBalances(db);
  const movements = stockMovements(db);
  const id = req.id ?? newId('mv');
  let checkedOpen: string | null = null;
  for (let attempt = 0; attempt < 500; attempt++) {
    if (!opts.dryRun) await finishPending(db, graph, balance._id, opts.now);
    const b = (await balances.findOne({ _id: balance._id, workspace: balance.workspace }).lean<BalanceDoc>()) ?? (opts.dryRun ? balance.initial : undefined);
    if (!b) throw new CuadraError('not_found', 'No stock of this item in this warehouse.');
    // The same source document again (or a second finisher of the same transfer in): the movement
    // it made. Whether it was applied is the balance's to say — the document every application is a
    // compare-and-set on, and which lists the movement (`recent`, `pending`) in that same write —
    // not the movements collection, which receives it only later: a movement committed and not yet
    // inserted must not be applied again.
    if (req.id) {
      const committed = b.pending.find((p): p is Extract<PendingOp, { op: 'insert' }> => p.op === 'insert' && p.doc._id === id);
      if (committed || b.recent.includes(id) || (await movements.exists({ _id: id }))) {
        const done = (committed?.doc as MovementDoc | undefined) ?? (await movements.findOne({ _id: id }).lean<MovementDoc>());
        // Committed and, since this read, inserted and taken off the list: read the balance again.
        if (!done) continue;
        return { movement: done, affected: [], cost_of_sales_change: 0, revaluations: [], replayed: true, dry_run: opts.dryRun };
      }
    }
    const qty = req.qty;
    const outgoing = qty < 0;
    // Only what is on hand and not reserved for another order may leave.
    const own = req.salesOrder ? (b.reservations?.[req.salesOrder] ?? 0) : 0;
    if (outgoing && !b.allow_negative && -qty > b.qty - (b.reserved - own)) {
      const free = Math.max(0, b.qty - (b.reserved - own));
      throw new CuadraError('conflict', `Only ${fromMicro(free)} ${b.unit} of ${b.item_name} ${b.reserved - own > 0 ? 'are free (the rest is reserved) ' : ''}in ${b.warehouse_code}; ${fromMicro(-qty)} cannot leave. The item does not allow negative stock.`);
    }
    const backdated = b.last_date !== null && req.date < b.last_date;
    let before: StockState = stateOf(b);
    let later: MovementDoc[] = [];
    if (backdated) {
      const prior = await movements.find({ balance: b._id, date: { $lte: req.date } }).sort({ date: -1, seq: -1 }).limit(1).lean<MovementDoc[]>();
      before = prior[0]?.after ?? EMPTY_STATE;
      later = await movements.find({ balance: b._id, date: { $gt: req.date } }).sort({ date: 1, seq: 1 }).lean<MovementDoc[]>();
    }
    const seq = b.seq + 1;
    const value = req.type === 'return' && req.counterpart ? await returnedValue(db, b, req.counterpart, qty) : (req.value ?? 0);
    const applied = apply(before, b.method, req.type, qty, value, req.released ?? 0);
    const price = req.type === 'purchase_return' ? value : undefined;
    if (outgoing && backdated && applied.state.qty < 0 && !b.allow_negative) {
      throw new CuadraError('conflict', `On ${req.date} only ${fromMicro(Math.max(before.qty, 0))} ${b.unit} of ${b.item_name} were in ${b.warehouse_code}; ${fromMicro(-qty)} cannot leave that day. The item does not allow negative stock.`);
    }
    const doc: MovementDoc = {
      _id: id, workspace: b.workspace, balance: b._id, item_id: b.item_id, warehouse_id: b.warehouse_id, type: req.type, date: req.date, seq,
      qty, value: applied.value, released: applied.released, currency: b.currency, after: applied.state, source: req.source, reason: req.reason,
      counterpart: req.counterpart ?? req.transferTo?.in_id ?? null, ...(price !== undefined ? { price } : {}),
      journal: entryFor(id, req.type, req.date, applied.value, applied.released, price, MEMO[req.type] ?? ''), restated: null, created_at: opts.now,
    };
    // Replay what follows a backdated movement with it in place: each outflow at its new cost.
    const r = replay(b, applied.state, later, { tag: id, from: req.date, seq: seq + 1, now: opts.now });
    bumpMonth(r.monthDelta, req.date, qty, applied.value);
    // The new movement is its day's last (the ones after it in the ledger are on later days).
    const days = new Map([[req.date, applied.state], ...r.days]);
    const cascaded = await cascadeDryRun(db, graph, r.cascades, opts.now);
    const affected = [...r.affected, ...cascaded];
    const costOfSalesChange = costOfSales(affected);
    if (!opts.skipOpenCheck && checkedOpen !== `${req.date}|${affected.map((a) => a.date).join(',')}`) {
      await assertOpen(graph, [req.date, ...affected.map((a) => a.date)]);
      checkedOpen = `${req.date}|${affected.map((a) => a.date).join(',')}`;
    }
    const { state, restates, revaluationDocs, monthDelta } = r;
    if (opts.dryRun) return { movement: doc, affected, cost_of_sales_change: costOfSalesChange, revaluations: revaluationDocs.map((d) => d._id), replayed: false, dry_run: true };

    const pending: PendingOp[] = [{ key: `insert:${id}`, op: 'insert', doc }];
    if (req.transferTo) {
      pending.push({ key: `transfer_in:${req.transferTo.in_id}`, op: 'transfer_in', to: { item_id: req.transferTo.item_id, warehouse_id: req.transferTo.warehouse_id }, id: req.transferTo.in_id, counterpart: id, date: req.date, qty: -qty, value: -applied.value, released: applied.released, reason: req.reason });
    }
    pending.push(...restates, ...revaluationDocs.map((d) => ({ key: `insert:${d._id}`, op: 'insert' as const, doc: d })), ...r.cascades, ...dayOps(days, b.version + 1));
    const reservations = { ...(b.reservations ?? {}) };
    let reserved = b.reserved;
    if ((req.type === 'delivery' || req.type === 'purchase_return') && req.salesOrder && own > 0) {
      const take = Math.min(own, -qty);
      reserved -= take;
      if (own - take > 0) reservations[req.salesOrder] = own - take; else delete reservations[req.salesOrder];
    }
    const months = withMonths(b.months, monthDelta, days);
    const seqAfter = seq + revaluationDocs.length;
    const set = {
      ...state, reserved, reservations, months, seq: seqAfter, version: b.version + 1,
      last_date: b.last_date && b.last_date > req.date ? b.last_date : req.date,
      pending: [...b.pending, ...pending], recent: [...b.recent, id].slice(-100),
      status: levelStatus(state.qty, reserved, b.reorder_point),
    };
    const won = await balances.updateOne({ _id: b._id, version: b.version }, { $set: set });
    if (won.modifiedCount !== 1) {
      // Another change of this balance got there first: read it again (a short, growing pause after a few).
      if (attempt >= 3) await new Promise((r) => setTimeout(r, Math.random() * Math.min(40, attempt * 2)));
      continue;
    }
    await finishPending(db, graph, b._id, opts.now);
    return { movement: doc, affected, cost_of_sales_change: costOfSalesChange, revaluations: revaluationDocs.map((d) => d._id), replayed: false, dry_run: false };
  }
  throw new CuadraError('unavailable', 'The stock of this item changed too often to write the movement; nothing was done. Try again.', { beforeAnyEffect: true });
}


type MonthDelta = Map<string, { qty: number; value: number }>;

/** The end-of-day snapshots a commit of version `version` writes (`stock_days`, model.ts). */
function dayOps(days: Map<string, StockState>, version: number): PendingOp[] {
  return [...days].map(([date, st]) => ({ key: `day:${date}:${version}`, op: 'day' as const, date, qty: st.qty, value: st.value, version }));
}

function bumpMonth(deltas: MonthDelta, date: string, dq: number, dv: number): void {
  const m = deltas.get(date.slice(0, 7)) ?? { qty: 0, value: 0 };
  m.qty += dq;
  m.value += dv;
  deltas.set(date.slice(0, 7), m);
}

/**
 * The balance's month map after a commit: each month's net change, and the days it moved marked
 * (`days`, the same commit as their end-of-day snapshots). A month first moved before the marks were
 * kept stays unmarked: its marks would miss its earlier days.
 */
function withMonths(months: BalanceDoc['months'] | undefined, deltas: MonthDelta, days: Map<string, StockState>): BalanceDoc['months'] {
  const out = { ...(months ?? {}) };
  for (const [month, d] of deltas) {
    const cur = out[month] ?? { qty: 0, value: 0, days: 0 };
    out[month] = { ...cur, qty: cur.qty + d.qty, value: cur.value + d.value };
  }
  for (const date of days.keys()) {
    const cur = out[date.slice(0, 7)];
    if (cur?.days !== undefined) out[date.slice(0, 7)] = { ...cur, days: cur.days | dayBit(date) };
  }
  return out;
}

/** Cost of sales is more (+) or less (−) than it was booked at: goods sold, returned by customers or sent back to vendors (6135 moves with their value, journal.ts). */
function costOfSales(affected: readonly Restated[]): number {
  return affected.filter((a) => a.type === 'delivery' || a.type === 'return' || a.type === 'purchase_return').reduce((s, a) => s + (a.old_value - a.new_value), 0);
}

/**
 * What goods a customer returns come back at: their share of the cost their delivery left with, as
 * the balance has it now — a restatement of the delivery it committed and has not yet written counts.
 */
async function returnedValue(db: Connection, b: BalanceDoc, deliveryId: string, qty: number): Promise<number> {
  const committed = b.pending.findLast((p): p is Extract<PendingOp, { op: 'restate' }> => p.op === 'restate' && p.id === deliveryId);
  const delivery = await stockMovements(db).findOne({ _id: deliveryId }, { qty: 1, value: 1 }).lean<Pick<MovementDoc, 'qty' | 'value'>>();
  if (!delivery) throw new CuadraError('conflict', `The delivery ${deliveryId} this return brings back is not in the stock ledger.`);
  return share(-(committed?.value ?? delivery.value), qty, -delivery.qty);
}

/** What replaying part of a balance's ledger from a state changes. */
interface Replayed {
  state: StockState;
  affected: Restated[];
  restates: PendingOp[];
  revaluationDocs: MovementDoc[];
  monthDelta: MonthDelta;
  /** Transfers out whose cost changed: the other warehouse's transfer in is revalued in turn. */
  cascades: Extract<PendingOp, { op: 'revalue_in' }>[];
  /** The state at the end of each day replayed (its last movement's). */
  days: Map<string, StockState>;
}

/**
 * Replays `later` (in ledger order) from `start`: outflows at their new cost, inflows at their own
 * value (`override` replaces one inflow's value: a transfer in whose transfer out was revalued).
 * Each month whose movements change gets one revaluation movement carrying the journal entry of
 * the difference (Σ new lines − Σ old lines by account), dated on its latest changed movement.
 */
function replay(b: BalanceDoc, start: StockState, later: MovementDoc[], opts: { tag: string; from: string; seq: number; now: Date; override?: { id: string; value: number; released: number } }): Replayed {
  let state = start;
  const affected: Restated[] = [];
  const restates: PendingOp[] = [];
  const cascades: Replayed['cascades'] = [];
  const monthDelta: MonthDelta = new Map();
  const days = new Map<string, StockState>();
  const byMonth = new Map<string, { id: string; date: string; oldLines: JournalLine[]; newLines: JournalLine[]; restates: Restated[] }>();
  // Deliveries as replayed: a return of one comes back at its share of the delivery's new cost.
  const delivered = new Map<string, { qty: number; value: number }>();
  for (const m of later) {
    const o = opts.override?.id === m._id ? opts.override : null;
    const out = m.type === 'return' && m.counterpart ? delivered.get(m.counterpart) : undefined;
    const input = o ? o.value : out ? share(-out.value, m.qty, -out.qty) : m.type === 'purchase_return' ? (m.price ?? -m.value) : m.value;
    const again = apply(state, b.method, m.type, m.qty, input, o ? o.released : m.released);
    if (m.type === 'delivery') delivered.set(m._id, { qty: m.qty, value: again.value });
    if (m.qty < 0 && again.state.qty < 0 && !b.allow_negative) {
      throw new CuadraError('conflict', `Dated ${opts.from}, this would leave ${b.item_name} in ${b.warehouse_code} below zero on ${m.date} (movement ${m._id}); the item does not allow negative stock.`);
    }
    state = again.state;
    days.set(m.date, state);
    if (again.value !== m.value || again.released !== m.released) {
      const month = m.date.slice(0, 7);
      const rev = byMonth.get(month) ?? { id: `${opts.tag}_rv_${month}`, date: m.date, oldLines: [], newLines: [], restates: [] };
      if (m.date > rev.date) rev.date = m.date;
      rev.oldLines.push(...movementLines(m.type, m.value, m.released, m.price));
      rev.newLines.push(...movementLines(m.type, again.value, again.released, m.price));
      const r = { id: m._id, warehouse_id: m.warehouse_id, date: m.date, type: m.type, old_value: m.value, new_value: again.value };
      rev.restates.push(r);
      byMonth.set(month, rev);
      affected.push(r);
      bumpMonth(monthDelta, m.date, 0, again.value - m.value);
      restates.push({ key: `restate:${m._id}:${opts.tag}`, op: 'restate', id: m._id, value: again.value, released: again.released, after: again.state, restated: { from_value: m.restated?.from_value ?? m.value, by: rev.id } });
      if (m.type === 'transfer_out' && m.counterpart) cascades.push({ key: `revalue_in:${m.counterpart}:${opts.tag}`, op: 'revalue_in', id: m.counterpart, value: -again.value, released: again.released, by: opts.tag });
    } else {
      restates.push({ key: `restate:${m._id}:${opts.tag}`, op: 'restate', id: m._id, value: m.value, released: m.released, after: again.state, restated: m.restated ?? null });
    }
  }
  const revaluationDocs: MovementDoc[] = [...byMonth.values()].map((rev, i) => {
    const lines = differenceLines(rev.oldLines, rev.newLines);
    return {
      _id: rev.id, workspace: b.workspace, balance: b._id, item_id: b.item_id, warehouse_id: b.warehouse_id, type: 'revaluation' as const, date: rev.date, seq: opts.seq + i,
      // Value 0: the restated movements carry the change of the carrying amount; this one carries its entry.
      qty: 0, value: 0, released: 0, currency: b.currency, after: state, source: { kind: 'stock_movement', id: opts.tag },
      reason: `Revalued by ${opts.tag}, dated ${opts.from}`, counterpart: null, journal: lines.length ? { id: `je_${rev.id}`, date: rev.date, memo: MEMO.revaluation!, lines } : null,
      restates: rev.restates, restated: null, created_at: opts.now,
    };
  });
  return { state, affected, restates, revaluationDocs, monthDelta, cascades, days };
}

/** The movements a transfer in's revaluation would restate in its warehouse, and on (a dry run: nothing written). */
async function cascadeDryRun(db: Connection, graph: PeerGraph | undefined, cascades: Replayed['cascades'], now: Date): Promise<Restated[]> {
  const out: Restated[] = [];
  for (const c of cascades) out.push(...(await revalueTransferIn(db, graph, c, { now, dryRun: true })));
  return out;
}

/**
 * Revalues a transfer in (its transfer out was revalued by a backdated movement in the other
 * warehouse) and replays what follows it in its own warehouse — one compare-and-set on that
 * balance, as every change. Idempotent: a transfer in already at that value changes nothing.
 * Answers the movements it restates (and, down the chain, theirs).
 */
export async function revalueTransferIn(db: Connection, graph: PeerGraph | undefined, c: Extract<PendingOp, { op: 'revalue_in' }>, opts: { now: Date; dryRun: boolean }): Promise<Restated[]> {
  const balances = stockBalances(db);
  const movements = stockMovements(db);
  for (let attempt = 0; attempt < 500; attempt++) {
    const x = await movements.findOne({ _id: c.id }).lean<MovementDoc>();
    if (!x) return [];
    if (!opts.dryRun) await finishPending(db, graph, x.balance, opts.now);
    const b = await balances.findOne({ _id: x.balance }).lean<BalanceDoc>();
    if (!b) return [];
    // Its value now is the balance's to say first (as for a movement's id in writeMovement): a
    // revaluation committed and not yet restated in the movements collection must not be applied again.
    const committed = b.pending.findLast((p): p is Extract<PendingOp, { op: 'restate' }> => p.op === 'restate' && p.id === c.id);
    const current = opts.dryRun ? x : (committed ?? (await movements.findOne({ _id: c.id }).lean<MovementDoc>()) ?? x);
    if (current.value === c.value && current.released === c.released) return [];
    const prior = await movements.find({ balance: b._id, $or: [{ date: { $lt: x.date } }, { date: x.date, seq: { $lt: x.seq } }] }).sort({ date: -1, seq: -1 }).limit(1).lean<MovementDoc[]>();
    const later = await movements.find({ balance: b._id, $or: [{ date: { $gt: x.date } }, { date: x.date, seq: { $gte: x.seq } }] }).sort({ date: 1, seq: 1 }).lean<MovementDoc[]>();
    const tag = `${c.by}_${b.warehouse_id}`;
    const r = replay(b, prior[0]?.after ?? EMPTY_STATE, later, { tag, from: x.date, seq: b.seq + 1, now: opts.now, override: { id: x._id, value: c.value, released: c.released } });
    if (opts.dryRun) return [...r.affected, ...(await cascadeDryRun(db, graph, r.cascades, opts.now))];
    const set = {
      ...r.state, months: withMonths(b.months, r.monthDelta, r.days), seq: b.seq + r.revaluationDocs.length, version: b.version + 1,
      pending: [...b.pending, ...r.restates, ...r.revaluationDocs.map((d) => ({ key: `insert:${d._id}`, op: 'insert' as const, doc: d })), ...r.cascades, ...dayOps(r.days, b.version + 1)],
      status: levelStatus(r.state.qty, b.reserved, b.reorder_point),
    };
    const won = await balances.updateOne({ _id: b._id, version: b.version }, { $set: set });
    if (won.modifiedCount === 1) {
      await finishPending(db, graph, b._id, opts.now);
      return r.affected;
    }
    if (attempt >= 3) await new Promise((res) => setTimeout(res, Math.random() * Math.min(40, attempt * 2)));
  }
  throw new Error(`transfer in ${c.id}: not revalued after 500 attempts`);
}

/** `low` when what is free (on hand less reserved) is at or below the reorder point. */
export function levelStatus(qty: number, reserved: number, reorderPoint: number): 'ok' | 'low' {
  return qty - reserved <= reorderPoint ? 'low' : 'ok';
}

export type BalanceInit = Omit<BalanceDoc, 'qty' | 'value' | 'layers' | 'allowance' | 'last_in' | 'reserved' | 'reservations' | 'seq' | 'version' | 'last_date' | 'months' | 'pending' | 'recent' | 'status' | '_id'>;

/** A balance with nothing in it yet. */
export function newBalance(init: BalanceInit): BalanceDoc {
  return {
    ...init, _id: balanceId(init.workspace, init.item_id, init.warehouse_id), ...EMPTY_STATE, reserved: 0, reservations: {}, seq: 0, version: 0, last_date: null, months: {}, pending: [], recent: [],
    status: levelStatus(0, 0, init.reorder_point), day_snapshots: true,
  };
}

/** Creates the balance of an item in a warehouse if it does not exist (its settings copied from the item's). */
export async function ensureBalance(db: Connection, init: BalanceInit): Promise<string> {
  const _id = balanceId(init.workspace, init.item_id, init.warehouse_id);
  const balances = stockBalances(db);
  if (await balances.exists({ _id })) return _id;
  try {
    await createPositioned(balances, newBalance(init));
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
  return _id;
}

/**
 * Finishes the ledger writes a balance committed to (see the top of this file): each idempotent,
 * then taken off the list. Safe to run by several at once.
 */
export async function finishPending(db: Connection, graph: PeerGraph | undefined, id: string, now: Date): Promise<number> {
  const balances = stockBalances(db);
  const movements = stockMovements(db);
  const b = await balances.findOne({ _id: id }, { pending: 1, workspace: 1 }).lean<Pick<BalanceDoc, 'pending' | 'workspace'>>();
  if (!b?.pending?.length) return 0;
  for (const op of b.pending) {
    if (op.op === 'insert') {
      if (!(await movements.exists({ _id: op.doc._id }))) {
        await createPositioned(movements, op.doc as MovementDoc).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
      }
      // Its entry takes its place in the order finance reads (journal_feed.ts) before the insert leaves the list.
      await publishMovementEntry(db, op.doc as MovementDoc);
    } else if (op.op === 'restate') {
      // Its journal entry stays as finance took it in; the revaluation movement carries the difference.
      await movements.updateOne({ _id: op.id }, { $set: { value: op.value, released: op.released, after: op.after, restated: op.restated } });
    } else if (op.op === 'revalue_in') {
      await revalueTransferIn(db, graph, op, { now, dryRun: false });
    } else if (op.op === 'day') {
      // Only over an older snapshot: a finisher that read an old list never undoes a newer commit's day.
      await stockDays(db).updateOne({ _id: `${id}|${op.date}`, version: { $lt: op.version } }, { $set: { workspace: b.workspace, balance: id, date: op.date, qty: op.qty, value: op.value, version: op.version } }, { upsert: true })
        .catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
    } else {
      const target = await balances.findOne({ _id: balanceId(b.workspace, op.to.item_id, op.to.warehouse_id) }, { _id: 1, workspace: 1 }).lean<Pick<BalanceDoc, '_id' | 'workspace'>>();
      if (target) {
        await writeMovement(db, graph, target, { type: 'transfer_in', date: op.date, qty: op.qty, value: op.value, released: op.released, source: { kind: 'stock_movement', id: op.counterpart }, reason: op.reason, counterpart: op.counterpart, id: op.id }, { now, dryRun: false, skipOpenCheck: true });
      }
    }
    await balances.updateOne({ _id: id }, { $pull: { pending: { key: op.key } } });
  }
  return b.pending.length;
}

/** The background sweep's part: balances a dead process left with unfinished writes. */
export async function finishPendingEverywhere(db: Connection, now: Date): Promise<number> {
  const stuck = await stockBalances(db).find({ 'pending.0': { $exists: true } }, { _id: 1 }).limit(200).lean<{ _id: string }[]>();
  let n = 0;
  for (const s of stuck) n += await finishPending(db, undefined, s._id, now);
  return n;
}

/** A share of a reservation or a count, for views. */
export { share };
