import { addPositions, searchIn, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { RollupDelta, RollupIntent } from './rollup-intents.ts';
import { LedgerCounter } from './rollup-store.ts';

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

/**
 * What caused an entry: `kind` is a journal source kind a module declares in its manifest
 * (`journalSources`: `invoice`, `bill_payment`, `payroll`…; books/sources.ts), or `reversal`,
 * which the books own; `id` names the document (or, for a reversal, the entry) behind it.
 */
export interface EntrySource {
  kind: string;
  id: string;
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
  source: EntrySource;
  lines: JournalLine[];
  created_at: Date;
  /** The ledger rollup intent (per account and day/month) until it is applied (books/rollup-intents.ts). */
  pending_rollups?: RollupIntent[];
  pending_count?: number;
  /**
   * Which ledger counters the entry is counted in ({@link LEDGER_ROLLUP_VERSION}): absent on
   * entries written before the ledger rollups existed (none), or written with version 1 (`d`/`c`
   * only, as `pending_rollups` shows); books/backfill.ts brings older entries up to date.
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

/** A line's tags as one comparable string ('' without tags). */
export function tagsKey(tags: Record<string, string> | undefined): string {
  return tags ? Object.keys(tags).sort().map((k) => `${k}=${tags[k]}`).join('&') : '';
}

/** Drops zero lines and merges lines of the same account, side and tags. */
export function tidyLines(lines: JournalLine[]): JournalLine[] {
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
 * The counters of version 1 ({@link LedgerCounter}): per account, debits and credits; a closing
 * entry also counts under the closing counters so the income statement can leave the year-end
 * close out.
 */
function baseCounters(entry: Pick<JournalEntryDoc, 'source' | 'lines'>, add: (key: string, v: number) => void): void {
  for (const l of entry.lines) {
    add(LedgerCounter.debit(l.account), l.debit);
    add(LedgerCounter.credit(l.account), l.credit);
    if (entry.source.kind === 'closing') {
      add(LedgerCounter.closingDebit(l.account), l.debit);
      add(LedgerCounter.closingCredit(l.account), l.credit);
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

/** JSON Schema of an entry's lines as every view shows them (posted entries, manual drafts). */
export const JOURNAL_LINES_VIEW_SCHEMA = {
  type: 'array',
  items: {
    type: 'object', additionalProperties: false, required: ['account', 'name', 'debit', 'credit', 'party_id'],
    properties: {
      account: { type: 'string' }, name: { type: 'string' }, debit: { type: 'integer' }, credit: { type: 'integer' }, party_id: { type: ['string', 'null'] },
      tags: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
} as const;

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
      properties: { kind: { type: 'string', description: 'A journal source kind declared by the module that posted the entry (invoice, credit_note, debit_note, payment, bill, bill_payment, bill_credit_note, manual, reversal, closing, bank_transaction, payroll, payroll_reversal, and those of modules added later).' }, id: { type: 'string' } },
    },
    lines: JOURNAL_LINES_VIEW_SCHEMA,
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
