import { addPositions, createPositioned, CuadraError, searchIn, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { InvoiceDoc } from '../modules/invoices/model.ts';
import { ACCOUNTS, withholdingAccount } from './accounts.ts';
import { assertPeriodOpen } from './periods.ts';
import { pendingChanges } from '../lib/rollup.ts';
import { applyRollupIntent, markIntent, rollupIntent, type RollupDelta, type RollupIntent } from '../lib/rollups.ts';

/** One line of a journal entry: a debit or a credit (the other is 0), in cents. */
export interface JournalLine {
  account: string;
  name: string;
  debit: number;
  credit: number;
  party_id: string | null;
  /** Dimension tags of the line (`{cost_center: 'ventas'}`): manual entries, and invoices' and bills' lines carried over. */
  tags?: Record<string, string>;
}

/** What caused an entry: a document's posting, a manual entry, its reversal, or a year-end close. */
export const JOURNAL_SOURCE_KINDS = ['invoice', 'credit_note', 'debit_note', 'payment', 'bill', 'bill_payment', 'bill_credit_note', 'manual', 'reversal', 'closing', 'bank_transaction', 'payroll', 'payroll_reversal'] as const;
export type JournalSourceKind = (typeof JOURNAL_SOURCE_KINDS)[number];

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
  source: { kind: JournalSourceKind; id: string };
  lines: JournalLine[];
  created_at: Date;
  /** The ledger rollup intent (per account and day/month) until it is applied (lib/rollups.ts). */
  pending_rollups?: RollupIntent[];
  pending_count?: number;
  /**
   * Which ledger counters the entry is counted in ({@link LEDGER_ROLLUP_VERSION}): absent on
   * entries written before the ledger rollups existed (none), or written with version 1 (`d`/`c`
   * only, as `pending_rollups` shows); accounting/backfill.ts brings older entries up to date.
   */
  rolled?: number;
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
    pending_rollups: { type: Schema.Types.Mixed, default: [] },
    pending_count: { type: Number, default: 0 },
    rolled: { type: Number },
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

/** A line's tags as one comparable string ('' without tags). */
export function tagsKey(tags: Record<string, string> | undefined): string {
  return tags ? Object.keys(tags).sort().map((k) => `${k}=${tags[k]}`).join('&') : '';
}

/** Drops zero lines and merges lines of the same account, side and tags. */
function tidy(lines: JournalLine[]): JournalLine[] {
  const out: JournalLine[] = [];
  for (const l of lines) {
    if (l.debit === 0 && l.credit === 0) continue;
    const same = out.find((o) => o.account === l.account && o.party_id === l.party_id && (o.debit > 0) === (l.debit > 0) && tagsKey(o.tags) === tagsKey(l.tags));
    if (same) {
      same.debit += l.debit;
      same.credit += l.credit;
    } else out.push({ ...l });
  }
  return out;
}

/** Withholding amounts per account of a document: retención en la fuente in its concept's 135515 auxiliary. */
function withholdingLines(doc: InvoiceDoc, side: 'debit' | 'credit'): JournalLine[] {
  return doc.withholdings.map((w) => {
    const account = withholdingAccount(w);
    return side === 'debit' ? line(account, w.amount, 0) : line(account, 0, w.amount);
  });
}

/**
 * The document's taxable base on `account`, one line per set of line tags (the tagged lines'
 * subtotals, so profitability reads each tag's income) and one untagged line for the rest: Σ =
 * the document's subtotal.
 */
function byTags(doc: InvoiceDoc, account: { code: string; name: string }, side: 'debit' | 'credit'): JournalLine[] {
  const out: JournalLine[] = [];
  let tagged = 0;
  for (const l of doc.lines) {
    if (!l.tags || Object.keys(l.tags).length === 0) continue;
    out.push({ ...(side === 'debit' ? line(account, l.subtotal, 0) : line(account, 0, l.subtotal)), tags: { ...l.tags } });
    tagged += l.subtotal;
  }
  const rest = doc.subtotal - tagged;
  out.push(side === 'debit' ? line(account, rest, 0) : line(account, 0, rest));
  return out;
}

/**
 * The document's own allowances and charges (lib/line-model.ts): a charge (freight, handling) is
 * income like the lines, Cr 413595; an allowance (a discount on the whole document) is booked as a
 * discount on sales, Dr 417505. A credit note that takes them back books the mirror.
 */
function allowanceChargeLines(doc: InvoiceDoc, reversed: boolean): JournalLine[] {
  return (doc.allowance_charges ?? []).map((a) => {
    const debit = a.charge === reversed;
    const account = a.charge && !reversed ? ACCOUNTS.revenue : ACCOUNTS.salesReturns;
    return debit ? line(account, a.amount, 0) : line(account, 0, a.amount);
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
    ...byTags(doc, ACCOUNTS.revenue, 'credit'),
    ...allowanceChargeLines(doc, false),
    line(ACCOUNTS.vatPayable, 0, doc.tax_total),
  ]);
}

/** The income account a debit-note line is credited to: its own, else sales (413595). */
export function debitLineAccount(l: Pick<InvoiceDoc['lines'][number], 'account'>): string {
  return l.account ?? ACCOUNTS.revenue.code;
}

/**
 * Posting a debit note (DIAN type 92: interest, expenses, a higher value): more owed on the same
 * terms as an invoice. Dr 130505 receivables the amount due (and withholding assets, if any);
 * Cr each line's income account its subtotal — 421005 for interest (financial income, not a sale),
 * 413595 for a change of value, the line's own when it names one; Cr 240805 VAT payable the tax.
 * `names` are the chart's names of the lines' accounts.
 */
export function debitNoteEntryLines(doc: InvoiceDoc, names: Readonly<Record<string, string>> = {}): JournalLine[] {
  const income = doc.lines.map((l) => {
    const code = debitLineAccount(l);
    const name = code === ACCOUNTS.revenue.code ? ACCOUNTS.revenue.name : names[code] ?? code;
    return { ...line({ code, name }, 0, l.subtotal), ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}) };
  });
  return tidy([
    line(ACCOUNTS.receivables, doc.amount_due, 0, doc.customer_id),
    ...withholdingLines(doc, 'debit'),
    ...income,
    line(ACCOUNTS.vatPayable, 0, doc.tax_total),
  ]);
}

/**
 * What a document counts as sales (PUC 41): a debit note's lines booked to 41; an invoice's or credit
 * note's lines, less the document's allowances (417505) plus its charges (413595) — what the journal
 * books to income.
 */
export function salesOf(doc: InvoiceDoc): number {
  if (doc.kind === 'debit_note') return doc.lines.reduce((s, l) => s + (debitLineAccount(l).startsWith('41') ? l.subtotal : 0), 0);
  return doc.subtotal - (doc.allowance_total ?? 0) + (doc.charge_total ?? 0);
}

/**
 * Posting a credit note: the mirror of the invoice. What the customer no longer owes comes off
 * the receivable up to the invoice's open balance (`applied`); any rest is owed back to the
 * customer (customer credit, 280505).
 */
export function creditNoteEntryLines(doc: InvoiceDoc, applied: number): JournalLine[] {
  return tidy([
    ...byTags(doc, ACCOUNTS.salesReturns, 'debit'),
    ...allowanceChargeLines(doc, true),
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

/** The ledger rollups' currency namespace: per-account counters never mix with the receivables' (rollups.ts). */
export function ledgerCurrency(currency: string): string {
  return `gl:${currency}`;
}

/** The namespace of per-account line counts, all currencies together (whether an account was ever used). */
export const LEDGER_USAGE = 'gl:*';

/**
 * The version of the ledger counters {@link ledgerDeltas} keeps: 1 = `d`/`c`/`k`/`n` per account;
 * 2 = also profitability per tag (`pi`/`pe`) and the cash flow by counter-account (`x`).
 */
export const LEDGER_ROLLUP_VERSION = 2;

/** Whether a code is cash or a bank (PUC 11, Disponible: 1105 caja, 1110 bancos, 1120 cuentas de ahorro…). */
export function isCash(code: string): boolean {
  return code.startsWith('11');
}

/**
 * The counters of version 1: per account, `d<code>` += debits and `c<code>` += credits; a closing
 * entry also counts under `kd<code>`/`kc<code>` so the income statement can leave the year-end
 * close out.
 */
function baseCounters(entry: Pick<JournalEntryDoc, 'source' | 'lines'>, add: (key: string, v: number) => void): void {
  for (const l of entry.lines) {
    add(`d${l.account}`, l.debit);
    add(`c${l.account}`, l.credit);
    if (entry.source.kind === 'closing') {
      add(`kd${l.account}`, l.debit);
      add(`kc${l.account}`, l.credit);
    }
  }
}

/**
 * The counters version 2 added:
 * - profitability per tag: for each tagged line on an income (class 4) account, `pi<dimension>~<tag>`
 *   += credit − debit; on a cost or expense account (5, 6, 7), `pe<dimension>~<tag>` += debit − credit
 *   (never the year-end close's lines);
 * - the cash flow, direct method: in an entry that moves cash or bank accounts (PUC 11), each
 *   other line's credit − debit is cash that came in through that counter-account: `x<code>`.
 *   Σ x over an entry = the entry's net movement of 11xx (it balances), so Σ x over a window is
 *   the change in cash; transfers between cash accounts leave no counter-account and count 0.
 */
function versionTwoCounters(entry: Pick<JournalEntryDoc, 'source' | 'lines'>, add: (key: string, v: number) => void): void {
  if (entry.source.kind !== 'closing') {
    for (const l of entry.lines) {
      if (!l.tags || !['4', '5', '6', '7'].includes(l.account[0])) continue;
      for (const [dim, tag] of Object.entries(l.tags)) {
        if (l.account[0] === '4') add(`pi${dim}~${tag}`, l.credit - l.debit);
        else add(`pe${dim}~${tag}`, l.debit - l.credit);
      }
    }
  }
  if (entry.lines.some((l) => isCash(l.account))) {
    for (const l of entry.lines) if (!isCash(l.account)) add(`x${l.account}`, l.credit - l.debit);
  }
}

/**
 * The rollup change of an entry, on the entry's day (and so its month and all time), under the
 * ledger namespace of its currency: the counters of the versions after `since` (0: all of them).
 * `n<code>` (version 1) counts lines per account across currencies.
 */
export function ledgerDeltas(entry: Pick<JournalEntryDoc, 'date' | 'currency' | 'source' | 'lines'>, since = 0): RollupDelta[] {
  const inc: Record<string, number> = {};
  const used: Record<string, number> = {};
  const add = (key: string, v: number) => { if (v) inc[key] = (inc[key] ?? 0) + v; };
  if (since < 1) {
    baseCounters(entry, add);
    for (const l of entry.lines) used[`n${l.account}`] = (used[`n${l.account}`] ?? 0) + 1;
  }
  if (since < 2) versionTwoCounters(entry, add);
  return [{ day: entry.date, currency: ledgerCurrency(entry.currency), inc }, { day: entry.date, currency: LEDGER_USAGE, inc: used }];
}

/**
 * Writes an entry once: a second write of the same `_id` (a retry, or a writer racing another)
 * writes nothing and returns once the entry is counted in the rollups ({@link settleJournalEntry}),
 * so whoever reads the statements after either write sees it. Refuses an
 * unbalanced entry, and (for an entry not yet written) one dated in a closed period: this is the
 * one place every posting path goes through (accounting/periods.ts). The entry carries its
 * ledger rollup intent, applied right after (and by the repair if the process dies first), so
 * the statements read per-account rollups, never the journal.
 */
export async function writeJournalEntry(db: Connection, entry: JournalEntryDoc, options: { closingEntry?: boolean; settleWaitMs?: number } = {}): Promise<void> {
  if (!balances(entry.lines)) throw new Error(`Journal entry ${entry._id} does not balance.`);
  const model = journalEntries(db);
  if (await model.exists({ _id: entry._id })) return settleJournalEntry(db, entry._id, options.settleWaitMs);
  const intent = rollupIntent(ledgerDeltas(entry), entry.created_at);
  // The marker is written before the period is read: a close that starts meanwhile then sees
  // this entry in flight and waits for it (ledger.ts settleLedger) instead of missing it.
  await markIntent(db, entry.workspace, model, entry._id, intent);
  try {
    await assertPeriodOpen(db, entry.workspace, entry.date, options);
  } catch (err) {
    if (intent) await pendingChanges(db).deleteOne({ _id: intent.id });
    throw err;
  }
  try {
    await createPositioned(model, { ...entry, pending_rollups: intent ? [intent] : [], pending_count: intent ? 1 : 0, rolled: LEDGER_ROLLUP_VERSION });
  } catch (err) {
    if (intent) await pendingChanges(db).deleteOne({ _id: intent.id });
    if ((err as { code?: number }).code !== 11000) throw err;
    return settleJournalEntry(db, entry._id, options.settleWaitMs);
  }
  await applyRollupIntent(db, model, entry._id, entry.workspace, intent);
}

/** How long a second writer waits for the first to count an entry (ms). */
export const SETTLE_WAIT_MS = 5_000;

/**
 * Waits until a written entry's rollup intent is applied by the writer that holds it, so that who
 * wrote it a second time (a retry, a racing pull) reads statements that count it. It waits rather
 * than applying the intent itself: once the holder finishes, the marks that make a second
 * application harmless are forgotten (lib/rollups.ts applyRollupIntent), so two appliers could
 * count it twice. A holder that died leaves the intent to the repair (after REPAIR_AFTER_MS);
 * after `waitMs` ({@link SETTLE_WAIT_MS}) the second writer gives up with `conflict`, having
 * applied nothing — answering would show statements that do not count the entry yet.
 */
export async function settleJournalEntry(db: Connection, id: string, waitMs: number = SETTLE_WAIT_MS): Promise<void> {
  const model = journalEntries(db);
  const until = Date.now() + waitMs;
  for (;;) {
    const doc = await model.findById(id, { pending_count: 1 }).lean<{ pending_count?: number }>();
    if (!doc?.pending_count) return;
    if (Date.now() >= until) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new CuadraError('conflict', `The journal entry ${id} is still being counted by the call that wrote it; nothing was done. Retry in a moment.`);
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
      properties: { kind: { enum: JOURNAL_SOURCE_KINDS }, id: { type: 'string' } },
    },
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['account', 'name', 'debit', 'credit', 'party_id'],
        properties: {
          account: { type: 'string' }, name: { type: 'string' }, debit: { type: 'integer' }, credit: { type: 'integer' }, party_id: { type: ['string', 'null'] },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
        },
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
