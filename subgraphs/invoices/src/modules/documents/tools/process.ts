import { defineTool, ID_SCHEMA } from '@cuadra/shared';
import { DOCUMENT_VIEW_SCHEMA, documentView } from '../model.ts';
import { processDocument } from '../process.ts';

/** Processes an uploaded document (or tries a failed one again) into a draft bill. */
export const processTool = defineTool({
  name: 'documents.process',
  description: 'Process an uploaded document: a supplier\'s DIAN e-invoice becomes a draft bill (status uploaded → processing → processed), or the document fails with the reason. A failed document is tried again (after adding the supplier to crm, say); a processed one answers as it is. With the supplier\'s technical key (ClTec), the CUFE is also recomputed and must match.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA,
      technical_key: { type: 'string', minLength: 1, maxLength: 100, writeOnly: true, description: 'The supplier\'s technical key for its numbering range, if known: the CUFE is then recomputed (SHA-384) and a mismatch fails the document.' },
    },
  },
  output: { type: 'object', additionalProperties: false, required: ['document'], properties: { document: DOCUMENT_VIEW_SCHEMA } },
  async handler(input, ctx) {
    return { document: documentView(await processDocument(ctx, input.id, { technicalKey: input.technical_key, retry: true })) };
  },
});
