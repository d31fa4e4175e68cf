import { CuadraError, sealerFromEnv, type Sealer, modelOn } from '@cuadra/shared';
import type { ReadCertificate, SigningKey } from '@cuadra/shared/xades';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * A workspace's signing certificate (DIAN's "certificado de firma digital"), one per workspace.
 * The private key is kept only sealed (CONTRACT.md §9) with a context naming the workspace, so a
 * box copied to another workspace does not open; the PKCS#12 file and its password are never kept.
 * The certificate itself is public (it travels in every signed document).
 */
export interface CertificateDoc {
  _id: string;
  /** PKCS#8 PEM of the RSA private key, sealed. */
  key_sealed: string;
  /** The certificate, PEM. */
  cert_pem: string;
  /** SHA-256 of the certificate's DER, base64: what the sandbox matches a document's KeyInfo against. */
  fingerprint: string;
  subject: string;
  issuer: string;
  /** Serial number, decimal (as XAdES' X509SerialNumber writes it). */
  serial: string;
  not_before: Date;
  not_after: Date;
  uploaded_at: Date;
}

const certificateSchema = new Schema<CertificateDoc>(
  {
    _id: { type: String, required: true }, key_sealed: { type: String, required: true }, cert_pem: { type: String, required: true },
    fingerprint: { type: String, required: true }, subject: String, issuer: String, serial: String, not_before: Date, not_after: Date, uploaded_at: Date,
  },
  { versionKey: false },
);

/** The signing certificates collection (`_id` = workspace). */
export function certificates(db: Connection): Model<CertificateDoc> {
  return modelOn<CertificateDoc>(db, 'EinvoicingCertificate', certificateSchema, 'einvoicing_certificates');
}

/** What a certificate's key is sealed to: the workspace, so a box copied elsewhere does not open. */
function sealContext(workspace: string): string {
  return `einvoicing.certificate:${workspace}`;
}

/** The sealer, or a refusal: without a sealing key a private key cannot be kept safely, so it is not kept at all. */
export function requireSealer(env: NodeJS.ProcessEnv = process.env): Sealer {
  const sealer = sealerFromEnv(env);
  if (!sealer) throw new CuadraError('unavailable', 'This server has no sealing key (CUADRA_SEAL_KEY), so a signing certificate cannot be stored safely; ask the operator to set one.');
  return sealer;
}

export { readPkcs12, rfc4514, type ReadCertificate } from '@cuadra/shared/xades';

/** Keeps a read certificate as the workspace's (replacing the previous one), its key sealed. */
export async function storeCertificate(db: Connection, workspace: string, read: ReadCertificate, sealer: Sealer, now: Date): Promise<CertificateDoc> {
  const doc: CertificateDoc = {
    _id: workspace, key_sealed: sealer.seal(read.keyPem, sealContext(workspace)), cert_pem: read.certPem, fingerprint: read.fingerprint,
    subject: read.subject, issuer: read.issuer, serial: read.serial, not_before: read.notBefore, not_after: read.notAfter, uploaded_at: now,
  };
  await certificates(db).replaceOne({ _id: workspace }, doc, { upsert: true });
  return doc;
}

export type { SigningKey } from '@cuadra/shared/xades';

/**
 * The workspace's signing key, or null when it uploaded no certificate. A certificate that has
 * expired (or a key that no longer opens, e.g. after the sealing key changed) is a `conflict`:
 * signing with it would only be refused by the authority, and sending unsigned would hide it.
 */
export async function signingKey(db: Connection, workspace: string, now: Date): Promise<SigningKey | null> {
  const doc = await certificates(db).findById(workspace).lean();
  if (!doc) return null;
  if (doc.not_after.getTime() <= now.getTime()) {
    throw new CuadraError('conflict', `The signing certificate expired on ${doc.not_after.toISOString().slice(0, 10)}; upload a new one with einvoicing.upload_certificate.`);
  }
  const keyPem = requireSealer().open(doc.key_sealed, sealContext(workspace));
  if (!keyPem) throw new CuadraError('conflict', 'The stored signing key cannot be opened with this server\'s sealing key; upload the certificate again with einvoicing.upload_certificate.');
  return { keyPem, certPem: doc.cert_pem, fingerprint: doc.fingerprint, issuer: doc.issuer, serial: doc.serial };
}

/** The certificate as shown to people: who it names, who issued it, its serial and its expiry; never the key. */
export interface CertificateView {
  subject: string;
  issuer: string;
  serial: string;
  not_after: string;
}

/** JSON Schema of {@link CertificateView}. */
export const CERTIFICATE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['subject', 'issuer', 'serial', 'not_after'],
  properties: { subject: { type: 'string' }, issuer: { type: 'string' }, serial: { type: 'string', pattern: '^[0-9]+$' }, not_after: { type: 'string', format: 'date-time' } },
} as const;

/** The visible part of a stored certificate. */
export function certificateView(doc: Pick<CertificateDoc, 'subject' | 'issuer' | 'serial' | 'not_after'>): CertificateView {
  return { subject: doc.subject, issuer: doc.issuer, serial: doc.serial, not_after: doc.not_after.toISOString() };
}

/**
 * When the workspace's signing certificate expires (null: none uploaded). For the agenda: a
 * certificate that lapses stops every invoice, so it is warned ahead.
 */
export async function certificateExpiry(db: Connection, workspace: string): Promise<{ not_after: Date; subject: string } | null> {
  const doc = await certificates(db).findById(workspace, { not_after: 1, subject: 1 }).lean();
  return doc ? { not_after: doc.not_after, subject: doc.subject } : null;
}
