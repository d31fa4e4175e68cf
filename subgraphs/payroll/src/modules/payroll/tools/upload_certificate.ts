import { CuadraError, defineTool } from '@cuadra/shared';
import { epayrollSettings } from '../epayroll.ts';
import { CERTIFICATE_UPLOAD_INPUT, CERTIFICATE_UPLOAD_OUTPUT, upload } from '../epayroll_certificate.ts';

/**
 * Uploads the employer's signing certificate for electronic payroll (PKCS#12 with its password).
 * The private key is kept only sealed; the file and the password are not kept at all.
 */
export const uploadCertificate = defineTool({
  name: 'payroll.upload_certificate',
  description: 'Upload the employer\'s digital signing certificate for DIAN electronic payroll: the .p12/.pfx file in base64 and its password. Replaces the previous one. From then on every Nómina Individual and adjustment note is signed (XAdES-EPES, DIAN\'s policy) and the sandbox refuses this employer\'s unsigned documents. Answers the certificate\'s subject, issuer, serial and expiry (never the key or the password). The payroll service keeps its own sealed copy (the same file may be uploaded to e-invoicing with einvoicing.upload_certificate).',
  risk: 'write',
  input: CERTIFICATE_UPLOAD_INPUT,
  output: CERTIFICATE_UPLOAD_OUTPUT,
  async handler(input, ctx) {
    if (!(await epayrollSettings(ctx.db).exists({ _id: ctx.workspace }))) {
      throw new CuadraError('conflict', 'Set up electronic payroll first (payroll.epayroll_configure); the certificate signs for that employer.');
    }
    return upload(ctx.db, ctx.workspace, input, ctx.now);
  },
});
