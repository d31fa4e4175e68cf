import { CuadraError, modelOn, sealerFromEnv, type Sealer } from '@cuadra/shared';
import { signXadesEpes, verifyXadesEpes, XADES141, XADES_NS, XMLDSIG_NS, type ReadCertificate, type SigningKey, type XadesCheck, type XadesPolicy } from '@cuadra/shared/xades';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The employer's signing certificate for electronic payroll (DIAN's "certificado de firma
 * digital"), one per workspace, uploaded to payroll with `payroll.upload_certificate`.
 *
 * Why payroll keeps its own: the payroll subgraph may not read the invoices subgraph's
 * collections, and a private key never travels between services (the graph between subgraphs is
 * read-only and carries no secrets). The same .p12 may be uploaded to both; each service seals
 * its copy. The private key is kept only sealed (CONTRACT.md §9) under a context naming the
 * workspace (`epayroll.certificate:<workspace>`), so a box copied elsewhere does not open; the
 * file and its password are never kept. Without a sealing key (CUADRA_SEAL_KEY) nothing is kept.
 */
export interface EpayrollCertificateDoc {
  _id: string; // the workspace
  key_sealed: string;
  cert_pem: string;
  fingerprint: string;
  subject: string;
  issuer: string;
  serial: string;
  not_before: Date;
  not_after: Date;
  uploaded_at: Date;
}

const schema = new Schema<EpayrollCertificateDoc>(
  {
    _id: { type: String, required: true }, key_sealed: { type: String, required: true }, cert_pem: { type: String, required: true },
    fingerprint: { type: String, required: true }, subject: String, issuer: String, serial: String, not_before: Date, not_after: Date, uploaded_at: Date,
  },
  { versionKey: false },
);

/** The payroll signing certificates (`_id` = workspace). */
export function epayrollCertificates(db: Connection): Model<EpayrollCertificateDoc> {
  return modelOn<EpayrollCertificateDoc>(db, 'EpayrollCertificate', schema, 'epayroll_certificates');
}

const sealContext = (workspace: string) => `epayroll.certificate:${workspace}`;

/** The sealer, or `unavailable`: a private key is not kept unsealed. */
export function requireSealer(env: NodeJS.ProcessEnv = process.env): Sealer {
  const sealer = sealerFromEnv(env);
  if (!sealer) throw new CuadraError('unavailable', 'This server has no sealing key (CUADRA_SEAL_KEY), so a signing certificate cannot be stored safely; ask the operator to set one.', { beforeAnyEffect: true });
  return sealer;
}

/** Keeps a read certificate as the workspace's (replacing the previous one), its key sealed. */
export async function storeCertificate(db: Connection, workspace: string, read: ReadCertificate, sealer: Sealer, now: Date): Promise<EpayrollCertificateDoc> {
  const doc: EpayrollCertificateDoc = {
    _id: workspace, key_sealed: sealer.seal(read.keyPem, sealContext(workspace)), cert_pem: read.certPem, fingerprint: read.fingerprint,
    subject: read.subject, issuer: read.issuer, serial: read.serial, not_before: read.notBefore, not_after: read.notAfter, uploaded_at: now,
  };
  await epayrollCertificates(db).replaceOne({ _id: workspace }, doc, { upsert: true });
  return doc;
}

/**
 * The workspace's signing key, or null when it uploaded none. An expired certificate, or a key
 * the server's sealing key no longer opens, is a `conflict` (nothing is submitted).
 */
export async function signingKey(db: Connection, workspace: string, now: Date): Promise<SigningKey | null> {
  const doc = await epayrollCertificates(db).findById(workspace).lean();
  if (!doc) return null;
  if (doc.not_after.getTime() <= now.getTime()) {
    throw new CuadraError('conflict', `The payroll signing certificate expired on ${doc.not_after.toISOString().slice(0, 10)}; upload a new one with payroll.upload_certificate.`);
  }
  const keyPem = requireSealer().open(doc.key_sealed, sealContext(workspace));
  if (!keyPem) throw new CuadraError('conflict', 'The stored payroll signing key cannot be opened with this server\'s sealing key; upload the certificate again with payroll.upload_certificate.');
  return { keyPem, certPem: doc.cert_pem, fingerprint: doc.fingerprint, issuer: doc.issuer, serial: doc.serial };
}

/** JSON Schema of the certificate as shown: whom it names, its issuer, serial and expiry; never the key. */
export const CERTIFICATE_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['subject', 'issuer', 'serial', 'not_after'],
  properties: { subject: { type: 'string' }, issuer: { type: 'string' }, serial: { type: 'string', pattern: '^[0-9]+$' }, not_after: { type: 'string', format: 'date-time' } },
} as const;

export function certificateView(doc: Pick<EpayrollCertificateDoc, 'subject' | 'issuer' | 'serial' | 'not_after'>) {
  return { subject: doc.subject, issuer: doc.issuer, serial: doc.serial, not_after: doc.not_after.toISOString() };
}

/**
 * DIAN's signature policy v2 and the issuer's role, as e-invoicing signs (invoices
 * einvoicing/xades.ts): the payroll annex (Resolución 000013 de 2021) asks for XAdES-EPES
 * "ya conocido por los contribuyentes" (the XSD's own annotation). That payroll names the same
 * policy document and the role `supplier` follows what open implementations for DIAN payroll
 * do; it was not re-read in the annex here.
 */
export const PAYROLL_POLICY: XadesPolicy = {
  url: 'https://facturaelectronica.dian.gov.co/politicadefirma/v2/politicadefirmav2.pdf',
  hash: 'dMoMvtcG5aIzgYo0tIsSQeVJBDnUnfSOfBpxXrmor0Y=',
  description: 'Política de firma para facturas electrónicas de la República de Colombia',
};
export const PAYROLL_SIGNER_ROLE = 'supplier';

const EXT = 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2';

/** The root's attributes and first child a signed payroll document carries (the builders add them when signing). */
export const SIGNATURE_ROOT_ATTRIBUTES = { '@_xmlns:ds': XMLDSIG_NS, '@_xmlns:xades': XADES_NS, '@_xmlns:xades141': XADES141 } as const;
export const SIGNATURE_EXTENSION = { 'ext:UBLExtension': { 'ext:ExtensionContent': '' } } as const;

/** Signs a Nómina Individual or its adjustment note (its root carries the namespaces and the one `ext:UBLExtension`). */
export function signPayrollXml(xml: string, key: SigningKey, at: Date): string {
  return signXadesEpes(xml, key, at, {
    policy: PAYROLL_POLICY, role: PAYROLL_SIGNER_ROLE,
    location: "/*/*[local-name()='UBLExtensions']/*[local-name()='UBLExtension'][1]/*[local-name()='ExtensionContent']",
  });
}

/** Checks a payroll document's signature against the registered certificate: the signature in the first UBLExtension of the root. */
export function verifyPayrollXml(xml: string, certPem: string): XadesCheck {
  return verifyXadesEpes(xml, certPem, {
    policy: PAYROLL_POLICY, role: PAYROLL_SIGNER_ROLE,
    placement: (signature, doc) => {
      const content = signature.parentNode as { localName?: string; parentNode?: unknown } | null;
      const extension = content?.parentNode as { localName?: string; parentNode?: { parentNode?: unknown } } | null;
      const first = doc.getElementsByTagNameNS(EXT, 'UBLExtension')[0] as unknown;
      if (content?.localName !== 'ExtensionContent' || extension?.localName !== 'UBLExtension' || extension !== first || extension.parentNode?.parentNode !== doc.documentElement) {
        return 'la firma debe ir en ext:UBLExtensions/ext:UBLExtension/ext:ExtensionContent.';
      }
      return null;
    },
  });
}
