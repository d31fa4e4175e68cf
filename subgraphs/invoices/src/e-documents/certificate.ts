import { certificateStore } from '@cuadra/shared/xades';
import type { Connection } from 'mongoose';

/**
 * A workspace's signing certificate (DIAN's "certificado de firma digital"), one per workspace,
 * kept as every signing service keeps it (@cuadra/shared certificates.ts): the private key only
 * sealed (CONTRACT.md §9) with a context naming the workspace (`einvoicing.certificate:<workspace>`),
 * so a box copied to another workspace does not open; the PKCS#12 file and its password are never
 * kept. The certificate itself is public (it travels in every signed document).
 *
 * Exported: the collection (`_id` = workspace); the signing key, or null when none was uploaded
 * (an expired certificate or a key that no longer opens is a `conflict`); an upload.
 */
export const { certificates, signingKey, upload } = certificateStore({
  model: 'EinvoicingCertificate', collection: 'einvoicing_certificates', sealPrefix: 'einvoicing.certificate',
  uploadTool: 'einvoicing.upload_certificate', certificateName: 'signing certificate', keyName: 'signing key',
  sealerRefusalBeforeAnyEffect: false,
});

export { CERTIFICATE_UPLOAD_INPUT, CERTIFICATE_UPLOAD_OUTPUT, CERTIFICATE_VIEW_SCHEMA, certificateView, type CertificateDoc, type CertificateView, type ReadCertificate, type SigningKey } from '@cuadra/shared/xades';

/**
 * When the workspace's signing certificate expires (null: none uploaded). For the agenda: a
 * certificate that lapses stops every invoice, so it is warned ahead.
 */
export async function certificateExpiry(db: Connection, workspace: string): Promise<{ not_after: Date; subject: string } | null> {
  const doc = await certificates(db).findById(workspace, { not_after: 1, subject: 1 }).lean();
  return doc ? { not_after: doc.not_after, subject: doc.subject } : null;
}

