import { addPositions, createPositioned, searchIn, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { InvoiceDoc } from '../modules/invoices/model.ts';
import { ACCOUNTS, withholdingAccount } from './accounts.ts';

/** One line of a journal entry: a debit or a credit (the other is 0), in cents. */
export interface JournalLine {
  account: string;
  name: string;
  debit: number;
  credit: number;
  party_id: string | null;
}

/**
 * A journal entry: double entry, Σ debits = Σ credits in its currency. One document carries all
 * its lines (one atomic write). `_id` is derived from the document that caused it (`je_<id>`),
 * so a retried post or payment can never write a second entry.
 */
export interface JournalEntryDoc {
  _id: string;
  workspace: string;
  date: string;
  currency: string;
  memo: string;
  source: { kind: 'invoice' | 'credit_note' | 'payment' | 'bill' | 'bill_payment'; id: string };
  lines: JournalLine[];
  created_at: Date;
}

const journalSchema = new Schema<JournalEntryDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    date: { type: String, required: true },
    currency: { type: String, required: true },
    memo: { type: String, required: true },
    source: { type: Schema.Types.Mixed, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
journalSchema.index({ workspace: 1, date: 1 });
// Read newest first by position, a page at a time (CONTRACT §9 bounded lists).
addPositions(journalSchema);

/** The journal entries collection. */
export function journalEntries(db: Connection): Model<JournalEntryDoc> {
  return modelOn<JournalEntryDoc>(db, 'JournalEntry', journalSchema, 'journal_entries');
}

/** True when the entry balances: Σ debits = Σ credits, no negative amounts, no line both. */
export function balances(lines: readonly JournalLine[]): boolean {
  let debit = 0;
  let credit = 0;
  for (const l of lines) {
    if (l.debit < 0 || l.credit < 0 || (l.debit > 0 && l.credit > 0) || !Number.isInteger(l.debit) || !Number.isInteger(l.credit)) return false;
    debit += l.debit;
    credit += l.credit;
  }
  return debit === credit && debit > 0;
}

function line(account: { code: string; name: string }, debit: number, credit: number, party: string | null = null): JournalLine {
  return { account: account.code, name: account.name, debit, credit, party_id: party };
}

/** Drops zero lines and merges lines of the same account and side. */
function tidy(lines: JournalLine[]): JournalLine[] {
  const out: JournalLine[] = [];
  for (const l of lines) {
    if (l.debit === 0 && l.credit === 0) continue;
    const same = out.find((o) => o.account === l.account && o.party_id === l.party_id && (o.debit > 0) === (l.debit > 0));
    if (same) {
      same.debit += l.debit;
      same.credit += l.credit;
    } else out.push({ ...l });
  }
  return out;
}

/** Withholding amounts per account of a document. */
function withholdingLines(doc: InvoiceDoc, side: 'debit' | 'credit'): JournalLine[] {
  return doc.withholdings.map((w) => {
    const account = withholdingAccount(w.type);
    return side === 'debit' ? line(account, w.amount, 0) : line(account, 0, w.amount);
  });
}

/**
 * Posting an invoice: Dr receivable (what the customer owes) + Dr withholdings (tax credits the
 * customer withheld); Cr revenue (taxable base) + Cr VAT payable.
 */
export function invoiceEntryLines(doc: InvoiceDoc): JournalLine[] {
  return tidy([
    line(ACCOUNTS.receivables, doc.amount_due, 0, doc.customer_id),
    ...withholdingLines(doc, 'debit'),
    line(ACCOUNTS.revenue, 0, doc.subtotal),
    line(ACCOUNTS.vatPayable, 0, doc.tax_total),
  ]);
}

/**
 * Posting a credit note: the mirror of the invoice. What the customer no longer owes comes off
 * the receivable up to the invoice's open balance (`applied`); any rest is owed back to the
 * customer (customer credit, 280505).
 */
export function creditNoteEntryLines(doc: InvoiceDoc, applied: number): JournalLine[] {
  return tidy([
    line(ACCOUNTS.salesReturns, doc.subtotal, 0),
    line(ACCOUNTS.vatPayable, doc.tax_total, 0),
    line(ACCOUNTS.receivables, 0, applied, doc.customer_id),
    line(ACCOUNTS.customerAdvances, 0, doc.amount_due - applied, doc.customer_id),
    ...withholdingLines(doc, 'credit'),
  ]);
}

/** A payment received: Dr bank; Cr receivable for what settled invoices, Cr customer credit for the rest. */
export function paymentEntryLines(amount: number, applied: number, customerId: string): JournalLine[] {
  return tidy([
    line(ACCOUNTS.bank, amount, 0),
    line(ACCOUNTS.receivables, 0, applied, customerId),
    line(ACCOUNTS.customerAdvances, 0, amount - applied, customerId),
  ]);
}

/** Writes an entry once: a second write of the same `_id` (a retry) is a no-op. Refuses an unbalanced entry. */
export async function writeJournalEntry(db: Connection, entry: JournalEntryDoc): Promise<void> {
  if (!balances(entry.lines)) throw new Error(`Journal entry ${entry._id} does not balance.`);
  try {
    await createPositioned(journalEntries(db), entry);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
}

/** JSON Schema of {@link journalView}: what every tool answering a journal entry gives. */
export const JOURNAL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'date', 'currency', 'memo', 'source', 'lines', 'total_debit', 'total_credit'],
  properties: {
    id: { type: 'string' },
    date: { type: 'string', format: 'date' },
    currency: { type: 'string' },
    memo: { type: 'string' },
    source: {
      type: 'object', additionalProperties: false, required: ['kind', 'id'],
      properties: { kind: { enum: ['invoice', 'credit_note', 'payment', 'bill', 'bill_payment'] }, id: { type: 'string' } },
    },
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['account', 'name', 'debit', 'credit', 'party_id'],
        properties: { account: { type: 'string' }, name: { type: 'string' }, debit: { type: 'integer' }, credit: { type: 'integer' }, party_id: { type: ['string', 'null'] } },
      },
    },
    total_debit: { type: 'integer' },
    total_credit: { type: 'integer' },
  },
} as const;

/** Public shape of an entry. */
export function journalView(e: JournalEntryDoc) {
  const debit = e.lines.reduce((s, l) => s + l.debit, 0);
  return { id: e._id, date: e.date, currency: e.currency, memo: e.memo, source: e.source, lines: e.lines, total_debit: debit, total_credit: e.lines.reduce((s, l) => s + l.credit, 0) };
}

/** Whether a journal entry matches a lower-cased search term (its memo): the records source `journal_entries`. */
export const journalMatches = searchIn<JournalEntryDoc>('memo');
