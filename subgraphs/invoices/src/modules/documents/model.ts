import { addPositions, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** uploaded → processing → processed | failed (each step one conditional update on `status`). */
export const DOCUMENT_STATUSES = ['uploaded', 'processing', 'processed', 'failed'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/** The family of a content type (the `kind` of the documents source). */
export const DOCUMENT_KINDS = ['xml', 'pdf', 'image', 'other'] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

/** Largest file accepted, in bytes (a DIAN AttachedDocument with its embedded invoice is ~30–200 KB). */
export const MAX_DOCUMENT_BYTES = 512 * 1024;

/** What processing found in a supplier's e-invoice, kept on the document (shown, never trusted again). */
export interface DocumentInvoice {
  /** The supplier's invoice number (prefix + consecutive), the bill's supplier_number. */
  number: string;
  /** The CUFE as the invoice carries it (cbc:UUID, CUFE-SHA384). */
  cufe: string;
  supplier_nit: string;
  supplier_name: string;
  issue_date: string;
  currency: string;
  /** cbc:PayableAmount in minor units. */
  payable: number;
}

/**
 * An uploaded file (a supplier's e-invoice first). The content is stored with its SHA-256; one
 * document per content per workspace (`content_key` unique), so uploading the same file again
 * answers the existing document.
 */
export interface DocumentDoc {
  _id: string;
  workspace: string;
  name: string;
  content_type: string;
  kind: DocumentKind;
  size: number;
  sha256: string;
  /** `<workspace>|<sha256>` under a unique index. */
  content_key: string;
  content: Buffer;
  status: DocumentStatus;
  /** Why processing failed, in words a person can act on; null otherwise. */
  reason: string | null;
  /** PUC account the bill's lines are charged to (chosen at upload). */
  line_account: string;
  /**
   * The id the draft bill gets, chosen before the bill is written: a process that dies between
   * writing the bill and marking the document finds the bill on retry instead of writing a second.
   */
  bill_id: string;
  /** Set once processed: the bill exists under `bill_id`. */
  processed_bill: string | null;
  invoice: DocumentInvoice | null;
  /**
   * The supplier as the e-invoice names it, while crm has no party with its NIT (the document
   * failed for that reason): what crm's parties.create_from_document reads through the graph.
   * Absent on documents written before it existed.
   */
  supplier_pending?: SupplierPending | null;
  /** When processing was claimed; a claim older than a minute belongs to a dead process. */
  processing_at: Date | null;
  /** Lower-cased name, supplier number and supplier name, for search. */
  search_lc: string;
  created_at: Date;
  updated_at: Date;
}

const documentSchema = new Schema<DocumentDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    content_type: { type: String, required: true },
    kind: { type: String, required: true },
    size: { type: Number, required: true },
    sha256: { type: String, required: true },
    content_key: { type: String, required: true },
    content: { type: Buffer, required: true },
    status: { type: String, required: true },
    reason: { type: String, default: null },
    line_account: { type: String, required: true },
    bill_id: { type: String, required: true },
    processed_bill: { type: String, default: null },
    invoice: { type: Schema.Types.Mixed, default: null },
    supplier_pending: { type: Schema.Types.Mixed, default: null },
    processing_at: { type: Date, default: null },
    search_lc: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// One document per content per workspace: a concurrent second upload of the same file loses the insert and answers the first.
documentSchema.index({ content_key: 1 }, { unique: true });
addPositions(documentSchema);

/** The documents collection. */
export function documents(db: Connection): Model<DocumentDoc> {
  return modelOn<DocumentDoc>(db, 'Document', documentSchema, 'documents');
}

/** A supplier an e-invoice names that crm does not know yet. */
export interface SupplierPending {
  tax_id: { type: 'NIT'; number: string; check_digit: number | null };
  name: string;
  email: string | null;
}

/** The kind of a content type: its family. */
export function kindOf(contentType: string): DocumentKind {
  const t = contentType.toLowerCase();
  if (t === 'application/xml' || t === 'text/xml' || t.endsWith('+xml')) return 'xml';
  if (t === 'application/pdf') return 'pdf';
  if (t.startsWith('image/')) return 'image';
  return 'other';
}

/** Whether a document matches a lower-cased search term (documents.list and the documents source use this one test). */
export function documentMatches(d: Pick<DocumentDoc, 'search_lc'>, needle: string): boolean {
  return d.search_lc.includes(needle);
}

/** Whether a document is of a kind (documents.list and the documents source use this one test). */
export function documentIsKind(d: Pick<DocumentDoc, 'kind'>, kind: string): boolean {
  return d.kind === kind;
}

/** The search text of a document. */
export function documentSearchText(name: string, invoice: DocumentInvoice | null): string {
  return [name, invoice?.number, invoice?.supplier_name, invoice?.supplier_nit].filter(Boolean).join(' ').toLowerCase();
}

const INVOICE_VIEW = {
  anyOf: [{ type: 'null' }, {
    type: 'object', additionalProperties: false, required: ['number', 'cufe', 'supplier_nit', 'supplier_name', 'issue_date', 'currency', 'payable'],
    properties: { number: TEXT, cufe: TEXT, supplier_nit: TEXT, supplier_name: TEXT, issue_date: TEXT, currency: TEXT, payable: { type: 'integer' } },
  }],
} as const;

/** JSON Schema of {@link documentView}. */
export const DOCUMENT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'content_type', 'kind', 'size', 'sha256', 'status', 'reason', 'bill_id', 'invoice', 'supplier_pending', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, name: TEXT, content_type: TEXT, kind: { enum: DOCUMENT_KINDS }, size: { type: 'integer', minimum: 0 }, sha256: TEXT,
    status: { enum: DOCUMENT_STATUSES }, reason: NULLABLE_TEXT, bill_id: NULLABLE_TEXT, invoice: INVOICE_VIEW,
    supplier_pending: {
      description: 'Set while the supplier is not a crm party: its NIT, name and e-mail from the e-invoice. Create it with parties.create_from_document, then process again.',
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['tax_id', 'name', 'email'],
        properties: {
          tax_id: { type: 'object', additionalProperties: false, required: ['type', 'number', 'check_digit'], properties: { type: { const: 'NIT' }, number: TEXT, check_digit: { type: ['integer', 'null'] } } },
          name: TEXT, email: NULLABLE_TEXT,
        },
      }],
    },
    created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** A document as callers see it (never its content). `bill_id` only once the bill exists. */
export function documentView(d: DocumentDoc) {
  return {
    id: d._id, name: d.name, content_type: d.content_type, kind: d.kind, size: d.size, sha256: d.sha256, status: d.status, reason: d.reason,
    bill_id: d.processed_bill, invoice: d.invoice, supplier_pending: d.supplier_pending ?? null, created_at: d.created_at.toISOString(), updated_at: d.updated_at.toISOString(),
  };
}
