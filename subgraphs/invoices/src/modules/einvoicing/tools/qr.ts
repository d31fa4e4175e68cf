import { CuadraError, defineTool, ID_INPUT } from '@cuadra/shared';
import { qrContent, qrPng } from '../../../e-documents/qr.ts';
import { invoices } from '../../invoices/model.ts';
import { settings } from '../../../lib/settings.ts';

/** The QR code of a posted invoice or note: DIAN's text and the image printed on its graphic representation. */
export const qr = defineTool({
  name: 'einvoicing.qr',
  description: 'The QR code DIAN requires on a posted invoice or credit note: its text (number, date, time, issuer NIT, buyer id, amounts, CUFE/CUDE and DIAN\'s search address, as in sts:QRCode) and the image as a PNG in base64.',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['content', 'png_base64'],
    properties: { content: { type: 'string' }, png_base64: { type: 'string', contentEncoding: 'base64', contentMediaType: 'image/png' } },
  },
  async handler(input, ctx) {
    const doc = await invoices(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No invoice ${input.id} exists in this workspace.`);
    const s = await settings(ctx.db).findById(ctx.workspace).lean();
    if (doc.status === 'draft' || !s) throw new CuadraError('conflict', 'Only a posted document has a QR code.');
    const content = qrContent(doc, s);
    return { content, png_base64: (await qrPng(content)).toString('base64') };
  },
});
