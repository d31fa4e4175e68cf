import { CuadraError, defineTool, ID_INPUT } from '@cuadra/shared';
import { attachedDocuments } from '../../../e-documents/attached.ts';
import { invoices } from '../model.ts';

/**
 * The AttachedDocument of an invoice or credit note the authority accepted: DIAN's container for
 * the buyer, with the document as sent (signed) and the authority's ApplicationResponse.
 */
export const attachedDocument = defineTool({
  name: 'invoices.attached_document',
  description: 'The AttachedDocument (DIAN\'s electronic container for the buyer) of an invoice or credit note the authority accepted: the signed document and the authority\'s ApplicationResponse in CDATA, the parties, number and CUFE/CUDE.',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['id', 'number', 'content_type', 'filename', 'track_id', 'built_at', 'content'],
    properties: {
      id: { type: 'string' },
      number: { type: 'string' },
      content_type: { const: 'application/xml' },
      filename: { type: 'string' },
      track_id: { type: ['string', 'null'] },
      built_at: { type: 'string', format: 'date-time' },
      content: { type: 'string' },
    },
  },
  async handler(input, ctx) {
    const doc = await invoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }, { number: 1, status: 1, authority: 1 }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    const kept = doc.authority?.status === 'accepted' ? await attachedDocuments(ctx.db).findOne({ _id: doc._id, workspace: ctx.workspace }).lean() : null;
    if (!kept) {
      const why = doc.authority?.status === 'accepted'
        ? 'the authority accepted it without an ApplicationResponse, so there is nothing to attach'
        : 'only a document the authority accepted has one (send it with invoices.send)';
      throw new CuadraError('conflict', `${doc.number ?? doc._id} has no AttachedDocument: ${why}.`);
    }
    return {
      id: doc._id, number: kept.number, content_type: 'application/xml' as const, filename: `ad${kept.number}.xml`,
      track_id: kept.track_id ?? null, built_at: kept.built_at.toISOString(), content: kept.xml,
    };
  },
});
