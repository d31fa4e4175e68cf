import { CuadraError, defineTool, ID_INPUT } from '@cuadra/shared';
import { createHash } from 'node:crypto';
import { htmlToPdf } from '@cuadra/shared/pdf';
import { settings } from '../../../lib/settings.ts';
import { invoices } from '../model.ts';
import { representationHtml } from './render.ts';

/**
 * The graphic representation of a posted invoice or credit note as a PDF: the HTML of
 * invoices.render (issuer and buyer with NIT, number and numbering resolution, dates, lines,
 * taxes by rate, totals, CUFE/CUDE and the QR code of qr.ts) printed by Chromium.
 */
export const pdf = defineTool({
  name: 'invoices.pdf',
  description: 'The graphic representation of a posted invoice, credit or debit note as an A4 PDF (base64), as Resolución 000165 de 2023 asks: issuer (NIT, fiscal responsibilities, address) and buyer, number and DIAN numbering resolution, date and time, payment form and means, lines with discounts and charges, taxes, withholdings, totals, CUFE/CUDE and its QR code, the software and its maker.',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['id', 'number', 'filename', 'content_type', 'bytes', 'sha256', 'content_base64'],
    properties: {
      id: { type: 'string' },
      number: { type: 'string' },
      filename: { type: 'string' },
      content_type: { const: 'application/pdf' },
      bytes: { type: 'integer', minimum: 1 },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      content_base64: { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/pdf' },
    },
  },
  async handler(input, ctx) {
    const doc = await invoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    const s = await settings(ctx.db).findById(ctx.workspace).lean();
    // A Colombian document is printed with its CUFE/CUDE and QR code; one outside Colombia once numbered.
    if (doc.status === 'draft' || !doc.number || (doc.cufe && !s)) {
      throw new CuadraError('conflict', `Invoice ${doc._id} is a draft: only a posted document (numbered, with its CUFE and QR code) has a graphic representation.`);
    }
    let bytes: Buffer;
    try {
      bytes = await htmlToPdf(await representationHtml(ctx.db, doc, s ?? null));
    } catch (err) {
      throw new CuadraError('unavailable', 'The PDF printer (Chromium) could not print this document right now; try again later.', { cause: err });
    }
    return {
      id: doc._id, number: doc.number, filename: `${doc.number}.pdf`, content_type: 'application/pdf' as const,
      bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), content_base64: bytes.toString('base64'),
    };
  },
});
