import { Schema, type Connection, type Model } from 'mongoose';
import { modelOn } from './db.ts';
import { CuadraError } from './errors.ts';
import { sealerFromEnv, type Sealer } from './seal.ts';
import { readPkcs12, type ReadCertificate, type SigningKey } from './xades.ts';

/**
 * A workspace's signing certificate (DIAN's "certificado de firma digital"), one per workspace,
 * as each service that signs keeps it: e-invoicing (invoices) and electronic payroll (payroll).
 * Each keeps its own copy in its own collection, because a service may not read another's
 * collections and a private key never travels between services; this file is the one way both
 * keep it. The private key is kept only sealed (CONTRACT.md §9) with a context naming the service
 * and the workspace, so a box copied to another workspace does not open; the PKCS#12 file and its
 * password are never kept. The certificate itself is public (it travels in every signed document).
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

/** The input of an upload tool: the PKCS#12 file in base64 and its password (both secret inputs). */
export const CERTIFICATE_UPLOAD_INPUT = {
  type: 'object', additionalProperties: false, required: ['p12_base64', 'password'],
  properties: {
    // Secrets (CONTRACT §10): sealed in a held approval's stored input, shown to nobody.
    p12_base64: { type: 'string', minLength: 4, maxLength: 65_536, writeOnly: true, description: 'The PKCS#12 (.p12/.pfx) file, base64.' },
    password: { type: 'string', maxLength: 256, writeOnly: true, description: 'The password of the file.' },
  },
} as const;

/** The output of an upload tool: the certificate as shown. */
export const CERTIFICATE_UPLOAD_OUTPUT = {
  type: 'object', additionalProperties: false, required: ['certificate'],
  properties: { certificate: CERTIFICATE_VIEW_SCHEMA },
} as const;

/** The visible part of a stored certificate. */
export function certificateView(doc: Pick<CertificateDoc, 'subject' | 'issuer' | 'serial' | 'not_after'>): CertificateView {
  return { subject: doc.subject, issuer: doc.issuer, serial: doc.serial, not_after: doc.not_after.toISOString() };
}

/** Where and how one service keeps its certificates. */
export interface CertificateStoreOptions {
  /** The mongoose model's name and its collection. */
  model: string;
  collection: string;
  /** The seal context's prefix; the workspace follows it (`<prefix>:<workspace>`). */
  sealPrefix: string;
  /** The tool that uploads a new certificate, named in refusals. */
  uploadTool: string;
  /** How refusals name the certificate (e.g. `signing certificate`) and its key (`signing key`). */
  certificateName: string;
  keyName: string;
  /** Whether a missing sealing key is refused as failing before any effect (see CuadraError). */
  sealerRefusalBeforeAnyEffect: boolean;
}

/** One service's certificate store: its collection, its sealer check, keeping a certificate and opening its key. */
export interface CertificateStore {
  certificates(db: Connection): Model<CertificateDoc>;
  /** The sealer, or `unavailable`: without a sealing key a private key cannot be kept safely, so it is not kept at all. */
  requireSealer(env?: NodeJS.ProcessEnv): Sealer;
  /** Keeps a read certificate as the workspace's (replacing the previous one), its key sealed. */
  storeCertificate(db: Connection, workspace: string, read: ReadCertificate, sealer: Sealer, now: Date): Promise<CertificateDoc>;
  /**
   * The workspace's signing key, or null when it uploaded no certificate. A certificate that has
   * expired (or a key that no longer opens, e.g. after the sealing key changed) is a `conflict`:
   * signing with it would only be refused by the authority, and sending unsigned would hide it.
   */
  signingKey(db: Connection, workspace: string, now: Date): Promise<SigningKey | null>;
  /**
   * An upload: checks for a sealing key before the file is read (without one the key could not be
   * kept, so nothing is), reads and validates the PKCS#12 file, keeps it and answers it as shown.
   */
  upload(db: Connection, workspace: string, input: { p12_base64: string; password: string }, now: Date): Promise<{ certificate: CertificateView }>;
}

export function certificateStore(options: CertificateStoreOptions): CertificateStore {
  const schema = new Schema<CertificateDoc>(
    {
      _id: { type: String, required: true }, key_sealed: { type: String, required: true }, cert_pem: { type: String, required: true },
      fingerprint: { type: String, required: true }, subject: String, issuer: String, serial: String, not_before: Date, not_after: Date, uploaded_at: Date,
    },
    { versionKey: false },
  );
  const certificates = (db: Connection): Model<CertificateDoc> => modelOn<CertificateDoc>(db, options.model, schema, options.collection);
  /** What a certificate's key is sealed to: the service and the workspace, so a box copied elsewhere does not open. */
  const sealContext = (workspace: string): string => `${options.sealPrefix}:${workspace}`;
  const requireSealer = (env: NodeJS.ProcessEnv = process.env): Sealer => {
    const sealer = sealerFromEnv(env);
    if (!sealer) {
      throw new CuadraError('unavailable', 'This server has no sealing key (CUADRA_SEAL_KEY), so a signing certificate cannot be stored safely; ask the operator to set one.', options.sealerRefusalBeforeAnyEffect ? { beforeAnyEffect: true } : {});
    }
    return sealer;
  };
  const storeCertificate = async (db: Connection, workspace: string, read: ReadCertificate, sealer: Sealer, now: Date): Promise<CertificateDoc> => {
    const doc: CertificateDoc = {
      _id: workspace, key_sealed: sealer.seal(read.keyPem, sealContext(workspace)), cert_pem: read.certPem, fingerprint: read.fingerprint,
      subject: read.subject, issuer: read.issuer, serial: read.serial, not_before: read.notBefore, not_after: read.notAfter, uploaded_at: now,
    };
    await certificates(db).replaceOne({ _id: workspace }, doc, { upsert: true });
    return doc;
  };
  return {
    certificates,
    requireSealer,
    storeCertificate,
    async signingKey(db, workspace, now) {
      const doc = await certificates(db).findById(workspace).lean();
      if (!doc) return null;
      if (doc.not_after.getTime() <= now.getTime()) {
        throw new CuadraError('conflict', `The ${options.certificateName} expired on ${doc.not_after.toISOString().slice(0, 10)}; upload a new one with ${options.uploadTool}.`);
      }
      const keyPem = requireSealer().open(doc.key_sealed, sealContext(workspace));
      if (!keyPem) throw new CuadraError('conflict', `The stored ${options.keyName} cannot be opened with this server's sealing key; upload the certificate again with ${options.uploadTool}.`);
      return { keyPem, certPem: doc.cert_pem, fingerprint: doc.fingerprint, issuer: doc.issuer, serial: doc.serial };
    },
    async upload(db, workspace, input, now) {
      const sealer = requireSealer();
      const read = readPkcs12(input.p12_base64, input.password, now);
      return { certificate: certificateView(await storeCertificate(db, workspace, read, sealer, now)) };
    },
  };
}
