import { CuadraError, defineTool } from '@cuadra/shared';
import { CERTIFICATE_UPLOAD_INPUT, CERTIFICATE_UPLOAD_OUTPUT, upload } from '../../../e-documents/certificate.ts';
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
  risk: 'write',
  input: CERTIFICATE_UPLOAD_INPUT,
  output: CERTIFICATE_UPLOAD_OUTPUT,
  async handler(input, ctx) {
    if (!(await settings(ctx.db).exists({ _id: ctx.workspace }))) {
      throw new CuadraError('conflict', 'Set up e-invoicing first (einvoicing.configure); the certificate signs for that issuer.');
    }
    // The sealing key is checked before the file is read: without one the key could not be kept, so nothing is.
    return upload(ctx.db, ctx.workspace, input, ctx.now);
  },
});
