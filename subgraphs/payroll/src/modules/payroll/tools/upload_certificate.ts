import { CuadraError, defineTool } from '@cuadra/shared';
import { readPkcs12 } from '@cuadra/shared/xades';
import { epayrollSettings } from '../epayroll.ts';
import { CERTIFICATE_VIEW_SCHEMA, certificateView, requireSealer, storeCertificate } from '../epayroll_certificate.ts';

/**
 * Uploads the employer's signing certificate for electronic payroll (PKCS#12 with its password).
 * The private key is kept only sealed; the file and the password are not kept at all.
 */
export const uploadCertificate = defineTool({
  name: 'payroll.upload_certificate',
  description: 'Upload the employer\'s digital signing certificate for DIAN electronic payroll: the .p12/.pfx file in base64 and its password. Replaces the previous one. From then on every Nómina Individual and adjustment note is signed (XAdES-EPES, DIAN\'s policy) and the sandbox refuses this employer\'s unsigned documents. Answers the certificate\'s subject, issuer, serial and expiry (never the key or the password). The payroll service keeps its own sealed copy (the same file may be uploaded to e-invoicing with einvoicing.upload_certificate).',
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
  output: { type: 'object', additionalProperties: false, required: ['certificate'], properties: { certificate: CERTIFICATE_VIEW_SCHEMA } },
  async handler(input, ctx) {
    if (!(await epayrollSettings(ctx.db).exists({ _id: ctx.workspace }))) {
      throw new CuadraError('conflict', 'Set up electronic payroll first (payroll.epayroll_configure); the certificate signs for that employer.');
    }
    const sealer = requireSealer();
    const read = readPkcs12(input.p12_base64, input.password, ctx.now);
    return { certificate: certificateView(await storeCertificate(ctx.db, ctx.workspace, read, sealer, ctx.now)) };
  },
});
