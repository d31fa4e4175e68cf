import { defineListTool, searchTerm } from '@cuadra/shared';
import { DOCUMENT_KINDS, DOCUMENT_STATUSES, DOCUMENT_VIEW_SCHEMA, documentIsKind, documentMatches, documents, documentView, type DocumentDoc } from '../model.ts';

/** Lists uploaded documents, newest first, one bounded page at a time. */
export const list = defineListTool({
  name: 'documents.list',
  description: 'List uploaded documents, newest first; filter by status, kind (xml, pdf, image, other) or a case-insensitive search over the file name, supplier number, supplier name and NIT.',
  model: documents,
  view: (d: DocumentDoc) => documentView(d),
  viewSchema: DOCUMENT_VIEW_SCHEMA,
  filters: {
    status: { enum: DOCUMENT_STATUSES },
    kind: { enum: DOCUMENT_KINDS },
    search: { type: 'string', minLength: 1, maxLength: 100 },
  },
  match: (input) => {
    const text = searchTerm(input.search);
    return input.status || input.kind || text
      ? (d: DocumentDoc) => (!input.status || d.status === input.status) && (!input.kind || documentIsKind(d, input.kind)) && (!text || documentMatches(d, text))
      : undefined;
  },
});
