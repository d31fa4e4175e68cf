import { defineSource } from '@cuadra/shared';
import { DOCUMENT_KINDS, DOCUMENT_STATUSES, documentIsKind, documentMatches, documents, type DocumentDoc } from './model.ts';

/** The compact row of a document in records.list. */
function documentRow(d: DocumentDoc) {
  return {
    id: d._id, name: d.name, kind: d.kind, content_type: d.content_type, status: d.status, reason: d.reason, bill_id: d.processed_bill,
    supplier_number: d.invoice?.number ?? null, supplier_name: d.invoice?.supplier_name ?? null, created_at: d.created_at.toISOString(),
  };
}

/**
 * records.list `documents`: kind = the content type's family (xml, pdf, image, other), status
 * uploaded, processing, processed or failed; search as documents.list (the same test).
 */
export const documentsSource = defineSource<DocumentDoc>({
  model: documents,
  search: documentMatches,
  kinds: Object.fromEntries(DOCUMENT_KINDS.map((k) => [k, (d: DocumentDoc) => documentIsKind(d, k)])),
  statuses: DOCUMENT_STATUSES,
  row: documentRow,
});
