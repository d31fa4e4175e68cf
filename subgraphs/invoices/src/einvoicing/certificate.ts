import { createHash, X509Certificate } from 'node:crypto';
import { CuadraError, sealerFromEnv, type Sealer, modelOn } from '@cuadra/shared';
import forge from 'node-forge';
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

/** A certificate and key read from a PKCS#12 file. */
export interface ReadCertificate {
  keyPem: string;
  certPem: string;
  fingerprint: string;
  subject: string;
  issuer: string;
  serial: string;
  notBefore: Date;
  notAfter: Date;
}

/** An X.500 name as RFC 4514 writes it (most specific first), the form of XAdES' X509IssuerName. */
export function rfc4514(attrs: forge.pki.CertificateField[]): string {
  return [...attrs].reverse().map((a) => {
    const value = String(a.value).replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/^[ #]|[ ]$/g, (c) => `\\${c}`);
    return `${a.shortName ?? a.type}=${value}`;
  }).join(',');
}

/**
 * Reads a PKCS#12 (.p12/.pfx) file given in base64 with its password: the RSA private key and the
 * certificate that belongs to it. Refuses, naming the field, what is not base64, not PKCS#12, a
 * wrong password, a file without an RSA key and its certificate, and a certificate that is not
 * valid at `now`.
 */
export function readPkcs12(base64: string, password: string, now: Date): ReadCertificate {
  const compact = base64.replace(/\s+/g, '');
  if (!compact || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    throw new CuadraError('invalid_input', 'The certificate must be the .p12 file in base64.', { field: '/p12_base64' });
  }
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(Buffer.from(compact, 'base64').toString('binary')), password);
  } catch (err) {
    // forge says "Invalid password?" when the MAC does not verify; anything else is not a PKCS#12 file it can read.
    if (/password/i.test((err as Error).message)) throw new CuadraError('invalid_input', 'The password does not open this certificate file.', { field: '/password' });
    throw new CuadraError('invalid_input', 'The file is not a PKCS#12 (.p12/.pfx) certificate.', { field: '/p12_base64' });
  }
  const keys = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag] ?? []),
  ].map((b) => b.key).filter((k): k is forge.pki.rsa.PrivateKey => !!k && 'n' in k);
  const certs = (p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? []).map((b) => b.cert).filter((c): c is forge.pki.Certificate => !!c);
  // The signing certificate is the one whose public key is the private key's (a .p12 often carries the CA chain too).
  let pair: { key: forge.pki.rsa.PrivateKey; cert: forge.pki.Certificate } | null = null;
  for (const key of keys) {
    const cert = certs.find((c) => 'n' in c.publicKey && (c.publicKey as forge.pki.rsa.PublicKey).n.equals(key.n));
    if (cert) pair = { key, cert };
  }
  if (!pair) throw new CuadraError('invalid_input', 'The file holds no RSA private key with its certificate (DIAN signs with RSA-SHA256).', { field: '/p12_base64' });
  const certPem = forge.pki.certificateToPem(pair.cert);
  const der = new X509Certificate(certPem).raw;
  const { notBefore, notAfter } = pair.cert.validity;
  if (notAfter.getTime() <= now.getTime()) {
    throw new CuadraError('invalid_input', `The certificate expired on ${notAfter.toISOString().slice(0, 10)}; DIAN refuses documents it signs.`, { field: '/p12_base64' });
  }
  if (notBefore.getTime() > now.getTime()) {
    throw new CuadraError('invalid_input', `The certificate is valid only from ${notBefore.toISOString()}.`, { field: '/p12_base64' });
  }
  return {
    keyPem: forge.pki.privateKeyInfoToPem(forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(pair.key))),
    certPem,
    fingerprint: createHash('sha256').update(der).digest('base64'),
    subject: rfc4514(pair.cert.subject.attributes),
    issuer: rfc4514(pair.cert.issuer.attributes),
    serial: BigInt(`0x${pair.cert.serialNumber}`).toString(10),
    notBefore,
    notAfter,
  };
}

/** Keeps a read certificate as the workspace's (replacing the previous one), its key sealed. */
export async function storeCertificate(db: Connection, workspace: string, read: ReadCertificate, sealer: Sealer, now: Date): Promise<CertificateDoc> {
  const doc: CertificateDoc = {
    _id: workspace, key_sealed: sealer.seal(read.keyPem, sealContext(workspace)), cert_pem: read.certPem, fingerprint: read.fingerprint,
    subject: read.subject, issuer: read.issuer, serial: read.serial, not_before: read.notBefore, not_after: read.notAfter, uploaded_at: now,
  };
  await certificates(db).replaceOne({ _id: workspace }, doc, { upsert: true });
  return doc;
}

/** The key and certificate a document is signed with. */
export interface SigningKey {
  keyPem: string;
  certPem: string;
  /** SHA-256 of the certificate (base64): which certificate a stored signature was made with. */
  fingerprint: string;
  issuer: string;
  serial: string;
}

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
