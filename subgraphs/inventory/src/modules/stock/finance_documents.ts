import { CuadraError, peerGraph, peersFromEnv, type BackgroundJob, type Logger, type PeerConfig, type PeerGraph, type ToolContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { warehouses } from '../warehouses/model.ts';
import { movementIdFor, writeMovement, type MovementRequest } from './ledger.ts';
import { stockBalances, stockMovements, type MovementDoc } from './model.ts';
import { balanceFor } from './place.ts';
import { setReservation } from './tools/reserve.ts';
import { fromMicro, share, toMicro } from './valuation.ts';

/*
 * Finance events into inventory (ARCHITECTURE.md): finance's posted invoices, bills and credit
 * notes move stock. Finance publishes one document per post in its ordered feed
 * (`stock_documents_since`, invoices open-items/stock.ts); this module pulls it in the background
 * (never in a read) and writes each line's movement through writeMovement under an id derived from
 * (document, line), so a crash, a retry or two pulls at once move stock once (the balance says
 * whether a movement was applied). A mark per workspace keeps the cursor and the documents waiting
 * (a closed month, stock not there), moved only after the lines read are written or kept waiting,
 * with one conditional update; a crash before leaves it and the next pull reads them again.
 *
 * Before an invoice is posted, finance holds its lines here ({@link holdForDocument}): the
 * reservation, keyed by the invoice's id, is one compare-and-set per balance like a sales order's,
 * so of ten posts of the last unit at once one holds it and nine are refused; the posted invoice's
 * delivery takes it as its own reservation.
 */

/** A line of a posted document, as finance's feed answers it. */
interface DocLine { line: number; item_id: string; warehouse_id: string | null; quantity: number; value?: number; invoice_line?: number }
/** A posted document that moves stock. */
interface DocRow { id: string; kind: 'invoice' | 'bill' | 'credit_note'; credit_of: string | null; date: string; currency: string; lines: DocLine[]; seq?: number | null }
/** A workspace's mark in finance's feed. */
interface MarkDoc { _id: string; cursor: string | null; waiting: DocRow[]; version: number }

const PAGE = 100;
const MAX_PAGES = 100;

/** An invoice's hold, by when it was last made (`_id` = `<workspace>|<invoice>`): what the repair of stale holds reads. */
interface HoldDoc { _id: string; workspace: string; document: string; at: Date }

/** The holds finance made for invoices being posted, until their delivery or release. */
export function documentHolds(db: Connection) {
  return db.collection<HoldDoc>('document_holds');
}

/** The marks (`_id` = workspace). */
export function financeDocumentMarks(db: Connection) {
  return db.collection<MarkDoc>('finance_document_marks');
}

/** The workspace's default warehouse: its first (null: the workspace keeps no stock). */
async function defaultWarehouse(db: Connection, workspace: string): Promise<string | null> {
  const first = await warehouses(db).find({ workspace }, { _id: 1 }).sort({ created_at: 1, _id: 1 }).limit(1).lean();
  return first[0]?._id ?? null;
}

/** What background work and finance's calls act with: a tool context of no caller. */
function contextFor(db: Connection, workspace: string, graph: PeerGraph | undefined, now: Date): ToolContext {
  return { db, workspace, now, graph } as unknown as ToolContext;
}

/** A line's warehouse: its own (the workspace's), else the default. */
async function warehouseOf(db: Connection, workspace: string, line: DocLine, fallback: string): Promise<string | null> {
  if (!line.warehouse_id) return fallback;
  return (await warehouses(db).exists({ _id: line.warehouse_id, workspace })) ? line.warehouse_id : null;
}

/** What a hold answers finance (open-items/stock.ts). */
export interface HoldAnswer { held: boolean; refused: { line: number; message: string } | null }

/**
 * Reserves an invoice's product lines under its id, all or none: a line whose free stock (on hand
 * less other reservations) is short, its item not allowing negative stock, is refused and what
 * the lines before it held is given back. Idempotent (a line's reservation becomes its quantity).
 * A workspace without warehouses keeps no stock: nothing held.
 */
export async function holdForDocument(db: Connection, workspace: string, graph: PeerGraph | undefined, document: string, lines: DocLine[], now: Date): Promise<HoldAnswer> {
  const fallback = await defaultWarehouse(db, workspace);
  if (!fallback) return { held: false, refused: null };
  const ctx = contextFor(db, workspace, graph, now);
  // Recorded before any reservation: a hold a crash leaves behind is found by the repair (releaseStaleHolds).
  await documentHolds(db).updateOne({ _id: `${workspace}|${document}` }, { $set: { workspace, document, at: now } }, { upsert: true });
  // One reservation per balance: lines of the same item and warehouse add up.
  const wanted = new Map<string, { item_id: string; warehouse_id: string; qty: number; line: number }>();
  for (const l of lines) {
    const wh = await warehouseOf(db, workspace, l, fallback);
    if (!wh) return { held: false, refused: { line: l.line, message: `No warehouse ${l.warehouse_id} in the workspace's inventory.` } };
    const key = `${l.item_id}|${wh}`;
    const w = wanted.get(key) ?? { item_id: l.item_id, warehouse_id: wh, qty: 0, line: l.line };
    w.qty += toMicro(l.quantity);
    wanted.set(key, w);
  }
  for (const w of wanted.values()) {
    try {
      await setReservation(ctx, { sales_order_id: document, item_id: w.item_id, warehouse_id: w.warehouse_id }, (current, b) => {
        const free = b.qty - (b.reserved - current);
        if (!b.allow_negative && w.qty > free) {
          throw new CuadraError('conflict', `Only ${fromMicro(Math.max(free, 0))} ${b.unit} of ${b.item_name} are free in ${b.warehouse_code}; ${fromMicro(w.qty)} cannot be delivered. The item does not allow negative stock.`);
        }
        return w.qty;
      });
    } catch (err) {
      await releaseForDocument(db, workspace, graph, document, now);
      if (err instanceof CuadraError && (err.code === 'conflict' || err.code === 'invalid_input')) return { held: false, refused: { line: w.line, message: err.message } };
      throw err;
    }
  }
  return { held: true, refused: null };
}

/** Gives back every reservation held under a document (a post refused after its hold). */
export async function releaseForDocument(db: Connection, workspace: string, graph: PeerGraph | undefined, document: string, now: Date): Promise<number> {
  const held = await stockBalances(db).find({ workspace, [`reservations.${document}`]: { $exists: true } }, { item_id: 1, warehouse_id: 1 }).lean();
  const ctx = contextFor(db, workspace, graph, now);
  for (const b of held) await setReservation(ctx, { sales_order_id: document, item_id: b.item_id, warehouse_id: b.warehouse_id }, () => 0);
  await documentHolds(db).deleteOne({ _id: `${workspace}|${document}` });
  return held.length;
}

/** How old a hold must be before the repair asks finance about it (`INVENTORY_HOLD_STALE_MS`, default 10 min: past any live post and the operations' repair wait). */
const HOLD_STALE_MS = Number(process.env.INVENTORY_HOLD_STALE_MS) > 0 ? Number(process.env.INVENTORY_HOLD_STALE_MS) : 10 * 60_000;

/**
 * Gives back the holds of invoices that were never posted: a post refused or killed between
 * inventory making its hold and finance learning of it could not release it. A stale hold whose
 * invoice finance answers as a draft (or does not know) is released; one whose invoice is posted is
 * left for its delivery, which takes it. Finance not answering: left for the next pass.
 */
export async function releaseStaleHolds(db: Connection, workspace: string, graph: PeerGraph, now: Date): Promise<number> {
  const stale = await documentHolds(db).find({ workspace, at: { $lt: new Date(now.getTime() - HOLD_STALE_MS) } }).limit(50).toArray();
  let released = 0;
  for (const h of stale) {
    const data = await graph('invoices', 'query($id: ID!) { invoice(id: $id) { id status } }', { id: h.document }).catch(() => null);
    if (!data) return released;
    const status = (data.invoice as { status?: string } | null)?.status;
    if (status && status !== 'draft') continue;
    // Only the hold as read: a post that holds it again meanwhile moved `at`.
    if ((await documentHolds(db).countDocuments({ _id: h._id, at: h.at })) === 0) continue;
    await releaseForDocument(db, workspace, graph, h.document, now);
    released += 1;
  }
  return released;
}

/** The movement a document's line makes (null: the line moves nothing here). */
async function movementOf(db: Connection, workspace: string, row: DocRow, l: DocLine, fallback: string): Promise<{ warehouse: string; req: MovementRequest } | null> {
  const qty = toMicro(l.quantity);
  if (row.kind === 'credit_note') {
    // Back to the warehouse the invoice's line left from, at the cost it left with (its share of that delivery).
    if (!row.credit_of || l.invoice_line === undefined) return null;
    const out = await stockMovements(db).findOne({ workspace, type: 'delivery', 'source.kind': 'invoice', 'source.id': row.credit_of, 'source.line': l.invoice_line }).lean<MovementDoc>();
    if (!out) return null;
    const source = { kind: 'credit_note', id: row.id, line: l.line };
    return { warehouse: out.warehouse_id, req: { type: 'return', date: row.date, qty, value: share(-out.value, qty, -out.qty), source, reason: null, id: movementIdFor(workspace, 'return', l.item_id, out.warehouse_id, source) } };
  }
  const warehouse = await warehouseOf(db, workspace, l, fallback);
  if (!warehouse) return null;
  const source = { kind: row.kind, id: row.id, line: l.line };
  if (row.kind === 'bill') {
    return { warehouse, req: { type: 'receipt', date: row.date, qty, value: l.value ?? 0, source, reason: null, id: movementIdFor(workspace, 'receipt', l.item_id, warehouse, source) } };
  }
  // The invoice's hold is the delivery's own reservation.
  return { warehouse, req: { type: 'delivery', date: row.date, qty: -qty, source, reason: null, salesOrder: row.id, id: movementIdFor(workspace, 'delivery', l.item_id, warehouse, source) } };
}

/** Writes one document's movements (each once by id). False: kept waiting (a closed month, stock not there). */
async function moveDocument(db: Connection, workspace: string, graph: PeerGraph, row: DocRow, fallback: string, now: Date, log?: Pick<Logger, 'warn'>): Promise<boolean> {
  const ctx = contextFor(db, workspace, graph, now);
  for (const l of row.lines) {
    const m = await movementOf(db, workspace, row, l, fallback);
    if (!m) continue;
    try {
      const place = await balanceFor(ctx, l.item_id, m.warehouse);
      await writeMovement(db, graph, place, m.req, { now, dryRun: false });
    } catch (err) {
      if (err instanceof CuadraError && (err.code === 'conflict' || err.code === 'invalid_input')) {
        log?.warn({ workspace, document: row.id, line: l.line, err: err.message }, 'a posted document\'s line could not move stock; kept waiting');
        return false;
      }
      throw err;
    }
  }
  return true;
}

/**
 * Pulls finance's posted documents into the workspace's stock (see the top of this file). Finance
 * not answering: nothing done, the mark where it was. Answers the documents moved.
 */
export async function pullFinanceDocuments(db: Connection, workspace: string, graph: PeerGraph | undefined, now: Date, log?: Pick<Logger, 'warn'>): Promise<{ moved: string[]; waiting: string[] }> {
  const out = { moved: [] as string[], waiting: [] as string[] };
  const fallback = await defaultWarehouse(db, workspace);
  if (!graph || !fallback) return out;
  const marks = financeDocumentMarks(db);
  const mark = await marks.findOne({ _id: workspace });
  const fresh: DocRow[] = [];
  let cursor = mark?.cursor ?? undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const data = await graph('invoices', 'query($q: JSON!) { invoicesRecords(query: $q) }', { q: { source: 'stock_documents_since', limit: PAGE, ...(cursor ? { cursor } : {}) } });
      const answer = data.invoicesRecords as { rows: DocRow[]; next_cursor?: string };
      fresh.push(...answer.rows);
      cursor = answer.next_cursor ?? cursor;
      if (answer.rows.filter((r) => typeof r.seq === 'number').length < PAGE) break;
    }
  } catch (err) {
    log?.warn({ err: (err as Error).message, workspace }, 'finance\'s posted documents could not be pulled');
    return out;
  }
  const seen = new Set<string>();
  const rows = [...(mark?.waiting ?? []), ...fresh].filter((r) => (seen.has(r.id) ? false : (seen.add(r.id), true)));
  // Bills first within a page: goods received before they are delivered (a hold has reserved an invoice's already).
  for (const row of rows) {
    if (await moveDocument(db, workspace, graph, row, fallback, now, log)) {
      out.moved.push(row.id);
      // Delivered: its hold was taken as the delivery's reservation.
      if (row.kind === 'invoice') await documentHolds(db).deleteOne({ _id: `${workspace}|${row.id}` });
    } else out.waiting.push(row.id);
  }
  if (mark && rows.length === 0 && (cursor ?? null) === mark.cursor) return out;
  const next = { cursor: cursor ?? null, waiting: rows.filter((r) => out.waiting.includes(r.id)), version: (mark?.version ?? 0) + 1 };
  // Moved only now; a lost race leaves the other pull's mark (the same documents, moved once by id).
  if (mark) await marks.updateOne({ _id: workspace, version: mark.version }, { $set: next });
  else await marks.insertOne({ _id: workspace, ...next }).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  return out;
}

/** How often the pull runs (`INVENTORY_FINANCE_PULL_INTERVAL_MS`, default 2 s). */
const EVERY_MS = Number(process.env.INVENTORY_FINANCE_PULL_INTERVAL_MS) > 0 ? Number(process.env.INVENTORY_FINANCE_PULL_INTERVAL_MS) : 2_000;
/** The longest a workspace with nothing new waits between two pulls. */
const MAX_IDLE_MS = 60_000;
/** Per workspace: when it is next due and its current wait (doubled by every pull that finds nothing; reset by a hold). */
const due = new Map<string, { at: number; wait: number }>();

/** Finance is posting in this workspace (a hold): pull it on the next pass. */
export function wakeFinancePull(workspace: string): void {
  due.delete(workspace);
}

/** The background pull: every workspace with a warehouse that is due. */
export const financeDocumentsPullJob: BackgroundJob = {
  name: 'finance documents pull',
  everyMs: EVERY_MS,
  async run(db, now, log, peers?: PeerConfig) {
    if (!peers?.urls.invoices) return;
    const t = now.getTime();
    for (const workspace of (await warehouses(db).distinct('workspace')) as string[]) {
      const state = due.get(workspace);
      if (state && state.at > t) continue;
      const graph = peerGraph('inventory', peers, workspace);
      const r = await pullFinanceDocuments(db, workspace, graph, now, log);
      await releaseStaleHolds(db, workspace, graph, now);
      const wait = r.moved.length > 0 || r.waiting.length > 0 || !state ? EVERY_MS : Math.min(MAX_IDLE_MS, state.wait * 2);
      due.set(workspace, { at: t + wait, wait });
    }
    if (due.size > 100_000) due.clear();
  },
};

let peers: PeerConfig | undefined | null = null;
/** The graph finance's call is served with (inventory reads an item it has not stocked yet from finance). */
function peersOnce(): PeerConfig | undefined {
  if (peers === null) peers = peersFromEnv();
  return peers;
}

/** An invoice's id (it becomes a key of the balances' reservations, and a path in a query: no dots, no `$`). */
function isInvoiceId(id: unknown): id is string {
  return typeof id === 'string' && /^inv_[A-Za-z0-9_-]{1,40}$/.test(id);
}

/** Only finance's service assertion may hold or release stock for a document. */
function fromFinance(ctx: { principal: { actor: { type: string; id: string } } }): void {
  if (ctx.principal.actor.type !== 'service' || ctx.principal.actor.id !== 'invoices') throw new CuadraError('policy_denied', 'Only finance holds stock for a document it is posting.');
}

/** The graph fields of the narrow service write (schema.graphql): finance's hold and release. */
export const holdResolvers = {
  holdStockForDocument: async (_: unknown, args: { document: string; lines: DocLine[] }, ctx: { principal: { actor: { type: string; id: string } }; workspace: string; db: Connection }) => {
    fromFinance(ctx);
    if (!isInvoiceId(args.document) || !Array.isArray(args.lines) || args.lines.length > 500
      || !args.lines.every((l) => Number.isInteger(l?.line) && typeof l.item_id === 'string' && (l.warehouse_id === null || typeof l.warehouse_id === 'string') && typeof l.quantity === 'number' && l.quantity > 0)) {
      throw new CuadraError('invalid_input', 'A hold names an invoice and its lines {line, item_id, warehouse_id, quantity}.');
    }
    wakeFinancePull(ctx.workspace);
    const p = peersOnce();
    return holdForDocument(ctx.db, ctx.workspace, p ? peerGraph('inventory', p, ctx.workspace) : undefined, args.document, args.lines, new Date());
  },
  releaseStockForDocument: async (_: unknown, args: { document: string }, ctx: { principal: { actor: { type: string; id: string } }; workspace: string; db: Connection }) => {
    fromFinance(ctx);
    if (!isInvoiceId(args.document)) throw new CuadraError('invalid_input', 'A release names an invoice.');
    const p = peersOnce();
    return { released: await releaseForDocument(ctx.db, ctx.workspace, p ? peerGraph('inventory', p, ctx.workspace) : undefined, args.document, new Date()) };
  },
};
