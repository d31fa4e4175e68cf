import { CuadraError, defineTool } from '@cuadra/shared';
import { CERTIFICATE_VIEW_SCHEMA, certificateView, readPkcs12, requireSealer, storeCertificate } from '../../../einvoicing/certificate.ts';
import { settings } from '../../../lib/settings.ts';

/**
 * Uploads the workspace's signing certificate (PKCS#12 with its password). The private key is
 * kept only sealed; the file and the password are not kept at all, and nothing secret is ever
 * answered: only whom the certificate names, its issuer, serial and expiry. From then on every
 * posted or sent invoice and note is signed (XAdES-EPES, DIAN's policy), and the authority refuses
 * this issuer's unsigned documents.
 */
export const uploadCertificate = defineTool({
  name: 'einvoicing.upload_certificate',
  description: 'Upload the workspace\'s digital signing certificate for DIAN e-invoicing: the .p12/.pfx file in base64 and its password. Replaces the previous one. Answers the certificate\'s subject, issuer, serial and expiry (never the key or the password). Invoices and notes are signed with it from then on.',
  // Sealed in a held approval's stored input, shown to nobody (CONTRACT §9).
  secretInputs: ['p12_base64', 'password'],
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['p12_base64', 'password'],
    properties: {
      p12_base64: { type: 'string', minLength: 4, maxLength: 65_536, description: 'The PKCS#12 (.p12/.pfx) file, base64.' },
      password: { type: 'string', maxLength: 256, description: 'The password of the file.' },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['certificate'],
    properties: { certificate: CERTIFICATE_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    if (!(await settings(ctx.db).exists({ _id: ctx.workspace }))) {
      throw new CuadraError('conflict', 'Set up e-invoicing first (einvoicing.configure); the certificate signs for that issuer.');
    }
    // Checked before the file is read: without a sealing key the key could not be kept, so nothing is.
    const sealer = requireSealer();
    const read = readPkcs12(input.p12_base64, input.password, ctx.now);
    const stored = await storeCertificate(ctx.db, ctx.workspace, read, sealer, ctx.now);
    return { certificate: certificateView(stored) };
  },
});
