import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
// Type only: the bills module reads runs (bills/holds.ts), so nothing of it is loaded from here.
import type { PAYMENT_BANK_ACCOUNTS } from '../../accounting/payable-accounts.ts';

/**
 * A payment run's life (each step one conditional update on `status`): draft → approved (a person
 * or policy lets the money go) → exported (the bank file was produced) → confirming (the bank
 * executed it; the bills are being paid) → confirmed. `cancelled` from draft, approved or exported.
 */
export const PAYMENT_RUN_STATUSES = ['draft', 'approved', 'exported', 'confirming', 'confirmed', 'cancelled'] as const;
export type PaymentRunStatus = (typeof PAYMENT_RUN_STATUSES)[number];

/** The statuses in which a run holds its bills (no other run may take them). */
export const OPEN_RUN_STATUSES: readonly PaymentRunStatus[] = ['draft', 'approved', 'exported', 'confirming'];

export type BankAccountCode = keyof typeof PAYMENT_BANK_ACCOUNTS;

/**
 * A bank account money leaves from or arrives at. crm keeps no bank details of a party, so a run
 * is told them: the account number (or IBAN), its type, and how the bank is known — a BIC, or a
 * national bank code (for Colombian banks the code the bank's file format uses).
 */
export interface BankAccountRef {
  account_number: string;
  account_type: 'savings' | 'checking';
  iban: string | null;
  bic: string | null;
  bank_code: string | null;
}

/** Who pays: the workspace, as its bank knows it. */
export interface DebtorRef extends BankAccountRef {
  name: string;
  /** The NIT (digits only, as the bank file wants it). */
  tax_id: string;
}

/** Who is paid: a vendor and the account it is paid into. */
export interface PayeeRef extends BankAccountRef {
  vendor_id: string;
}

/** One bill the run pays: what it owes when the run was made, and the payment that will settle it. */
export interface PaymentRunLine {
  bill_id: string;
  supplier_number: string;
  vendor_id: string;
  vendor_name: string;
  /** The vendor's NIT as the bill recorded it (digits only), or null. */
  vendor_tax_id: string | null;
  due_date: string;
  amount: number;
  /** The bill payment's id, chosen when the run is made: confirming twice cannot pay twice. */
  payment_id: string;
}

/** A run of vendor payments in one currency from one bank account. */
export interface PaymentRunDoc {
  _id: string;
  workspace: string;
  status: PaymentRunStatus;
  currency: string;
  /** PUC account the money leaves from (Cr on each payment's entry). */
  bank_account: BankAccountCode;
  debtor: DebtorRef;
  payees: PayeeRef[];
  /** Requested execution date (ReqdExctnDt / fecha de aplicación). */
  payment_date: string;
  /** The due date bills were picked by, or null when they were named. */
  due_by: string | null;
  lines: PaymentRunLine[];
  total: number;
  count: number;
  search_lc: string;
  approved_by: string | null;
  approved_at: Date | null;
  /** First export: the files' creation time, so every export of the run is byte for byte the same. */
  exported_at: Date | null;
  exports: { format: string; at: Date }[];
  /** The date the bank paid (the payments' date), fixed by the first confirm. */
  paid_on: string | null;
  confirmed_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const runSchema = new Schema<PaymentRunDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    currency: { type: String, required: true },
    bank_account: { type: String, required: true },
    debtor: { type: Schema.Types.Mixed, required: true },
    payees: { type: Schema.Types.Mixed, required: true },
    payment_date: { type: String, required: true },
    due_by: { type: String, default: null },
    lines: { type: Schema.Types.Mixed, required: true },
    total: { type: Number, required: true },
    count: { type: Number, required: true },
    search_lc: { type: String, required: true },
    approved_by: { type: String, default: null },
    approved_at: { type: Date, default: null },
    exported_at: { type: Date, default: null },
    exports: { type: Schema.Types.Mixed, default: [] },
    paid_on: { type: String, default: null },
    confirmed_at: { type: Date, default: null },
    cancelled_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(runSchema);

/** The payment runs collection. */
export function paymentRuns(db: Connection): Model<PaymentRunDoc> {
  return (db.models.PaymentRun as Model<PaymentRunDoc> | undefined) ?? db.model<PaymentRunDoc>('PaymentRun', runSchema, 'payment_runs');
}

/**
 * A bill held by an open run. `_id` = `<workspace>|<bill>` under the primary key: two runs can
 * never both hold a bill, even when made at once. Released when the run is confirmed or cancelled;
 * a claim whose run is gone or closed (a crash while a run was being made) may be taken over.
 */
export interface RunClaimDoc { _id: string; workspace: string; run_id: string }

const claimSchema = new Schema<RunClaimDoc>(
  { _id: { type: String, required: true }, workspace: { type: String, required: true }, run_id: { type: String, required: true } },
  { versionKey: false },
);

/** The claims of bills by open payment runs. */
export function paymentRunClaims(db: Connection): Model<RunClaimDoc> {
  return (db.models.PaymentRunClaim as Model<RunClaimDoc> | undefined) ?? db.model<RunClaimDoc>('PaymentRunClaim', claimSchema, 'payment_run_claims');
}

/** The claim key of a bill. */
export function claimKey(workspace: string, billId: string): string {
  return `${workspace}|${billId}`;
}

/** Whether a run matches a lower-cased search term (the source and the list tool use this one test). */
export function runMatches(r: Pick<PaymentRunDoc, 'search_lc'>, needle: string): boolean {
  return r.search_lc.includes(needle);
}

const ACCOUNT_VIEW = {
  account_number: TEXT, account_type: { enum: ['savings', 'checking'] }, iban: NULLABLE_TEXT, bic: NULLABLE_TEXT, bank_code: NULLABLE_TEXT,
} as const;
const ACCOUNT_REQUIRED = ['account_number', 'account_type', 'iban', 'bic', 'bank_code'] as const;

/** JSON Schema of {@link paymentRunView}. */
export const PAYMENT_RUN_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: [
    'id', 'status', 'currency', 'bank_account', 'debtor', 'payees', 'payment_date', 'due_by', 'lines', 'total', 'count', 'approved_by', 'approved_at',
    'exported_at', 'exports', 'paid_on', 'confirmed_at', 'cancelled_at', 'created_at', 'updated_at',
  ],
  properties: {
    id: TEXT,
    status: { enum: PAYMENT_RUN_STATUSES },
    currency: TEXT,
    bank_account: TEXT,
    debtor: { type: 'object', additionalProperties: false, required: ['name', 'tax_id', ...ACCOUNT_REQUIRED], properties: { name: TEXT, tax_id: TEXT, ...ACCOUNT_VIEW } },
    payees: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['vendor_id', ...ACCOUNT_REQUIRED], properties: { vendor_id: TEXT, ...ACCOUNT_VIEW } },
    },
    payment_date: DATE,
    due_by: { anyOf: [DATE, { type: 'null' }] },
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false,
        required: ['bill_id', 'supplier_number', 'vendor_id', 'vendor_name', 'vendor_tax_id', 'due_date', 'amount', 'payment_id'],
        properties: {
          bill_id: TEXT, supplier_number: TEXT, vendor_id: TEXT, vendor_name: TEXT, vendor_tax_id: NULLABLE_TEXT, due_date: DATE, amount: AMOUNT, payment_id: TEXT,
        },
      },
    },
    total: AMOUNT,
    count: { type: 'integer', minimum: 0 },
    approved_by: NULLABLE_TEXT,
    approved_at: { type: ['string', 'null'], format: 'date-time' },
    exported_at: { type: ['string', 'null'], format: 'date-time' },
    exports: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['format', 'at'], properties: { format: TEXT, at: DATE_TIME } },
    },
    paid_on: { anyOf: [DATE, { type: 'null' }] },
    confirmed_at: { type: ['string', 'null'], format: 'date-time' },
    cancelled_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** Public shape of a payment run. */
export function paymentRunView(r: PaymentRunDoc) {
  return {
    id: r._id, status: r.status, currency: r.currency, bank_account: r.bank_account, debtor: r.debtor, payees: r.payees, payment_date: r.payment_date,
    due_by: r.due_by, lines: r.lines, total: r.total, count: r.count, approved_by: r.approved_by, approved_at: iso(r.approved_at), exported_at: iso(r.exported_at),
    exports: r.exports.map((e) => ({ format: e.format, at: new Date(e.at).toISOString() })), paid_on: r.paid_on, confirmed_at: iso(r.confirmed_at),
    cancelled_at: iso(r.cancelled_at), created_at: new Date(r.created_at).toISOString(), updated_at: new Date(r.updated_at).toISOString(),
  };
}
