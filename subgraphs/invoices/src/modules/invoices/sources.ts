import { containsText, CuadraError, listNewestFirst, type ListAnswer, type SeriesOptions } from '@cuadra/shared';
import type { Connection, Model } from 'mongoose';
import { invoices, type InvoiceDoc } from './model.ts';
import { items, type ItemDoc } from '../items/model.ts';
import { rollupId, rollups } from '../../lib/rollup.ts';
import { payments, type PaymentDoc } from '../payments/model.ts';
import { recurringInvoices } from './recurring.ts';
import { salesDocuments, salesSeries, type SalesDocument } from '../../lib/sales-document.ts';
import { addDays, daysBetween, localDate } from '../../lib/money.ts';

import type { RecordsQuery } from '@cuadra/shared';
import { journalEntries, journalView, type JournalEntryDoc } from '../../accounting/journal.ts';
export type { RecordsQuery };

/** The sources this subgraph answers for the composite `records.list`, so far. */
export const INVOICES_SOURCES = ['invoices', 'payments', 'items', 'quotes', 'sales_orders', 'journal_entries'] as const;

interface SourceSpec {
  model: (db: Connection) => Model<any>;
  /** The paging series when the collection holds several (quotes and sales orders). */
  series?: SeriesOptions;
  /** The lower-cased text column searched. */
  searchField: string;
  kinds?: Record<string, Record<string, unknown>>;
  /** Status values of the source's own vocabulary; null = status is ignored. */
  statuses: readonly string[] | null;
  row: (doc: any) => Record<string, unknown>;
}

const invoiceRow = (i: InvoiceDoc) => ({
  id: i._id, kind: i.kind, number: i.number, status: i.status, customer_id: i.customer_id, customer_name: i.customer.name, currency: i.currency,
  issue_date: i.issue_date, due_date: i.due_date, total: i.total, amount_due: i.amount_due, balance: i.balance,
  authority_status: i.authority?.status ?? null,
});
const paymentRow = (p: PaymentDoc) => ({
  id: p._id, direction: p.direction, status: p.status, customer_id: p.customer_id, customer_name: p.customer_name, currency: p.currency,
  amount: p.amount, applied: p.applied, unapplied: p.unapplied, date: p.date, reference: p.reference,
});
const itemRow = (i: ItemDoc) => ({ id: i._id, kind: i.kind, name: i.name, sku: i.sku, unit: i.unit, price: i.price, currency: i.currency, tax_rate_ppm: i.tax_rate_ppm, status: i.status });
const salesRow = (d: SalesDocument) => ({
  id: d._id, kind: d.kind, status: d.status, customer_id: d.customer_id, customer_name: d.customer.name, currency: d.currency,
  issue_date: d.issue_date, valid_until: d.valid_until, total: d.total, converted_to: d.converted_to,
});

const journalRow = (e: JournalEntryDoc): Record<string, unknown> => journalView(e);

const SOURCES: Record<(typeof INVOICES_SOURCES)[number], SourceSpec> = {
  invoices: {
    model: invoices, searchField: 'search_lc', kinds: { invoice: { kind: 'invoice' }, credit_note: { kind: 'credit_note' } },
    statuses: ['draft', 'posted', 'partially_paid', 'paid', 'cancelled'], row: invoiceRow,
  },
  // Payments ignore status (specification §2.5); kind is the direction.
  payments: { model: payments, searchField: 'search_lc', kinds: { incoming: { direction: 'incoming' }, outgoing: { direction: 'outgoing' } }, statuses: null, row: paymentRow },
  items: { model: items, searchField: 'name_lc', kinds: { product: { kind: 'product' }, service: { kind: 'service' } }, statuses: ['active', 'archived'], row: itemRow },
  quotes: { model: salesDocuments, series: salesSeries('quote'), searchField: 'search_lc', statuses: ['draft', 'sent', 'accepted', 'declined', 'converted'], row: salesRow },
  sales_orders: { model: salesDocuments, series: salesSeries('sales_order'), searchField: 'search_lc', statuses: ['open', 'invoiced'], row: salesRow },
  // Journal entries take no kind and no status (specification §2.5); search the memo.
  journal_entries: { model: journalEntries, searchField: 'memo', statuses: null, row: journalRow },
};

/** Sources whose unfiltered-by-search totals come from the count rollups (kept on write). */
const ROLLUP_COUNTED = new Set(['invoices', 'payments']);

/** Whether a stored document matches equality fields (dotted paths allowed). */
function matchesFields(doc: Record<string, unknown>, fields: Record<string, unknown>): boolean {
  for (const [key, want] of Object.entries(fields)) {
    const have = key.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], doc);
    if (have !== want) return false;
  }
  return true;
}

/**
 * The number of invoices or payments matching kind/status, from the all-currency count rollup
 * (no collection count: the store here scans for it). Null for other sources.
 */
async function totalFromRollups(db: Connection, workspace: string, q: RecordsQuery): Promise<number | null> {
  if (!ROLLUP_COUNTED.has(q.source)) return null;
  const all = await rollups(db).findById(rollupId(workspace, '*', 'a', 'all')).lean();
  const v = all?.v ?? {};
  if (q.source === 'payments') return q.kind === 'outgoing' ? 0 : (v.payments ?? 0);
  const statuses = ['draft', 'posted', 'partially_paid', 'paid', 'cancelled'];
  const invoicesCount = q.kind === 'credit_note' ? 0 : (q.status ? (v[`status_${q.status}`] ?? 0) : statuses.reduce((s, st) => s + (v[`status_${st}`] ?? 0), 0));
  const notesCount = q.kind === 'invoice' || (q.status && q.status !== 'posted') ? 0 : (v.credit_notes ?? 0);
  return invoicesCount + notesCount;
}

/**
 * Answers `records.list` for one of this subgraph's sources: `{source, rows, total?, next_cursor?}`,
 * newest first, one page at a time by position (CONTRACT §9). `kind` and `status` use the
 * source's vocabulary (an unknown value is `invalid_input`), `search` is a case-insensitive
 * substring of the source's text column, `ref` is not used by these sources. `total` comes from
 * counts kept on write: for invoices and payments the count rollup (also by kind and status,
 * not with `search`); for the other sources the list counter, without filters only.
 */
export async function invoicesRecords(db: Connection, workspace: string, q: RecordsQuery): Promise<{ source: string } & ListAnswer<Record<string, unknown>>> {
  if (!(INVOICES_SOURCES as readonly string[]).includes(q.source)) {
    throw new CuadraError('invalid_input', `The invoices subgraph does not answer the source "${q.source}".`, { field: '/source' });
  }
  const spec = SOURCES[q.source as (typeof INVOICES_SOURCES)[number]];
  const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
  const fields: Record<string, unknown> = {};
  if (q.kind) {
    const k = spec.kinds?.[q.kind];
    if (!k) throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of ${q.source}.`, { field: '/kind' });
    Object.assign(fields, k);
  }
  if (q.status && spec.statuses) {
    if (!spec.statuses.includes(q.status)) throw new CuadraError('invalid_input', `"${q.status}" is not a status of ${q.source} (${spec.statuses.join(', ')}).`, { field: '/status' });
    fields.status = q.status;
  }
  const text = q.search?.toLowerCase();
  const filtered = Object.keys(fields).length > 0 || Boolean(text);
  const match = filtered ? (d: Record<string, unknown>) => matchesFields(d, fields) && (!text || containsText(d[spec.searchField], text)) : undefined;
  const page = await listNewestFirst<Record<string, unknown>, Record<string, unknown>>(spec.model(db), { workspace, ...spec.series, cursor: q.cursor, limit, match }, spec.row);
  if (ROLLUP_COUNTED.has(q.source) && !text) page.total = (await totalFromRollups(db, workspace, q)) ?? undefined;
  return { source: q.source, ...page };
}

/** One entry of the agenda's `receivables` lane: an invoice falling due. */
export interface AgendaEntry {
  date: string;
  kind: 'deadline';
  source: 'receivables';
  title: string;
  status: 'open' | 'overdue';
  ref: { invoice_id: string; number: string | null; customer_id: string };
  amount: number;
  currency: string;
}

/**
 * The `receivables` agenda lane (specification §2.6): open invoices falling due in the window,
 * and (with `overdue`, default true) those that fell due up to 90 days before it and are still open.
 */
export async function receivablesAgenda(db: Connection, workspace: string, a: { from?: string; to?: string; days?: number; limit?: number; overdue?: boolean }, now = new Date()): Promise<AgendaEntry[]> {
  const from = a.from ?? localDate(now);
  const to = a.to ?? addDays(from, (a.days ?? 30) - 1);
  if (to < from || daysBetween(from, to) > 400) throw new CuadraError('invalid_input', 'The agenda window runs forwards and is at most 400 days.', { field: '/to' });
  const limit = Math.min(Math.max(Math.trunc(a.limit ?? 100), 1), 400);
  const start = a.overdue === false ? from : addDays(from, -90);
  const open = await invoices(db).find(
    { workspace, kind: 'invoice', status: { $in: ['posted', 'partially_paid'] }, due_date: { $gte: start, $lte: to } },
    { number: 1, customer_id: 1, customer: 1, due_date: 1, balance: 1, currency: 1 },
  ).sort({ due_date: 1, _id: 1 }).limit(limit).lean();
  const today = localDate(now);
  return open.map((i) => ({
    date: i.due_date, kind: 'deadline', source: 'receivables', title: `${i.number} — ${i.customer.name}`,
    status: i.due_date < today ? 'overdue' : 'open', ref: { invoice_id: i._id, number: i.number, customer_id: i.customer_id }, amount: i.balance, currency: i.currency,
  }));
}

/**
 * The `recurring` agenda lane for invoices: the next issue date of each active recurring
 * schedule falling in the window.
 */
export async function recurringAgenda(db: Connection, workspace: string, a: { from?: string; to?: string; days?: number; limit?: number }, now = new Date()) {
  const from = a.from ?? localDate(now);
  const to = a.to ?? addDays(from, (a.days ?? 30) - 1);
  if (to < from || daysBetween(from, to) > 400) throw new CuadraError('invalid_input', 'The agenda window runs forwards and is at most 400 days.', { field: '/to' });
  const limit = Math.min(Math.max(Math.trunc(a.limit ?? 100), 1), 400);
  const rows = await recurringInvoices(db).find({ workspace, status: 'active', next_date: { $gte: from, $lte: to } }).sort({ next_date: 1, _id: 1 }).limit(limit).lean();
  return rows.map((r) => ({
    date: r.next_date, kind: 'reminder' as const, source: 'recurring' as const, title: `Factura recurrente — ${r.customer.name}`,
    status: 'open' as const, ref: { recurring_id: r._id, customer_id: r.customer_id }, currency: r.currency,
  }));
}
