import type { WithholdingAmount, WithholdingRate } from './money.ts';
import type { DocumentAllowanceCharge, LineAllowanceCharge } from './line-model.ts';
import type { LineVat } from './tax-regime.ts';

// The sales document as the electronic documents read it (DIAN's UBL, Peppol BIS, the QR, the
// AttachedDocument): a floor below the invoices module, so the e-documents take the fields they
// need and never the module's whole record (issue 32).

/** One invoice line; amounts are computed once, at write time, and stored. */
export interface InvoiceLine {
  item_id: string | null;
  /** A product item's inventory warehouse (absent: the workspace's default; open-items/stock.ts). */
  warehouse_id?: string;
  description: string;
  quantity: number;
  /** UN/ECE Rec. 20 unit code. */
  unit: string;
  unit_price: number;
  discount_bps: number;
  /**
   * round(quantity × unit price), before the line's discount and charges; absent on lines written
   * before the line model kept it (lib/line-model.ts lineParts reads those back).
   */
  gross?: number;
  /** The line's allowances (its discount) and charges, computed: net = gross − allowances + charges. */
  allowance_charges?: LineAllowanceCharge[];
  tax_rate_ppm: number;
  /** Outside Colombia: the line's EN 16931 VAT category and exemption reason (null/absent for DIAN's IVA). */
  vat?: LineVat | null;
  /** Line-level withholdings; when empty the document's rates apply. */
  withholdings: WithholdingRate[];
  /**
   * The line's concept of retención en la fuente, as the buyer withholds it (accounting/withholdings.ts):
   * the caller's, else its item's, else servicios for a service (or a line without item), compras for
   * a product. Absent on lines written before concepts existed.
   */
  withholding_concept?: string;
  subtotal: number;
  tax: number;
  total: number;
  /** Invoices only: quantity already returned or credited by credit notes (never above `quantity`). */
  credited_quantity?: number;
  /** Credit notes only: the line of the credited invoice this line reverses. */
  invoice_line?: number;
  /** Dimension tags (`{cost_center: 'ventas'}`), carried onto the revenue line of the journal entry. */
  tags?: Record<string, string>;
  /**
   * The account the line is credited to when it is not a sale (413595). Debit notes: the income
   * account (class 4) — interest for late payment is financial income (421005). Invoices finance
   * issues itself: a fixed asset's price (4245, netted by its disposal entry), damages (4255).
   */
  account?: string;
}

/** A buyer's fiscal profile as crm keeps it (crm parties/fiscal.ts): what a Colombian e-invoice says of the buyer. */
export interface CustomerFiscal {
  person_type: 'legal' | 'natural';
  legal_name: string | null;
  responsibilities: string[];
  tax_scheme: string;
  address: { line: string; municipality_code: string | null; postal_code: string | null; country: string } | null;
}

/** The buyer as named on the document: a snapshot of the crm party when the document was made. */
export interface CustomerSnapshot {
  name: string;
  tax_id: { type: string; number: string; check_digit: number | null } | null;
  email: string | null;
  /** Absent on documents made before crm kept them. */
  phone?: string | null;
  fiscal?: CustomerFiscal | null;
}

/** What a sales document's lines come to (computed from them, never typed), as DIAN's documents carry it. */
export interface DocumentAmounts {
  lines: InvoiceLine[];
  /** Σ line net amounts (LineExtensionAmount; DIAN's ValFac). */
  subtotal: number;
  /** Allowances and charges of the whole document (absent on documents from before they existed: none). */
  allowance_charges?: DocumentAllowanceCharge[];
  allowance_total?: number;
  charge_total?: number;
  tax_total: number;
  /** What the document is worth with taxes: subtotal + tax_total − allowance_total + charge_total (PayableAmount; DIAN's ValTot). */
  total: number;
  withholdings: WithholdingAmount[];
}

/** {@link DocumentAmounts} with the withholdings the buyer applies: what the customer owes (every stored sales document). */
export interface SaleAmounts extends DocumentAmounts {
  withholding_rates: WithholdingRate[];
  withholding_total: number;
  /** What the customer owes: total − withholdings. */
  amount_due: number;
}

/**
 * A posted sales document (invoice, credit note, debit note) as the electronic documents read it:
 * what they put on paper and in XML, nothing of bookkeeping (rollups, locks, settlements). The
 * invoices module's record is one.
 */
export interface FiscalDocument extends DocumentAmounts {
  _id: string;
  kind: 'invoice' | 'credit_note' | 'debit_note';
  /** `draft` until posted: a draft has no electronic document. */
  status: string;
  /** Its consecutive with the range's prefix; null before posting. */
  number: string | null;
  customer: CustomerSnapshot;
  currency: string;
  issue_date: string;
  /** HH:MM:SS-05:00 of issue (DIAN's IssueTime); null before posting. */
  issue_time: string | null;
  due_date: string;
  /** DIAN's means-of-payment code, when the document names its own. */
  payment_means?: string | null;
  /** CUFE (invoice) or CUDE (notes), once posted. */
  cufe: string | null;
  /** A note's concept (DIAN's correction concept code); null on invoices. */
  concept: number | null;
  notes: string | null;
  /** The authority's state: an accepted document never changes. */
  authority: { status: 'submitting' | 'accepted' | 'rejected' } | null;
}
