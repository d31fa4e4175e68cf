import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, searchIn, TEXT_SCHEMA as TEXT,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { RollupIntent } from '../../books/rollup-intents.ts';

/**
 * The PUC accounts a bank account may post to: the auxiliaries of 1110 Bancos (national and
 * foreign currency). The same two bills.pay takes, so a bill paid through reconciliation leaves
 * from the account the statement belongs to.
 */
export const BANK_PUC_ACCOUNTS = { '111005': 'Bancos — moneda nacional', '111010': 'Bancos — moneda extranjera' } as const;
export type BankPucAccount = keyof typeof BANK_PUC_ACCOUNTS;
export const BANK_PUC_CODES = Object.keys(BANK_PUC_ACCOUNTS) as BankPucAccount[];

/** A bank account of the workspace: where statements are imported and what its transactions post to. */
export interface BankAccountDoc {
  _id: string;
  workspace: string;
  name: string;
  bank_name: string;
  /** The full number, kept to check that an imported statement is this account's; never shown whole. */
  account_number: string;
  /** `<workspace>|<number, letters and digits only, upper-cased>` under a unique index: one account per number. */
  number_key: string;
  search_lc: string;
  currency: string;
  puc_account: BankPucAccount;
  opening_balance: number;
  opening_date: string;
  created_at: Date;
  updated_at: Date;
}

const accountSchema = new Schema<BankAccountDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    bank_name: { type: String, required: true },
    account_number: { type: String, required: true },
    number_key: { type: String, required: true },
    search_lc: { type: String, required: true },
    currency: { type: String, required: true },
    puc_account: { type: String, required: true },
    opening_balance: { type: Number, required: true },
    opening_date: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
accountSchema.index({ number_key: 1 }, { unique: true });
addPositions(accountSchema);

/** The bank accounts collection (records source `banks`). */
export function bankAccounts(db: Connection): Model<BankAccountDoc> {
  return (db.models.BankAccount as Model<BankAccountDoc> | undefined) ?? db.model<BankAccountDoc>('BankAccount', accountSchema, 'bank_accounts');
}

/** Letters and digits of an account number, upper-cased: how two spellings of one number compare. */
export function normalAccountNumber(number: string): string {
  return [...number.toUpperCase()].filter((c) => (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')).join('');
}

/** `••••1234`: the last four characters of the number, the rest hidden. */
export function maskedNumber(number: string): string {
  const n = normalAccountNumber(number);
  return `••••${n.slice(-4)}`;
}

/** JSON Schema of {@link bankAccountView}. */
export const BANK_ACCOUNT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'bank_name', 'account_number', 'currency', 'puc_account', 'opening_balance', 'opening_date', 'created_at'],
  properties: {
    id: TEXT, name: TEXT, bank_name: TEXT,
    account_number: { type: 'string', pattern: '^••••[0-9A-Z]{1,4}$', description: 'Masked: only the last 4 characters are shown.' },
    currency: TEXT, puc_account: { enum: BANK_PUC_CODES }, opening_balance: AMOUNT, opening_date: DATE, created_at: DATE_TIME,
  },
} as const;

/** Public shape of a bank account: the number masked to its last 4 characters. */
export function bankAccountView(a: BankAccountDoc) {
  return {
    id: a._id, name: a.name, bank_name: a.bank_name, account_number: maskedNumber(a.account_number), currency: a.currency, puc_account: a.puc_account,
    opening_balance: a.opening_balance, opening_date: a.opening_date, created_at: new Date(a.created_at).toISOString(),
  };
}

/** Whether an account matches a lower-cased search (name, bank name): bank.list_accounts and the `banks` source. */
export const bankAccountMatches = searchIn<BankAccountDoc>('search_lc');

// ---------------------------------------------------------------------------------------------
// Transactions

export const STATEMENT_FORMATS = ['camt053', 'ofx', 'csv'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** What a reconciled transaction is matched to. */
export const MATCH_TYPES = ['invoice', 'bill', 'payment', 'bill_payment', 'account'] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

/**
 * One part of a reconciliation: `amount` of the transaction set against an invoice or a bill
 * (through the payment registered for it, `payment_id`) or against a payment already recorded.
 */
export interface BankMatch {
  type: MatchType;
  id: string;
  amount: number;
  /** The customer payment (`pay_…`) or bill payment (`bpy_…`) that carries this part; null until registered. */
  payment_id: string | null;
  /** Whether reconciliation registered that payment (true) or found it recorded already (false). */
  registered: boolean;
  /** For an `account` part: the journal entry reconciliation wrote (bank against that account); else null. */
  journal_entry_id?: string | null;
}

export const TRANSACTION_STATUSES = ['unreconciled', 'reconciling', 'reconciled'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/**
 * One line of a bank statement. Imported once: `dedup_key` (the bank's own entry id, the OFX
 * FITID, or a hash of the mapped CSV fields) is unique per account, so importing a statement
 * again adds nothing. Its status changes by conditional updates on `status` (and `rev`), each
 * carrying the rollup intent of the reconciliation counters in the same write.
 */
export interface BankTransactionDoc {
  _id: string;
  workspace: string;
  bank_id: string;
  /** The import that wrote it (a re-import finds it written by an earlier one). */
  import_id: string;
  format: StatementFormat;
  /** The statement's own id (camt `Stmt/Id`, OFX account + period, or the CSV file's name or hash). */
  statement_id: string;
  /** The bank's id of the entry (camt `AcctSvcrRef`/`NtryRef`, OFX `FITID`), null for CSV rows without one. */
  entry_id: string | null;
  /** `<workspace>|<bank account>|<key>`, unique. */
  dedup_key: string;
  date: string;
  /** Signed, in minor units: + money in (credit), − money out (debit). */
  amount: number;
  currency: string;
  description: string;
  reference: string | null;
  search_lc: string;
  status: TransactionStatus;
  matches: BankMatch[];
  reconciled_at: Date | null;
  /**
   * The lease a reconciliation or undo kept here before the durable-operation runner (reconcile.ts):
   * stored data may still hold one, adopted by the runner (`reconcileOperation.legacyMarkers`). Null
   * on everything written since.
   */
  lock_at: Date | null;
  /**
   * Which reconciliation this is (1, 2… counting undone ones): the ids of the payments and entries
   * it books derive from it, and a takeover of a dead one keeps it, so a retry books nothing twice.
   * Absent on transactions reconciled before it existed.
   */
  attempt?: number;
  /** Set while an undo holds the lease: the status it started from (a takeover of a dead undo needs it). */
  undoing?: 'reconciled' | 'reconciling' | null;
  /** Set while an undo holds the transaction: the date its reversals carry (a finisher after a crash needs it). */
  undo_date?: string | null;
  rev: number;
  pending_rollups: RollupIntent[];
  pending_count: number;
  created_at: Date;
  updated_at: Date;
}

const transactionSchema = new Schema<BankTransactionDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    bank_id: { type: String, required: true },
    import_id: { type: String, required: true },
    format: { type: String, required: true },
    statement_id: { type: String, required: true },
    entry_id: { type: String, default: null },
    dedup_key: { type: String, required: true },
    date: { type: String, required: true },
    amount: { type: Number, required: true },
    currency: { type: String, required: true },
    description: { type: String, required: true },
    reference: { type: String, default: null },
    search_lc: { type: String, required: true },
    status: { type: String, required: true },
    matches: { type: Schema.Types.Mixed, default: [] },
    reconciled_at: { type: Date, default: null },
    lock_at: { type: Date, default: null },
    attempt: { type: Number },
    undoing: { type: String, default: null },
    undo_date: { type: String, default: null },
    rev: { type: Number, required: true },
    pending_rollups: { type: Schema.Types.Mixed, default: [] },
    pending_count: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// The guarantee that a statement imported twice adds nothing, even two imports at once.
transactionSchema.index({ dedup_key: 1 }, { unique: true });
addPositions(transactionSchema);

/** The bank transactions collection (records source `bank_transactions`). */
export function bankTransactions(db: Connection): Model<BankTransactionDoc> {
  return (db.models.BankTransaction as Model<BankTransactionDoc> | undefined) ?? db.model<BankTransactionDoc>('BankTransaction', transactionSchema, 'bank_transactions');
}

/** The unique key of a statement line in an account. */
export function dedupKey(workspace: string, bankId: string, key: string): string {
  return `${workspace}|${bankId}|${key}`;
}

/** credit (money in) or debit (money out). */
export function transactionKind(t: Pick<BankTransactionDoc, 'amount'>): 'credit' | 'debit' {
  return t.amount >= 0 ? 'credit' : 'debit';
}

/** Whether a transaction matches a lower-cased search (description, reference). */
export const transactionMatches = searchIn<BankTransactionDoc>('search_lc');

const MATCH_VIEW = {
  type: 'object', additionalProperties: false, required: ['type', 'id', 'amount', 'payment_id', 'registered'],
  properties: { type: { enum: MATCH_TYPES }, id: TEXT, amount: { type: 'integer', minimum: 1 }, payment_id: NULLABLE_TEXT, registered: { type: 'boolean' }, journal_entry_id: NULLABLE_TEXT },
} as const;

/** JSON Schema of {@link transactionView}. */
export const TRANSACTION_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'bank_id', 'kind', 'status', 'date', 'amount', 'currency', 'description', 'reference', 'statement_id', 'entry_id', 'format', 'matches', 'reconciled_at', 'created_at'],
  properties: {
    id: TEXT, bank_id: TEXT, kind: { enum: ['credit', 'debit'] }, status: { enum: TRANSACTION_STATUSES }, date: DATE, amount: AMOUNT, currency: TEXT,
    description: TEXT, reference: NULLABLE_TEXT, statement_id: TEXT, entry_id: NULLABLE_TEXT, format: { enum: STATEMENT_FORMATS },
    matches: { type: 'array', items: MATCH_VIEW }, reconciled_at: { type: ['string', 'null'], format: 'date-time' }, created_at: DATE_TIME,
  },
} as const;

/** Public shape of a bank transaction. */
export function transactionView(t: BankTransactionDoc) {
  return {
    id: t._id, bank_id: t.bank_id, kind: transactionKind(t), status: t.status, date: t.date, amount: t.amount, currency: t.currency,
    description: t.description, reference: t.reference, statement_id: t.statement_id, entry_id: t.entry_id, format: t.format, matches: t.matches,
    reconciled_at: t.reconciled_at ? new Date(t.reconciled_at).toISOString() : null, created_at: new Date(t.created_at).toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Imports

/**
 * One statement import: written `pending` before its transactions (the intent), completed with
 * the rollup intent of the lines that were new. A dead process's pending import is finished by
 * the maintenance sweep (`importOperation`, import.ts: the durable-operation runner), found through its marker.
 */
export interface BankImportDoc {
  _id: string;
  workspace: string;
  bank_id: string;
  format: StatementFormat;
  statement_id: string;
  /** SHA-256 of the file as given. */
  file_sha256: string;
  status: 'pending' | 'completed';
  /** The dedup keys of every line of the file, in file order. */
  keys: string[];
  entries: number;
  added: number;
  already_there: number;
  pending_rollups: RollupIntent[];
  pending_count: number;
  created_at: Date;
  updated_at: Date;
}

const importSchema = new Schema<BankImportDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    bank_id: { type: String, required: true },
    format: { type: String, required: true },
    statement_id: { type: String, required: true },
    file_sha256: { type: String, required: true },
    status: { type: String, required: true },
    keys: { type: [String], default: [] },
    entries: { type: Number, required: true },
    added: { type: Number, required: true },
    already_there: { type: Number, required: true },
    pending_rollups: { type: Schema.Types.Mixed, default: [] },
    pending_count: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);

/** The statement imports collection. */
export function bankImports(db: Connection): Model<BankImportDoc> {
  return (db.models.BankImport as Model<BankImportDoc> | undefined) ?? db.model<BankImportDoc>('BankImport', importSchema, 'bank_imports');
}

interface MarkerDoc { _id: string; workspace: string; kind: 'import' | 'reconcile'; at: Date }
const markerSchema = new Schema<MarkerDoc>(
  { _id: { type: String, required: true }, workspace: { type: String, required: true }, kind: { type: String, required: true }, at: { type: Date, required: true } },
  { versionKey: false },
);

/**
 * Where imports in flight kept their markers before the durable-operation runner (stored data may
 * still hold some: the runner adopts them, `importOperation.legacyMarkers`).
 */
export function bankMarkers(db: Connection): Model<MarkerDoc> {
  return (db.models.BankMarker as Model<MarkerDoc> | undefined) ?? db.model<MarkerDoc>('BankMarker', markerSchema, 'bank_markers');
}

// ---------------------------------------------------------------------------------------------
// Categorization rules

/** What a rule proposes for the transactions it matches. */
export type RuleProposal = { kind: 'counterparty' } | { kind: 'account'; account_code: string };

/**
 * A categorization rule: transactions whose description contains `description_contains`, whose
 * absolute amount lies in [amount_min, amount_max] and whose sign is `sign` (each test optional,
 * at least one given) get the rule's proposal: an open invoice or bill (by reference, else by
 * amount) or a PUC account code.
 */
export interface RuleDoc {
  _id: string;
  workspace: string;
  name: string;
  bank_id: string | null;
  description_contains: string | null;
  amount_min: number | null;
  amount_max: number | null;
  sign: 'credit' | 'debit' | null;
  propose: RuleProposal;
  search_lc: string;
  created_at: Date;
}

const ruleSchema = new Schema<RuleDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    bank_id: { type: String, default: null },
    description_contains: { type: String, default: null },
    amount_min: { type: Number, default: null },
    amount_max: { type: Number, default: null },
    sign: { type: String, default: null },
    propose: { type: Schema.Types.Mixed, required: true },
    search_lc: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(ruleSchema);

/** The categorization rules collection (records source `categorization_rules`). */
export function categorizationRules(db: Connection): Model<RuleDoc> {
  return (db.models.CategorizationRule as Model<RuleDoc> | undefined) ?? db.model<RuleDoc>('CategorizationRule', ruleSchema, 'categorization_rules');
}

/** Whether a rule applies to a transaction. */
export function ruleApplies(rule: RuleDoc, t: Pick<BankTransactionDoc, 'bank_id' | 'amount' | 'description' | 'reference'>): boolean {
  if (rule.bank_id && rule.bank_id !== t.bank_id) return false;
  const abs = Math.abs(t.amount);
  if (rule.amount_min !== null && abs < rule.amount_min) return false;
  if (rule.amount_max !== null && abs > rule.amount_max) return false;
  if (rule.sign && rule.sign !== transactionKind(t)) return false;
  if (rule.description_contains && !`${t.description} ${t.reference ?? ''}`.toLowerCase().includes(rule.description_contains)) return false;
  return true;
}

/** JSON Schema of {@link ruleView}. */
export const RULE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'bank_id', 'description_contains', 'amount_min', 'amount_max', 'sign', 'propose', 'created_at'],
  properties: {
    id: TEXT, name: TEXT, bank_id: NULLABLE_TEXT, description_contains: NULLABLE_TEXT,
    amount_min: { type: ['integer', 'null'] }, amount_max: { type: ['integer', 'null'] }, sign: { enum: ['credit', 'debit', null] },
    propose: {
      anyOf: [
        { type: 'object', additionalProperties: false, required: ['kind'], properties: { kind: { const: 'counterparty' } } },
        { type: 'object', additionalProperties: false, required: ['kind', 'account_code'], properties: { kind: { const: 'account' }, account_code: TEXT } },
      ],
    },
    created_at: DATE_TIME,
  },
} as const;

/** Public shape of a rule. */
export function ruleView(r: RuleDoc) {
  return {
    id: r._id, name: r.name, bank_id: r.bank_id, description_contains: r.description_contains, amount_min: r.amount_min, amount_max: r.amount_max,
    sign: r.sign, propose: r.propose, created_at: new Date(r.created_at).toISOString(),
  };
}

/** Whether a rule matches a lower-cased search (name, description test). */
export const ruleMatches = searchIn<RuleDoc>('search_lc');
