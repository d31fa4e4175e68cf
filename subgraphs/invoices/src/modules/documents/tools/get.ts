import { defineGetTool } from '@cuadra/shared';
import { DOCUMENT_VIEW_SCHEMA, documents, documentView, type DocumentDoc } from '../model.ts';

/** Reads one document of the caller's workspace (never its content). */
export const get = defineGetTool<DocumentDoc>({
  name: 'documents.get',
  description: 'Get one uploaded document by id: name, content type, size, SHA-256, status (uploaded, processing, processed, failed), the reason it failed, the draft bill it became and the e-invoice\'s number, CUFE and supplier.',
  model: documents, view: documentView, key: 'document', what: 'document', viewSchema: DOCUMENT_VIEW_SCHEMA,
});
