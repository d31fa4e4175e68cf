import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import type { Document, Element } from '@xmldom/xmldom';
import forge from 'node-forge';
import { SignedXml } from 'xml-crypto';
import { CuadraError } from './errors.ts';
import { parseXml } from './xml.ts';

// How a signing service keeps its certificate (reading, validating and sealing it), beside the signer so
// only the services that sign load it.
export { CERTIFICATE_UPLOAD_INPUT, CERTIFICATE_UPLOAD_OUTPUT, CERTIFICATE_VIEW_SCHEMA, certificateStore, certificateView } from './certificates.ts';
export type { CertificateDoc, CertificateStore, CertificateStoreOptions, CertificateView } from './certificates.ts';

/**
 * A small generic XAdES-EPES signer and checker (ETSI TS 101 903 v1.3.2, enveloped), and the
 * reading of the PKCS#12 file a signing certificate comes in. Used by e-invoicing (invoices
 * subgraph, UBL 2.1 invoices and notes) and electronic payroll (payroll subgraph, Nómina
 * Individual and its adjustment notes): each shapes its document (namespaces on the root, the
 * `ext:UBLExtension` that receives the signature) and says where the signature goes and which
 * policy and role it names. Import it as `@cuadra/shared/xades` (it loads xml-crypto and
 * node-forge, which the other services do not need).
 */

const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';
export const XADES141 = 'http://uri.etsi.org/01903/v1.4.1#';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const SIGNED_PROPERTIES = 'http://uri.etsi.org/01903#SignedProperties';
export const XMLDSIG_NS = DS;
export const XADES_NS = XADES;

/** A signature policy (XAdES-EPES SignaturePolicyIdentifier): its identifier (URL), SHA-256 (base64) and description. */
export interface XadesPolicy { url: string; hash: string; description: string }

/** The key and certificate a document is signed with. */
export interface SigningKey {
  keyPem: string;
  certPem: string;
  /** SHA-256 of the certificate (base64): which certificate a stored signature was made with. */
  fingerprint: string;
  /** The issuer's name, RFC 4514 (XAdES X509IssuerName). */
  issuer: string;
  /** Serial number, decimal (XAdES X509SerialNumber). */
  serial: string;
}

/** What a document's signature is made with besides the key: the policy, the signer's claimed role, and where it goes. */
export interface XadesOptions {
  policy: XadesPolicy;
  role: string;
  /** XPath of the element the ds:Signature is appended to (an `ext:ExtensionContent`). */
  location: string;
}

function xmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function certBase64(certPem: string): string {
  return certPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

/** SigningTime as DIAN writes it: Colombian local time with milliseconds and offset. */
export function signingTime(at: Date): string {
  return `${new Date(at.getTime() - 5 * 3600_000).toISOString().slice(0, 23)}-05:00`;
}

/**
 * Signs `xml` (XAdES-EPES, enveloped): RSA-SHA256 over inclusive C14N, three references (the
 * whole document with the enveloped transform, the KeyInfo and the SignedProperties), and
 * SignedProperties with SigningTime, the SigningCertificate's digest and issuer/serial, the policy
 * identifier with its hash, and the claimed role. The document must already declare the `ds`,
 * `xades` (and, if wanted, `xades141`) prefixes on its root and hold the element `location` names.
 * xml-crypto does the XML-signature work; this only shapes what the policy requires.
 */
export function signXadesEpes(xml: string, key: SigningKey, at: Date, options: XadesOptions): string {
  const id = `xmldsig-${randomUUID()}`;
  const cert = certBase64(key.certPem);
  const certDigest = createHash('sha256').update(Buffer.from(cert, 'base64')).digest('base64');
  const { policy, role } = options;
  // xades is declared again here: xml-crypto parses the Object's content on its own, where the root's declarations are not in scope.
  const qualifying = `<xades:QualifyingProperties xmlns:xades="${XADES}" Target="#${id}"><xades:SignedProperties Id="${id}-signedprops"><xades:SignedSignatureProperties>`
    + `<xades:SigningTime>${signingTime(at)}</xades:SigningTime>`
    + `<xades:SigningCertificate><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>${certDigest}</ds:DigestValue></xades:CertDigest>`
    + `<xades:IssuerSerial><ds:X509IssuerName>${xmlText(key.issuer)}</ds:X509IssuerName><ds:X509SerialNumber>${key.serial}</ds:X509SerialNumber></xades:IssuerSerial></xades:Cert></xades:SigningCertificate>`
    + `<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId><xades:Identifier>${policy.url}</xades:Identifier><xades:Description>${xmlText(policy.description)}</xades:Description></xades:SigPolicyId>`
    + `<xades:SigPolicyHash><ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>${policy.hash}</ds:DigestValue></xades:SigPolicyHash></xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>`
    + `<xades:SignerRole><xades:ClaimedRoles><xades:ClaimedRole>${xmlText(role)}</xades:ClaimedRole></xades:ClaimedRoles></xades:SignerRole>`
    + '</xades:SignedSignatureProperties></xades:SignedProperties></xades:QualifyingProperties>';
  const sig = new SignedXml({
    privateKey: key.keyPem,
    publicCert: key.certPem,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: C14N,
    keyInfoAttributes: { Id: `${id}-keyinfo` },
    getKeyInfoContent: ({ prefix } = {}) => `<${prefix}:X509Data><${prefix}:X509Certificate>${cert}</${prefix}:X509Certificate></${prefix}:X509Data>`,
    objects: [{ content: qualifying }],
  });
  sig.addReference({ xpath: '/*', isEmptyUri: true, id: `${id}-ref0`, transforms: [ENVELOPED], digestAlgorithm: SHA256 });
  sig.addReference({ xpath: `//*[@Id='${id}-keyinfo']`, transforms: [C14N], digestAlgorithm: SHA256 });
  sig.addReference({ xpath: `//*[@Id='${id}-signedprops']`, type: SIGNED_PROPERTIES, transforms: [C14N], digestAlgorithm: SHA256 });
  sig.computeSignature(xml, {
    prefix: 'ds',
    attrs: { Id: id },
    existingPrefixes: { ds: DS },
    location: { reference: options.location, action: 'append' },
  });
  return sig.getSignedXml();
}

function only(parent: Element | Document, ns: string, local: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, local)) as unknown as Element[];
}

function textOf(el: Element | undefined): string {
  return el?.textContent?.trim() ?? '';
}

/** The result of checking a signed document: fine, no signature at all, or what does not hold (Spanish, as the authority words it). */
export type XadesCheck = { ok: true } | { ok: false; missing: true } | { ok: false; missing: false; problem: string };

/**
 * Checks a XAdES-EPES signature as DIAN does, against the certificate the issuer registered
 * (`certPem`): exactly one ds:Signature, where `placement` accepts it (it answers a problem or
 * null); RSA-SHA256; a reference to the whole document (enveloped) and one to the
 * SignedProperties; every digest and the signature value correct (xml-crypto, with the registered
 * certificate as the only key); the KeyInfo and SigningCertificate naming that certificate; the
 * policy and its hash; the claimed role; a SigningTime inside the certificate's validity.
 */
export function verifyXadesEpes(xml: string, certPem: string, options: { policy: XadesPolicy; role: string; placement: (signature: Element, doc: Document) => string | null }): XadesCheck {
  const invalid = (problem: string): XadesCheck => ({ ok: false, missing: false, problem });
  let doc: Document;
  try {
    // The hardened reader: a signed document with a DOCTYPE (entities) is not read at all.
    doc = parseXml(xml).ownerDocument!;
  } catch (err) {
    return invalid(`el XML no se puede leer (${(err as Error).message}).`);
  }
  const signatures = only(doc, DS, 'Signature');
  if (signatures.length === 0) return { ok: false, missing: true };
  if (signatures.length > 1) return invalid('hay más de una ds:Signature.');
  const signature = signatures[0];
  const misplaced = options.placement(signature, doc);
  if (misplaced) return invalid(misplaced);
  const method = only(signature, DS, 'SignatureMethod')[0]?.getAttribute('Algorithm');
  if (method !== RSA_SHA256) return invalid(`el algoritmo de firma debe ser RSA-SHA256, no ${method ?? 'ninguno'}.`);
  const id = signature.getAttribute('Id') ?? '';
  const references = only(signature, DS, 'Reference').filter((r) => (r.parentNode as Element | null)?.localName === 'SignedInfo');
  const whole = references.find((r) => r.getAttribute('URI') === '');
  if (!whole || !only(whole, DS, 'Transform').some((t) => t.getAttribute('Algorithm') === ENVELOPED)) return invalid('la firma no cubre el documento completo (referencia URI="" con enveloped-signature).');
  const props = only(signature, XADES, 'SignedProperties')[0];
  const propsRef = references.find((r) => r.getAttribute('Type') === SIGNED_PROPERTIES);
  if (!props || !propsRef || propsRef.getAttribute('URI') !== `#${props.getAttribute('Id') ?? ''}`) return invalid('falta la referencia a xades:SignedProperties.');
  const qualifying = only(signature, XADES, 'QualifyingProperties')[0];
  if (qualifying?.getAttribute('Target') !== `#${id}`) return invalid('xades:QualifyingProperties no apunta a esta firma.');

  const registered = new X509Certificate(certPem);
  const embedded = textOf(only(signature, DS, 'X509Certificate')[0]).replace(/\s+/g, '');
  if (!embedded || !Buffer.from(embedded, 'base64').equals(registered.raw)) return invalid('el certificado de KeyInfo no es el registrado por el emisor.');
  const certDigest = only(props, XADES, 'CertDigest')[0];
  if (only(certDigest ?? props, DS, 'DigestMethod')[0]?.getAttribute('Algorithm') !== SHA256
    || textOf(only(certDigest ?? props, DS, 'DigestValue')[0]) !== createHash('sha256').update(registered.raw).digest('base64')) {
    return invalid('xades:SigningCertificate no corresponde al certificado.');
  }
  if (BigInt(`0x${registered.serialNumber}`).toString(10) !== textOf(only(props, DS, 'X509SerialNumber')[0])) return invalid('el número de serie de xades:SigningCertificate no corresponde.');
  if (textOf(only(props, XADES, 'Identifier')[0]) !== options.policy.url || textOf(only(only(props, XADES, 'SigPolicyHash')[0] ?? props, DS, 'DigestValue')[0]) !== options.policy.hash) {
    return invalid('la política de firma no es la de la DIAN (identificador y hash).');
  }
  if (!only(props, XADES, 'ClaimedRole').some((r) => textOf(r) === options.role)) return invalid(`falta el rol del firmante "${options.role}".`);
  const signedAt = new Date(textOf(only(props, XADES, 'SigningTime')[0]));
  if (Number.isNaN(signedAt.getTime())) return invalid('falta xades:SigningTime.');
  if (signedAt < new Date(registered.validFrom) || signedAt > new Date(registered.validTo)) return invalid('la firma se hizo fuera de la vigencia del certificado.');

  const check = new SignedXml({ publicCert: certPem, getCertFromKeyInfo: () => null });
  try {
    check.loadSignature(signature as unknown as Parameters<SignedXml['loadSignature']>[0]);
    if (!check.checkSignature(xml)) return invalid('una referencia o el valor de la firma no corresponden al documento (¿fue modificado después de firmarlo?).');
  } catch (err) {
    return invalid(`${(err as Error).message}.`);
  }
  return { ok: true };
}

/* ------------------------------------------------------------------ PKCS#12 */

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
 * certificate that belongs to it. Refuses, naming the field (`/p12_base64`, `/password`), what is
 * not base64, not PKCS#12, a wrong password, a file without an RSA key and its certificate, and a
 * certificate that is not valid at `now`.
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
