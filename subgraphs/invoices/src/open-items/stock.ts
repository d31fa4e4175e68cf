import { clampLimit, CuadraError, modelOn, type ToolContext, OrderedFeed, ORDERED_FEED_FIELDS, type OperationContext, type OrderedFeedDoc, type PeerGraph, type SourceReader } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/*
 * Posted documents that move stock (ARCHITECTURE.md, "Finance events into inventory"): a posted
 * invoice delivers its product lines, a posted bill receives them, a posted credit note returns
 * goods to the warehouse its invoice's line left from, a vendor's credit note (`bill_credit_note`)
 * sends goods back out of the warehouse its bill's line was received into. Finance owns the documents; inventory owns
 * the stock. Finance never writes inventory's ledger: each post publishes one feed document (the
 * shared ordered feed, as inventory's journal feed is published the other way) and inventory pulls
 * `stock_documents_since` in the background, writing each line's movement under an id derived from
 * (document, line) — so a crash, a retry or two pulls at once move stock once.
 *
 * No negative stock: an invoice's delivery (or a vendor credit note's return) must not take an item below zero (unless the item
 * allows it), and the post must learn that before anything is posted. A check alone leaves a
 * window (ten posts of the last unit at once would all see it), so the post's hold step reserves
 * the lines' quantities in inventory under the invoice's id — one compare-and-set per balance
 * there, through the one narrow write a service may make (inventory's `holdStockForDocument`, for
 * finance's service assertion only) — before the number is taken. A refusal ends the post undone
 * (409 `conflict` naming the line's pointer `/lines/<i>/quantity` in its sentence: CONTRACT answers `field` for invalid_input only); a post refused later releases the hold; the
 * delivery of the posted invoice takes the hold as its own reservation.
 */

/** JSON Schema of a line's warehouse (inventory's warehouse id; absent: the workspace's default warehouse). */
export const WAREHOUSE_ID_SCHEMA = {
  type: 'string', pattern: '^wh_[A-Za-z0-9_-]{1,40}$',
  description: 'For a product item: the inventory warehouse the goods leave (invoice) or enter (bill). Default: the workspace\'s default warehouse (its first). Refused on lines that are not of a product item.',
} as const;

/** One line of a posted document that moves stock. */
export interface StockLine {
  /** The line's index in its document: with the document, what names its movement. */
  line: number;
  item_id: string;
  /** Null: the workspace's default warehouse. */
  warehouse_id: string | null;
  quantity: number;
  /** A bill: the line's net amount (after its discount, before VAT), the value received. */
  value?: number;
  /** A credit note: the invoice line it returns. */
  invoice_line?: number;
  /** A vendor's credit note: the bill line it sends back (`value`: the note line's net amount, what it takes off 1435). */
  bill_line?: number;
}

/** What moves stock when a document is posted: its lines of product items, and which way. */
export interface StockDocument {
  kind: 'invoice' | 'bill' | 'credit_note' | 'bill_credit_note';
  id: string;
  /** The invoice a credit note returns goods of; the bill a vendor's credit note sends goods back of. */
  credit_of?: string | null;
  date: string;
  currency: string;
  lines: StockLine[];
}

/** A feed document: one per posted document that moves stock (`_id` = `sd_<document id>`). */
export interface StockFeedDoc extends OrderedFeedDoc, StockDocument {
  document_id: string;
  created_at: Date;
}

const feedSchema = new Schema<StockFeedDoc>({
  _id: { type: String, required: true }, workspace: { type: String, required: true }, document_id: String, kind: String, id: String, credit_of: String,
  date: String, currency: String, lines: Schema.Types.Mixed, created_at: Date, ...ORDERED_FEED_FIELDS,
}, { versionKey: false });
feedSchema.index({ seq_key: 1 }, { unique: true, sparse: true });

/** The feed collection (`stock_documents`). */
export function stockDocuments(db: Connection): Model<StockFeedDoc> {
  return modelOn<StockFeedDoc>(db, 'StockDocument', feedSchema, 'stock_documents');
}

/** The order inventory reads the posted documents in (heads in `stock_documents_heads`). */
export const stockDocumentsFeed = new OrderedFeed<StockFeedDoc>(stockDocuments, 'stock_documents_heads', 'stock_documents_since');

/**
 * Writes a posted document's feed document (once: a rerun finds it) and gives it its place. A step
 * of the post after the document is posted: a post killed before it is finished by the sweep.
 */
export async function publishStockDocument(ctx: OperationContext, doc: StockDocument): Promise<void> {
  if (!doc.lines.length) return;
  const feed = stockDocuments(ctx.db);
  const _id = `sd_${doc.id}`;
  if (!(await feed.exists({ _id }))) {
    await feed.create({ ...doc, _id, workspace: ctx.workspace, document_id: doc.id, created_at: ctx.now })
      .catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  }
  await stockDocumentsFeed.publish(ctx.db, ctx.workspace, _id);
}

/**
 * records.list `stock_documents_since` (a feed, service to service: inventory's pull): the posted
 * documents that move stock after the cursor, in the order they were posted (`seq`), each
 * `{id, kind, credit_of, date, currency, lines, seq, published_at}` (`published_at`: when this
 * feed document was written — inventory moves nothing published before its first warehouse);
 * fewer than `limit` sequenced rows: caught up.
 */
export const stockDocumentsSinceSource: SourceReader = async (q, ctx) => {
  const page = await stockDocumentsFeed.since(ctx.db, ctx.workspace, q.cursor, clampLimit(q.limit));
  const rows = page.docs.map((d) => ({ id: d.document_id, kind: d.kind, credit_of: d.credit_of ?? null, date: d.date, currency: d.currency, lines: d.lines, seq: d.seq ?? null, published_at: d.created_at ? new Date(d.created_at).toISOString() : null }));
  return { rows, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
};

/** What inventory answers a hold: held (or nothing to hold: the workspace keeps no stock), or the line refused. */
interface HoldAnswer { held: boolean; refused?: { line: number; message: string } | null }

/** The graph of a post run from a call (the sweep has none). */
function graphOf(ctx: OperationContext): PeerGraph | undefined {
  return (ctx as OperationContext & { graph?: PeerGraph }).graph;
}

/**
 * Reserves the product lines of an invoice (or of a vendor's credit note: goods back to the
 * vendor) in inventory under its id, all or none (see the top of this file): a line short of free stock is 409 `conflict` at `/lines/<i>/quantity`. Inventory not
 * configured in this deployment: no stock is kept, nothing to hold. Not answering: `unavailable`.
 * A post the sweep finishes (no caller, no graph) whose hold was never made cannot check the stock:
 * refused, so the sweep never posts a delivery nobody checked.
 */
export async function holdStock(ctx: OperationContext, doc: StockDocument): Promise<void> {
  if (!doc.lines.length) return;
  const graph = graphOf(ctx);
  // A call without peers: this deployment keeps no stock. The sweep (no caller): see above.
  if (!graph && 'principal' in ctx) return;
  const what = doc.kind === 'invoice' ? 'Invoice' : 'The credit note';
  if (!graph) throw new CuadraError('conflict', `${what} ${doc.id} was left half-posted before its stock was checked; nothing was posted. ${doc.kind === 'invoice' ? 'Post' : 'Record'} it again.`);
  const creditOf = doc.kind === 'bill_credit_note' ? (doc.credit_of ?? null) : null;
  let answer: HoldAnswer;
  try {
    const lines = doc.lines.map(({ line, item_id, warehouse_id, quantity, bill_line }) => ({ line, item_id, warehouse_id, quantity, ...(bill_line !== undefined ? { bill_line } : {}) }));
    const data = await graph('inventory', 'mutation($d: ID!, $l: JSON!, $c: ID) { holdStockForDocument(document: $d, lines: $l, creditOf: $c) }', { d: doc.id, l: lines, c: creditOf });
    answer = data.holdStockForDocument as HoldAnswer;
  } catch (err) {
    // Not configured here: this deployment keeps no stock.
    if (err instanceof CuadraError && /not configured/.test(err.message)) return;
    throw new CuadraError('unavailable', `The inventory service did not answer, so the stock of ${doc.kind === 'invoice' ? 'this invoice' : 'the goods this credit note sends back'} could not be checked; nothing was posted. Try again.`, { beforeAnyEffect: true });
  }
  // CONTRACT: `field` is answered for invalid_input only; the line's pointer is named in the sentence (and kept on the error).
  if (answer?.refused) throw new CuadraError('conflict', `Line ${answer.refused.line} (/lines/${answer.refused.line}/quantity): ${answer.refused.message}`, { field: `/lines/${answer.refused.line}/quantity` });
}

/** Gives back what {@link holdStock} reserved for a document whose post was refused (idempotent; best effort: the caller's refusal stands). */
export async function releaseStock(ctx: OperationContext, documentId: string): Promise<void> {
  const graph = graphOf(ctx);
  if (!graph) return;
  await graph('inventory', 'mutation($d: ID!) { releaseStockForDocument(document: $d) }', { d: documentId }).catch(() => undefined);
}

/**
 * What a document would move in inventory, read only (the dry run of `invoices.post`, of a
 * credit note, of `bills.credit_note`): each product line's movement as inventory values it (item,
 * warehouse, quantity, the value the goods move at — a delivery at its cost, a vendor's return at
 * the note's price with the 6135 difference — and the movement's own journal lines), as
 * `stock_movements` inserts. Goods no longer there: the refusal the hold would give (409 at the
 * line). Inventory not configured here: nothing moves. Not answering: `unavailable`.
 */
export async function previewStock(ctx: Pick<ToolContext, 'workspace'> & { graph?: PeerGraph }, doc: StockDocument): Promise<{ source: string; id: string; op: 'insert'; after: Record<string, unknown> }[]> {
  const graph = ctx.graph;
  if (!doc.lines.length || !graph) return [];
  let answer: { movements: ({ line: number } & Record<string, unknown>)[]; refused: HoldAnswer['refused'] };
  try {
    const data = await graph('inventory', 'query($d: ID!, $k: String!, $c: ID, $t: String!, $l: JSON!) { previewStockForDocument(document: $d, kind: $k, creditOf: $c, date: $t, lines: $l) }',
      { d: doc.id, k: doc.kind, c: doc.credit_of ?? null, t: doc.date, l: doc.lines });
    answer = data.previewStockForDocument as typeof answer;
  } catch (err) {
    if (err instanceof CuadraError && /not configured/.test(err.message)) return [];
    throw new CuadraError('unavailable', 'The inventory service did not answer, so what the goods of this document would do in stock could not be shown; nothing was done. Try again.', { beforeAnyEffect: true });
  }
  if (answer?.refused) throw new CuadraError('conflict', `Line ${answer.refused.line} (/lines/${answer.refused.line}/quantity): ${answer.refused.message}`, { field: `/lines/${answer.refused.line}/quantity` });
  return answer.movements.map(({ line, ...after }) => ({ source: 'stock_movements', id: `${doc.id}:${line}`, op: 'insert' as const, after: { line, source: { kind: doc.kind, id: doc.id, line }, ...after } }));
}
