import { CuadraError, feedPullJob, peerGraph, pullFeed, type BackgroundJob, type FeedReader, type Logger, type PeerConfig, type PeerGraph, type ToolContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { warehouses } from '../warehouses/model.ts';
import { movementIdFor, writeMovement, type MovementRequest } from './ledger.ts';
import { stockBalances, stockMovements, type MovementDoc } from './model.ts';
import { balanceFor } from './place.ts';
import { setReservation } from './tools/reserve.ts';
import { ACCOUNTS } from './journal.ts';
import { fromMicro, toMicro } from './valuation.ts';

/*
 * Finance events into inventory (ARCHITECTURE.md): finance's posted invoices, bills and credit
 * notes move stock. Finance publishes one document per post in its ordered feed
 * (`stock_documents_since`, invoices open-items/stock.ts); this module pulls it in the background
 * (never in a read) through the shared feed reader ({@link FINANCE_DOCUMENTS}) and writes each
 * line's movement through writeMovement under an id derived from (document, line), so a crash, a
 * retry or two pulls at once move stock once (the balance says whether a movement was applied).
 * The reader's mark per workspace keeps the cursor and the documents waiting (a closed month, stock
 * not there), moved only after the lines read are written or kept waiting.
 *
 * Before an invoice is posted, finance holds its lines here ({@link holdForDocument}): the
 * reservation, keyed by the invoice's id, is one compare-and-set per balance like a sales order's,
 * so of ten posts of the last unit at once one holds it and nine are refused; the posted invoice's
 * delivery takes it as its own reservation.
 */

/** A line of a posted document, as finance's feed answers it (`bill_line`: the bill line a vendor's credit note credits). */
interface DocLine { line: number; item_id: string; warehouse_id: string | null; quantity: number; value?: number; invoice_line?: number; bill_line?: number }
/** A posted document that moves stock (`bill_credit_note`: a vendor's credit note, goods back to the vendor). */
interface DocRow { id: string; kind: 'invoice' | 'bill' | 'credit_note' | 'bill_credit_note'; credit_of: string | null; date: string; currency: string; lines: DocLine[]; seq?: number | null; published_at?: string }

/** Documents whose goods leave, held before they are posted: their movement takes the hold. */
const HELD_KINDS: ReadonlySet<DocRow['kind']> = new Set(['invoice', 'bill_credit_note']);

/** An invoice's hold, by when it was last made (`_id` = `<workspace>|<invoice>`): what the repair of stale holds reads. */
interface HoldDoc { _id: string; workspace: string; document: string; at: Date }

/** The holds finance made for invoices being posted, until their delivery or release. */
export function documentHolds(db: Connection) {
  return db.collection<HoldDoc>('document_holds');
}

/** The workspace's first warehouse, its default (null: the workspace keeps no stock). */
async function firstWarehouse(db: Connection, workspace: string): Promise<{ _id: string; created_at: Date } | null> {
  const first = await warehouses(db).find({ workspace }, { _id: 1, created_at: 1 }).sort({ created_at: 1, _id: 1 }).limit(1).lean();
  return first[0] ?? null;
}

/** The workspace's default warehouse (null: the workspace keeps no stock). */
async function defaultWarehouse(db: Connection, workspace: string): Promise<string | null> {
  return (await firstWarehouse(db, workspace))?._id ?? null;
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

/** The receipt of the bill line a vendor's credit note line sends back (null: not received here). */
function receiptOf(db: Connection, workspace: string, bill: string | null, line: DocLine): Promise<MovementDoc | null> {
  if (!bill || line.bill_line === undefined) return Promise.resolve(null);
  return stockMovements(db).findOne({ workspace, type: 'receipt', 'source.kind': 'bill', 'source.id': bill, 'source.line': line.bill_line }).lean<MovementDoc>();
}

/** Where a line's goods leave from: a vendor's credit note's, the warehouse its bill line was received into; any other, the line's own. */
async function leavingFrom(db: Connection, workspace: string, creditOf: string | null, line: DocLine, fallback: string): Promise<string | null> {
  return (await receiptOf(db, workspace, creditOf, line))?.warehouse_id ?? warehouseOf(db, workspace, line, fallback);
}

/** What a hold answers finance (open-items/stock.ts). */
export interface HoldAnswer { held: boolean; refused: { line: number; message: string } | null }

/**
 * Reserves the product lines of a document being posted whose goods leave — an invoice, or a
 * vendor's credit note (`creditOf`: its bill; the goods leave the warehouse they were received
 * into) — under its id, all or none: a line whose free stock (on hand less other reservations) is
 * short, its item not allowing negative stock, is refused and what the lines before it held is given
 * back. Idempotent (a line's reservation becomes its quantity). A workspace without warehouses keeps
 * no stock: nothing held.
 */
export async function holdForDocument(db: Connection, workspace: string, graph: PeerGraph | undefined, document: string, lines: DocLine[], now: Date, creditOf: string | null = null): Promise<HoldAnswer> {
  const fallback = await defaultWarehouse(db, workspace);
  if (!fallback) return { held: false, refused: null };
  const ctx = contextFor(db, workspace, graph, now);
  if (creditOf && graph) await receiveBillFirst(db, workspace, graph, creditOf, lines, now);
  // Recorded before any reservation: a hold a crash leaves behind is found by the repair (releaseStaleHolds).
  await documentHolds(db).updateOne({ _id: `${workspace}|${document}` }, { $set: { workspace, document, at: now } }, { upsert: true });
  // One reservation per balance: lines of the same item and warehouse add up.
  const wanted = new Map<string, { item_id: string; warehouse_id: string; qty: number; line: number }>();
  for (const l of lines) {
    const wh = await leavingFrom(db, workspace, creditOf, l, fallback);
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
          throw new CuadraError('conflict', `Only ${fromMicro(Math.max(free, 0))} ${b.unit} of ${b.item_name} are free in ${b.warehouse_code}; ${fromMicro(w.qty)} cannot ${creditOf ? 'go back to the vendor' : 'be delivered'}. The item does not allow negative stock.`);
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

/**
 * A vendor's credit note issued right after its bill: the bill's receipt may not be pulled yet (the
 * background pull runs every few seconds), and its goods would then not be there to send back — a
 * correct note refused for our own ordering. So when a line's receipt is missing, finance's posted
 * documents are pulled now, as the background pull would (the same reader and marks: each document
 * moves once, whichever pull gets it; bounded as every pull is). Finance's hold waits for it (its
 * read of the feed is a service read: it takes no fair-share slot there). A bill published before
 * the first warehouse, or kept waiting (a closed month), still has no receipt: the hold then
 * answers as before, from the line's warehouse.
 */
async function receiveBillFirst(db: Connection, workspace: string, graph: PeerGraph, bill: string, lines: DocLine[], now: Date): Promise<void> {
  for (const l of lines) {
    if (l.bill_line !== undefined && !(await receiptOf(db, workspace, bill, l))) {
      await pullFeed(FINANCE_DOCUMENTS, db, workspace, graph, now);
      return;
    }
  }
}

/** One movement a document would make, as finance's dry run shows it. */
export interface PreviewedMovement {
  line: number;
  type: MovementDoc['type'];
  item_id: string;
  warehouse_id: string;
  /** Units moved (positive: which way is `type`'s). */
  quantity: number;
  /** What the goods carry in or out of stock (minor units; out: negative, as the ledger keeps it). */
  value: number;
  /** A purchase return: what the vendor's credit note takes off 1435 for these goods (the note line's net amount). */
  price?: number;
  /** Σ 6135 debits − credits of the movement's own entry: + the cost of sales grows (the goods left carrying more than the vendor gives back). */
  cost_of_sales_change: number;
  /** The movement's own journal lines (posted through inventory's journal feed once it is written). */
  journal_lines: { account: string; debit: number; credit: number }[];
  /** The bill's receipt is not in inventory yet: the goods leave at its own cost (no difference), as they will once it is pulled. */
  receipt_pending?: boolean;
}

/**
 * What a document being issued would move, read only (finance's dry run of a vendor's credit
 * note): each line's movement by the very path the pull writes it (movementOf, then writeMovement
 * with `dryRun`), nothing written — not even a first balance or item. A line whose goods are not
 * there (the item not allowing negative stock) is answered `refused`, as the hold would. A vendor
 * note whose bill's receipt is not pulled yet leaves at the bill line's own cost (receipt_pending):
 * a dry run brings no pull forward.
 */
export async function previewForDocument(db: Connection, workspace: string, graph: PeerGraph | undefined, row: DocRow, now: Date): Promise<{ movements: PreviewedMovement[]; refused: HoldAnswer['refused'] }> {
  const fallback = await defaultWarehouse(db, workspace);
  if (!fallback) return { movements: [], refused: null };
  const ctx = contextFor(db, workspace, graph, now);
  const movements: PreviewedMovement[] = [];
  for (const l of row.lines) {
    const m = await movementOf(db, workspace, row, l, fallback);
    if (!m) continue;
    const quantity = Math.abs(fromMicro(m.req.qty));
    if (row.kind === 'bill_credit_note' && !m.req.counterpart) {
      movements.push({ line: l.line, type: m.req.type, item_id: l.item_id, warehouse_id: m.warehouse, quantity, value: -(l.value ?? 0), price: l.value ?? 0, cost_of_sales_change: 0, journal_lines: [], receipt_pending: true });
      continue;
    }
    try {
      const place = await balanceFor(ctx, l.item_id, m.warehouse, { dryRun: true });
      const { movement } = await writeMovement(db, graph, place, m.req, { now, dryRun: true });
      const lines = (movement.journal?.lines ?? []).map(({ account, debit, credit }) => ({ account, debit, credit }));
      const costOfSales = lines.filter((j) => j.account === ACCOUNTS.costOfSales.account).reduce((t, j) => t + j.debit - j.credit, 0);
      movements.push({ line: l.line, type: movement.type, item_id: l.item_id, warehouse_id: m.warehouse, quantity, value: movement.value, ...(movement.price !== undefined ? { price: movement.price } : {}), cost_of_sales_change: costOfSales, journal_lines: lines });
    } catch (err) {
      if (err instanceof CuadraError && (err.code === 'conflict' || err.code === 'invalid_input')) return { movements, refused: { line: l.line, message: err.message } };
      throw err;
    }
  }
  return { movements, refused: null };
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
 * Gives back the holds of documents that were never posted: a post (or a vendor's credit note)
 * refused or killed between inventory making its hold and finance learning of it could not release
 * it. A stale hold whose document finance answers as a draft (or does not know) is released; one
 * whose document is posted is left for its movement, which takes it. Finance not answering: left for
 * the next pass. Oldest first.
 */
export async function releaseStaleHolds(db: Connection, workspace: string, graph: PeerGraph, now: Date): Promise<number> {
  const stale = await documentHolds(db).find({ workspace, at: { $lt: new Date(now.getTime() - HOLD_STALE_MS) } }).sort({ at: 1 }).limit(50).toArray();
  let released = 0;
  for (const h of stale) {
    const bill = h.document.startsWith('bil_');
    const data = await graph('invoices', bill ? 'query($id: ID!) { billStatus(id: $id) }' : 'query($id: ID!) { invoice(id: $id) { id status } }', { id: h.document }).catch(() => null);
    if (!data) return released;
    const status = bill ? (data.billStatus as string | null) : (data.invoice as { status?: string } | null)?.status;
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
    // Back to the warehouse the invoice's line left from, at the cost it left with: the ledger takes its
    // share of that delivery's cost, and again whenever a backdated movement restates the delivery.
    if (!row.credit_of || l.invoice_line === undefined) return null;
    const out = await stockMovements(db).findOne({ workspace, type: 'delivery', 'source.kind': 'invoice', 'source.id': row.credit_of, 'source.line': l.invoice_line }).lean<MovementDoc>();
    if (!out) return null;
    const source = { kind: 'credit_note', id: row.id, line: l.line };
    return { warehouse: out.warehouse_id, req: { type: 'return', date: row.date, qty, counterpart: out._id, source, reason: null, id: movementIdFor(workspace, 'return', l.item_id, out.warehouse_id, source) } };
  }
  if (row.kind === 'bill_credit_note') {
    // Out of the warehouse the bill's line was received into, at the vendor's credit (valuation.ts takeBack); its hold is the movement's reservation.
    const receipt = await receiptOf(db, workspace, row.credit_of, l);
    const warehouse = receipt?.warehouse_id ?? (await warehouseOf(db, workspace, l, fallback));
    if (!warehouse) return null;
    const source = { kind: 'bill_credit_note', id: row.id, line: l.line };
    return {
      warehouse,
      req: { type: 'purchase_return', date: row.date, qty: -qty, value: l.value ?? 0, source, reason: null, salesOrder: row.id, counterpart: receipt?._id ?? null, id: movementIdFor(workspace, 'purchase_return', l.item_id, warehouse, source) },
    };
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
  // Moved: a hold was taken as the movements' reservations.
  if (HELD_KINDS.has(row.kind)) await documentHolds(db).deleteOne({ _id: `${workspace}|${row.id}` });
  return true;
}

/**
 * Finance's posted documents, read through the shared feed reader (feed-reader.ts, see the top of
 * this file). The marks stay in `finance_document_marks`, in the shape the pull kept before it
 * moved onto the shared reader (cursor, waiting rows, version), so marks stored earlier go on from
 * where they were.
 *
 * A document published before the workspace's first warehouse moves nothing, then or ever: a
 * warehouse starts from its opening count, which already holds what earlier bills brought in and
 * earlier invoices took out (moving them too would count those goods twice, and deliver goods
 * inventory never held). What says "before" is the time finance published the document against
 * the time inventory created the warehouse (an invoice's publication follows its hold, so an
 * invoice held in a warehouse always moves); a row without its publication time (kept waiting by
 * an earlier version) moves as it did.
 */
export const FINANCE_DOCUMENTS: FeedReader<DocRow> = {
  subgraph: 'invoices',
  source: 'stock_documents_since',
  marks: 'finance_document_marks',
  async apply(db, workspace, rows, graph, now, log) {
    const first = await firstWarehouse(db, workspace);
    const waiting: string[] = [];
    // In the feed's order: goods received before they are delivered (a hold has reserved an invoice's already).
    for (const row of rows) {
      if (!first || publishedBefore(row, first.created_at)) continue;
      if (!(await moveDocument(db, workspace, graph, row, first._id, now, log))) waiting.push(row.id);
    }
    return waiting;
  },
};

/** Whether finance published the row before `fence` (unknown: not before). */
function publishedBefore(row: DocRow, fence: Date): boolean {
  const at = typeof row.published_at === 'string' ? Date.parse(row.published_at) : Number.NaN;
  return Number.isFinite(at) && at < fence.getTime();
}

/** How often the pull runs (`INVENTORY_FINANCE_PULL_INTERVAL_MS`, default 2 s). */
const EVERY_MS = Number(process.env.INVENTORY_FINANCE_PULL_INTERVAL_MS) > 0 ? Number(process.env.INVENTORY_FINANCE_PULL_INTERVAL_MS) : 2_000;

/**
 * The background pull: every workspace with a warehouse (a bill's receipt wakes nothing), and any
 * workspace finance is posting in (a hold wakes it), when due — less often the longer it finds
 * nothing, up to a minute.
 */
export const financeDocumentsPull = feedPullJob(FINANCE_DOCUMENTS, {
  name: 'finance documents pull', service: 'inventory', everyMs: EVERY_MS, maxIdleMs: 60_000,
  known: async (db) => (await warehouses(db).distinct('workspace')) as string[],
});

/** Finance is posting in this workspace (a hold): pull it on the next passes. */
export function wakeFinancePull(workspace: string): void {
  financeDocumentsPull.wake(workspace);
}

/** The repair of stale holds ({@link releaseStaleHolds}) in every workspace that has one, on the pull's beat. */
export const staleHoldsRepairJob: BackgroundJob = {
  name: 'stale document holds',
  everyMs: EVERY_MS,
  async run(db, now, _log, peers?: PeerConfig) {
    if (!peers?.urls.invoices) return;
    const stale = (await documentHolds(db).distinct('workspace', { at: { $lt: new Date(now.getTime() - HOLD_STALE_MS) } })) as string[];
    for (const workspace of stale) await releaseStaleHolds(db, workspace, peerGraph('inventory', peers, workspace), now);
  },
};

/** An invoice's or a vendor credit note's id (it becomes a key of the balances' reservations, and a path in a query: no dots, no `$`). */
function isHeldDocumentId(id: unknown): id is string {
  return typeof id === 'string' && /^(inv|bil)_[A-Za-z0-9_-]{1,40}$/.test(id);
}

/** Only finance's service assertion may hold or release stock for a document. */
function fromFinance(ctx: { principal: { actor: { type: string; id: string } } }): void {
  if (ctx.principal.actor.type !== 'service' || ctx.principal.actor.id !== 'invoices') throw new CuadraError('policy_denied', 'Only finance holds stock for a document it is posting.');
}

/** A graph resolver's context: the caller, and the graph this service reads its peers with (finance's items and closed months). */
type ResolverContext = { principal: { actor: { type: string; id: string } }; workspace: string; db: Connection; graph?: PeerGraph };

/** A document's lines as finance sends them (the hold's and the preview's shape), checked. */
function checkedLines(lines: unknown): lines is DocLine[] {
  return Array.isArray(lines) && lines.length <= 500 && lines.every((l) => Number.isInteger(l?.line) && typeof l.item_id === 'string' && (l.warehouse_id === null || typeof l.warehouse_id === 'string') && typeof l.quantity === 'number' && l.quantity > 0
    && (l.bill_line === undefined || Number.isInteger(l.bill_line)) && (l.invoice_line === undefined || Number.isInteger(l.invoice_line)) && (l.value === undefined || Number.isInteger(l.value)));
}

/** The documents finance previews, and the ids each names (itself, and what it credits; an invoice credits nothing). */
const PREVIEWED_KINDS: Record<'invoice' | 'credit_note' | 'bill_credit_note', { document: RegExp; creditOf: RegExp | null }> = {
  invoice: { document: /^inv_[A-Za-z0-9_-]{1,40}$/, creditOf: null },
  credit_note: { document: /^inv_[A-Za-z0-9_-]{1,40}$/, creditOf: /^inv_[A-Za-z0-9_-]{1,40}$/ },
  bill_credit_note: { document: /^bil_[A-Za-z0-9_-]{1,40}$/, creditOf: /^bil_[A-Za-z0-9_-]{1,40}$/ },
};

/** Finance's dry run of a document it would issue (schema.graphql): what it would move, read only. */
export const previewResolvers = {
  previewStockForDocument: async (_: unknown, args: { document: string; kind: string; creditOf?: string | null; date: string; lines: DocLine[] }, ctx: ResolverContext) => {
    fromFinance(ctx);
    const creditOf = args.creditOf ?? null;
    // What finance issues and previews: an invoice (inv_) and its credit note (credit of an inv_), a vendor's credit note (bil_, credit of a bil_).
    const shape = Object.hasOwn(PREVIEWED_KINDS, args.kind) ? PREVIEWED_KINDS[args.kind as keyof typeof PREVIEWED_KINDS] : undefined;
    if (!shape || !shape.document.test(args.document) || (creditOf !== null && !shape.creditOf?.test(creditOf)) || !/^\d{4}-\d{2}-\d{2}$/.test(args.date) || !checkedLines(args.lines)) {
      throw new CuadraError('invalid_input', 'A preview names an invoice, a credit note (of an invoice) or a vendor\'s credit note (of a bill), its date and its lines {line, item_id, warehouse_id, quantity, value?, invoice_line?, bill_line?}.');
    }
    const row: DocRow = { id: args.document, kind: args.kind as DocRow['kind'], credit_of: creditOf, date: args.date, currency: '', lines: args.lines };
    return previewForDocument(ctx.db, ctx.workspace, ctx.graph, row, new Date());
  },
};

/** The graph fields of the narrow service write (schema.graphql): finance's hold and release. */
export const holdResolvers = {
  holdStockForDocument: async (_: unknown, args: { document: string; lines: DocLine[]; creditOf?: string | null }, ctx: ResolverContext) => {
    fromFinance(ctx);
    const creditOf = args.creditOf ?? null;
    if (!isHeldDocumentId(args.document) || (creditOf !== null && !/^bil_[A-Za-z0-9_-]{1,40}$/.test(creditOf)) || !checkedLines(args.lines)) {
      throw new CuadraError('invalid_input', 'A hold names an invoice or a vendor\'s credit note and its lines {line, item_id, warehouse_id, quantity, bill_line?}.');
    }
    wakeFinancePull(ctx.workspace);
    return holdForDocument(ctx.db, ctx.workspace, ctx.graph, args.document, args.lines, new Date(), creditOf);
  },
  releaseStockForDocument: async (_: unknown, args: { document: string }, ctx: ResolverContext) => {
    fromFinance(ctx);
    if (!isHeldDocumentId(args.document)) throw new CuadraError('invalid_input', 'A release names an invoice or a vendor\'s credit note.');
    return { released: await releaseForDocument(ctx.db, ctx.workspace, ctx.graph, args.document, new Date()) };
  },
};
