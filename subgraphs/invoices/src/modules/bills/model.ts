import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, applyRate, checkedAmount, CuadraError, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, lineAmounts,
  NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, sumAmounts, TEXT_SCHEMA as TEXT, type ToolContext, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { OPEN_ITEM_RECORD_FIELDS, type OpenItemRecord } from '../../open-items/index.ts';
import { BILL_ACCOUNT_CONCEPTS, minimumBase, WITHHOLDING_CONCEPT_KEYS, WITHHOLDING_CONCEPTS, type WithholdingConceptKey } from '../../accounting/withholdings.ts';
import { BILL_LINE_ACCOUNTS, type BillLineAccount } from '../../accounting/payable-accounts.ts';
import type { BillHold } from './holds.ts';

/** Withholdings the buyer makes on a bill (Colombia), rates in parts per million. */
export const BILL_WITHHOLDING_TYPES = ['retefuente', 'reteiva', 'reteica'] as const;
export type BillWithholdingType = (typeof BILL_WITHHOLDING_TYPES)[number];

export const BILL_STATUSES = ['draft', 'posted', 'partially_paid', 'paid', 'void'] as const;

/** A vendor's bill, or a vendor's credit note against one (the `kind` of the bills source). */
export const BILL_KINDS = ['invoice', 'credit_note'] as const;
export type BillKind = (typeof BILL_KINDS)[number];
export type BillStatus = (typeof BILL_STATUSES)[number];

/** One bill line: what was bought, charged to one PUC account; amounts computed at write time. */
export interface BillLine {
  /** A product item of the catalog bought for stock (optional): a posted bill receives it into inventory (open-items/stock.ts). */
  item_id?: string;
  /** Its inventory warehouse (absent: the workspace's default). */
  warehouse_id?: string;
  description: string;
  account: BillLineAccount;
  quantity: number;
  unit_price: number;
  discount_bps: number;
  tax_rate_ppm: number;
  subtotal: number;
  tax: number;
  total: number;
  /** Dimension tags (`{cost_center: 'ventas'}`), carried onto the line's account in the journal entry. */
  tags?: Record<string, string>;
  /**
   * The line's concept of retención en la fuente: the caller's, else its account's (5135 servicios,
   * 5110 honorarios…; accounting/withholdings.ts). Absent on lines written before concepts existed.
   */
  withholding_concept?: WithholdingConceptKey;
}

/**
 * A withholding of the bill: rate, the base it was taken on, and the amount kept from the vendor.
 * Retención en la fuente is one per concept of the bill's lines (`concept`); absent on a
 * withholding written before concepts existed (then it was the whole bill's, booked to 236540).
 */
export interface BillWithholding {
  type: BillWithholdingType;
  rate_ppm: number;
  base: number;
  amount: number;
  concept?: WithholdingConceptKey;
}

/**
 * A withholding the bill asks for. Without `rate_ppm` (retención en la fuente only) each concept of
 * the bill's lines takes its own rate from the table, when its base reaches the concept's minimum.
 */
export interface BillWithholdingRate { type: BillWithholdingType; rate_ppm?: number }

/** The vendor as crm knew it when the bill was recorded. */
export interface VendorSnapshot {
  name: string;
  tax_id: { type: string; number: string; check_digit: number | null } | null;
}

/** A reduction of a bill's balance by a payment, dated (aging at any date). */
export interface BillSettlement { ref: string; date: string; amount: number }

/**
 * A vendor's bill (DOMAIN.md: draft → posted → partially_paid → paid; a draft may be voided).
 * One document holds its lines, settlements and rollup intents, so every change is one
 * conditional write on `rev`. A posted bill is never edited.
 */
export interface BillDoc extends OpenItemRecord {
  _id: string;
  workspace: string;
  status: BillStatus;
  vendor_id: string;
  vendor: VendorSnapshot;
  /** The vendor's own invoice number, as printed on its invoice. */
  supplier_number: string;
  /**
   * `<workspace>|<vendor>|<supplier number, upper-cased>` under a unique index: one bill per
   * vendor invoice, even under concurrent creates; `void:<id>` once voided, freeing the number.
   */
  supplier_key: string;
  /** Lower-cased supplier number and vendor name, for search. */
  search_lc: string;
  currency: string;
  issue_date: string;
  due_date: string;
  lines: BillLine[];
  withholding_rates: BillWithholdingRate[];
  subtotal: number;
  tax_total: number;
  total: number;
  withholdings: BillWithholding[];
  withholding_total: number;
  /** What is owed to the vendor: total − withholdings. */
  amount_due: number;
  paid: number;
  /** amount_due − paid. */
  balance: number;
  settlements: BillSettlement[];
  closed_on: string | null;
  journal_entry_id: string | null;
  /** Absent on bills written before credit notes existed: an invoice. */
  kind?: BillKind;
  /** A credit note: the bill it credits. */
  credit_of?: string | null;
  /** A credit note: the bill line each of its lines credits. */
  credit_lines?: number[];
  /** A bill: quantity credited so far per line, in millionths (credit notes applied). */
  credited_micros?: number[];
  /** A bill: the credit notes applied to it. */
  credit_notes?: string[];
  /** A credit note being applied: inventory holds the goods it sends back (open-items/stock.ts), so a rerun does not hold them again. */
  stock_held?: boolean;
  /**
   * The payment run whose bank file pays this bill (set when the run is approved, cleared by its
   * payment or when it is cancelled): no other settlement is taken meanwhile (holds.ts). Absent: none.
   */
  run_hold?: BillHold | null;
}

const billSchema = new Schema<BillDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    vendor_id: { type: String, required: true },
    vendor: { type: Schema.Types.Mixed, required: true },
    supplier_number: { type: String, required: true },
    supplier_key: { type: String, required: true },
    search_lc: { type: String, required: true },
    currency: { type: String, required: true },
    issue_date: { type: String, required: true },
    due_date: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    withholding_rates: { type: Schema.Types.Mixed, default: [] },
    subtotal: { type: Number, required: true },
    tax_total: { type: Number, required: true },
    total: { type: Number, required: true },
    withholdings: { type: Schema.Types.Mixed, default: [] },
    withholding_total: { type: Number, required: true },
    amount_due: { type: Number, required: true },
    paid: { type: Number, required: true },
    balance: { type: Number, required: true },
    settlements: { type: Schema.Types.Mixed, default: [] },
    closed_on: { type: String, default: null },
    journal_entry_id: { type: String, default: null },
    ...OPEN_ITEM_RECORD_FIELDS,
    kind: { type: String, default: 'invoice' },
    credit_of: { type: String, default: null },
    credit_lines: { type: Schema.Types.Mixed, default: undefined },
    credited_micros: { type: Schema.Types.Mixed, default: undefined },
    credit_notes: { type: Schema.Types.Mixed, default: undefined },
    stock_held: { type: Boolean, default: undefined },
    run_hold: { type: Schema.Types.Mixed, default: undefined },
  },
  { versionKey: false, minimize: false },
);
billSchema.index({ workspace: 1, status: 1, due_date: 1 });
// One bill per vendor invoice number (a retried or concurrent create cannot record it twice).
billSchema.index({ supplier_key: 1 }, { unique: true });
addPositions(billSchema);

/** The bills collection. */
export function bills(db: Connection): Model<BillDoc> {
  return modelOn<BillDoc>(db, 'Bill', billSchema, 'bills');
}

/** The unique key of a vendor's invoice number in a workspace. */
export function supplierKey(workspace: string, vendorId: string, supplierNumber: string): string {
  return `${workspace}|${vendorId}|${supplierNumber.trim().toUpperCase()}`;
}

/** The text records and list search match against. */
export function billSearchText(supplierNumber: string, vendorName: string): string {
  return `${supplierNumber} ${vendorName}`.toLowerCase();
}

/** Whether a bill matches a lower-cased search term (bills.list and the bills source use this one test). */
export function billMatches(b: Pick<BillDoc, 'search_lc'>, needle: string): boolean {
  return b.search_lc.includes(needle);
}

/** A line as callers write it. */
export interface BillLineInput {
  item_id?: string;
  warehouse_id?: string;
  description: string;
  account: BillLineAccount;
  quantity: number;
  unit_price: number;
  discount_bps?: number;
  tax_rate_ppm?: number;
  tags?: Record<string, string>;
  withholding_concept?: WithholdingConceptKey;
}

/** Stored lines from input lines: amounts exact (shared lineAmounts), refused at the line that overflows; each with its withholding concept. */
export function billLines(input: readonly BillLineInput[], fieldBase = '/lines'): BillLine[] {
  return input.map((l, i) => ({
    ...(l.item_id ? { item_id: l.item_id } : {}), ...(l.warehouse_id ? { warehouse_id: l.warehouse_id } : {}),
    description: l.description, account: l.account, quantity: l.quantity, unit_price: l.unit_price,
    discount_bps: l.discount_bps ?? 0, tax_rate_ppm: l.tax_rate_ppm ?? 0,
    ...lineAmounts(l.quantity, l.unit_price, l.discount_bps ?? 0, l.tax_rate_ppm ?? 0, `${fieldBase}/${i}`),
    ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}),
    withholding_concept: l.withholding_concept ?? BILL_ACCOUNT_CONCEPTS[l.account],
  }));
}

/**
 * Retención en la fuente of a bill, one per concept of its lines, each on the base of that concept's
 * lines (Σ their subtotals: the payment of that concept), rounded once (half away from zero):
 * - at the caller's rate when one is given (a buyer may withhold under the minimum, art. 1.2.4.6 DUR);
 * - else at the concept's rate, when the base reaches the concept's minimum on the bill's date;
 * - a credit note (`reverses`: the credited bill's withholdings) at the rate the bill applied to
 *   that concept, and nothing for a concept the bill did not withhold.
 * Lines written before concepts existed, or a bill whose withholding has no concept, keep the old
 * rule: one withholding on the whole base.
 */
function retefuenteByConcept(lines: readonly BillLine[], rate: BillWithholdingRate, date: string, subtotal: number, reverses?: readonly BillWithholding[]): BillWithholding[] {
  const previous = reverses?.filter((w) => w.type === 'retefuente');
  const legacy = previous ? previous.some((w) => !w.concept) : lines.some((l) => !l.withholding_concept);
  if (legacy) {
    const ratePpm = previous?.[0]?.rate_ppm ?? rate.rate_ppm;
    if (ratePpm === undefined || (previous && previous.length === 0)) return [];
    return [{ type: 'retefuente', rate_ppm: ratePpm, base: subtotal, amount: applyRate(subtotal, ratePpm) }];
  }
  const bases = new Map<WithholdingConceptKey, number>();
  lines.forEach((l, i) => bases.set(l.withholding_concept!, checkedAmount((bases.get(l.withholding_concept!) ?? 0) + l.subtotal, `/lines/${i}`, 'The withholding base')));
  const out: BillWithholding[] = [];
  for (const [concept, base] of bases) {
    let ratePpm: number | undefined;
    if (previous) ratePpm = previous.find((w) => w.concept === concept)?.rate_ppm;
    else if (rate.rate_ppm !== undefined) ratePpm = rate.rate_ppm;
    else if (base >= minimumBase(WITHHOLDING_CONCEPTS[concept], date).amount) ratePpm = WITHHOLDING_CONCEPTS[concept].rate_ppm;
    if (ratePpm === undefined || base === 0) continue;
    out.push({ type: 'retefuente', concept, rate_ppm: ratePpm, base, amount: applyRate(base, ratePpm) });
  }
  return out;
}

/**
 * Totals of a bill. Retención en la fuente is taken per concept of the lines
 * ({@link retefuenteByConcept}); ReteIVA on the VAT (Σ line taxes) and ReteICA on the taxable base
 * (Σ line subtotals), each rounded once (half away from zero), as the withholding certificate reports
 * them. `date` (the bill's) picks the UVT and the minimum bases; `reverses` is the credited bill's
 * withholdings when these totals are a credit note's. Every sum stays within ±10^15 minor units.
 */
export function billTotals(lines: readonly BillLine[], rates: readonly BillWithholdingRate[], date: string, reverses?: readonly BillWithholding[]) {
  const at = (i: number) => `/lines/${i}`;
  const subtotal = sumAmounts(lines.map((l) => l.subtotal), at, 'The bill subtotal');
  const taxTotal = sumAmounts(lines.map((l) => l.tax), at, 'The bill VAT');
  const total = sumAmounts(lines.map((l) => l.total), at, 'The bill total');
  const withholdings: BillWithholding[] = rates.flatMap((r): BillWithholding[] => {
    if (r.type === 'retefuente') return retefuenteByConcept(lines, r, date, subtotal, reverses);
    const base = r.type === 'reteiva' ? taxTotal : subtotal;
    // A credit note reverses at the rate the bill applied; ReteIVA and ReteICA always state theirs.
    const ratePpm = reverses?.find((w) => w.type === r.type)?.rate_ppm ?? r.rate_ppm!;
    return [{ type: r.type, rate_ppm: ratePpm, base, amount: applyRate(base, ratePpm) }];
  });
  const withholdingTotal = checkedAmount(withholdings.reduce((s, w) => s + w.amount, 0), '/withholdings', 'The withholding total');
  if (withholdingTotal > total) throw new CuadraError('invalid_input', 'The withholdings add up to more than the bill.', { field: '/withholdings' });
  return { subtotal, tax_total: taxTotal, total, withholdings, withholding_total: withholdingTotal, amount_due: total - withholdingTotal };
}

/** Σ net of the lines charged to expense accounts (what the `expenses` metric counts). */
export function expenseOf(lines: readonly BillLine[]): number {
  return lines.reduce((s, l) => s + (BILL_LINE_ACCOUNTS[l.account].expense ? l.subtotal : 0), 0);
}

/**
 * The vendor of a bill as crm knows the party, read through the graph (never typed again by the
 * caller). A party that does not exist, or is only a customer, is refused at `field`; an archived
 * vendor cannot be billed (it may still be paid what is owed). crm not answering is `unavailable`:
 * nothing has been written yet.
 */
export async function vendorFromCrm(ctx: Pick<ToolContext, 'graph'>, vendorId: string, options: { field?: string; archived?: boolean } = {}): Promise<VendorSnapshot> {
  const field = options.field ?? '/vendor_id';
  if (!ctx.graph) throw new CuadraError('unavailable', 'The crm service is not configured here; nothing was done.', { beforeAnyEffect: true });
  const data = await ctx.graph('crm', 'query($id: ID!) { party(id: $id) { id kind name status taxIdentity { type number checkDigit } } }', { id: vendorId })
    .catch((err: unknown) => {
      if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
      throw err;
    });
  const party = data.party as { kind: string; name: string; status: string; taxIdentity: { type: string; number: string; checkDigit: number | null } | null } | null;
  if (!party) throw new CuadraError('invalid_input', `No party ${vendorId} exists in this workspace.`, { field });
  if (party.kind !== 'vendor' && party.kind !== 'both') throw new CuadraError('invalid_input', `${party.name} is a customer, not a vendor: make it a vendor (kind both) to record its bills.`, { field });
  if (party.status === 'archived' && !options.archived) throw new CuadraError('conflict', `${party.name} is archived; no new bills can be recorded for it.`);
  return { name: party.name, tax_id: party.taxIdentity ? { type: party.taxIdentity.type, number: party.taxIdentity.number, check_digit: party.taxIdentity.checkDigit ?? null } : null };
}

const CONCEPT_VIEW = { enum: WITHHOLDING_CONCEPT_KEYS } as const;

const WITHHOLDING_VIEW = {
  type: 'object', additionalProperties: false, required: ['type', 'rate_ppm', 'base', 'amount'],
  properties: {
    type: { enum: BILL_WITHHOLDING_TYPES }, rate_ppm: { type: 'integer' }, base: AMOUNT, amount: AMOUNT,
    concept: { ...CONCEPT_VIEW, description: 'Retención en la fuente: the concept of the lines it was taken on (absent on bills recorded before concepts).' },
  },
} as const;

/** JSON Schema of {@link billView}. */
export const BILL_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: [
    'id', 'kind', 'credit_of', 'status', 'vendor_id', 'vendor', 'supplier_number', 'currency', 'issue_date', 'due_date', 'lines', 'withholding_rates', 'subtotal', 'tax_total',
    'total', 'withholdings', 'withholding_total', 'amount_due', 'paid', 'balance', 'settlements', 'payment_run_id', 'journal_entry_id', 'notes', 'posted_at', 'created_at', 'updated_at',
  ],
  properties: {
    id: TEXT,
    kind: { enum: BILL_KINDS },
    credit_of: { ...NULLABLE_TEXT, description: 'A credit note: the bill it credits.' },
    status: { enum: BILL_STATUSES },
    vendor_id: TEXT,
    vendor: {
      type: 'object', additionalProperties: false, required: ['name', 'tax_id'],
      properties: {
        name: TEXT,
        tax_id: {
          anyOf: [{ type: 'null' }, {
            type: 'object', additionalProperties: false, required: ['type', 'number', 'check_digit'],
            properties: { type: TEXT, number: TEXT, check_digit: { type: ['integer', 'null'] } },
          }],
        },
      },
    },
    supplier_number: TEXT,
    currency: TEXT,
    issue_date: DATE,
    due_date: DATE,
    lines: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false,
        required: ['description', 'account', 'quantity', 'unit_price', 'discount_bps', 'tax_rate_ppm', 'subtotal', 'tax', 'total'],
        properties: {
          item_id: TEXT, warehouse_id: TEXT, description: TEXT, account: TEXT, quantity: { type: 'number' }, unit_price: AMOUNT, discount_bps: { type: 'integer' }, tax_rate_ppm: { type: 'integer' },
          subtotal: AMOUNT, tax: AMOUNT, total: AMOUNT, tags: { type: 'object', additionalProperties: { type: 'string' } }, withholding_concept: CONCEPT_VIEW,
        },
      },
    },
    withholding_rates: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['type'],
        properties: { type: { enum: BILL_WITHHOLDING_TYPES }, rate_ppm: { type: 'integer', description: 'Absent: retención en la fuente at each concept\'s own rate and minimum base.' } },
      },
    },
    subtotal: AMOUNT,
    tax_total: AMOUNT,
    total: AMOUNT,
    withholdings: { type: 'array', items: WITHHOLDING_VIEW },
    withholding_total: AMOUNT,
    amount_due: AMOUNT,
    paid: AMOUNT,
    balance: AMOUNT,
    settlements: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['ref', 'date', 'amount'], properties: { ref: TEXT, date: DATE, amount: AMOUNT } },
    },
    payment_run_id: { ...NULLABLE_TEXT, description: 'The approved or exported payment run whose bank file pays this bill: until it is confirmed or cancelled the bill takes no other payment or credit.' },
    journal_entry_id: NULLABLE_TEXT,
    notes: NULLABLE_TEXT,
    posted_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  },
} as const;

/** Public shape of a bill (tool output). */
export function billView(b: BillDoc) {
  return {
    id: b._id, kind: b.kind ?? 'invoice', credit_of: b.credit_of ?? null, status: b.status, vendor_id: b.vendor_id, vendor: b.vendor, supplier_number: b.supplier_number, currency: b.currency,
    issue_date: b.issue_date, due_date: b.due_date, lines: b.lines, withholding_rates: b.withholding_rates, subtotal: b.subtotal, tax_total: b.tax_total,
    total: b.total, withholdings: b.withholdings, withholding_total: b.withholding_total, amount_due: b.amount_due, paid: b.paid, balance: b.balance,
    settlements: b.settlements, payment_run_id: b.run_hold?.run_id ?? null, journal_entry_id: b.journal_entry_id, notes: b.notes, posted_at: b.posted_at ? new Date(b.posted_at).toISOString() : null,
    created_at: new Date(b.created_at).toISOString(), updated_at: new Date(b.updated_at).toISOString(),
  };
}
