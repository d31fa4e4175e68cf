import { createHash, randomUUID, X509Certificate } from 'node:crypto';
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import type { SigningKey } from './certificate.ts';
import { xmlEscape as x } from './xml.ts';

const DS = 'http://www.w3.org/2000/09/xmldsig#';
const XADES = 'http://uri.etsi.org/01903/v1.3.2#';
const XADES141 = 'http://uri.etsi.org/01903/v1.4.1#';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const SIGNED_PROPERTIES = 'http://uri.etsi.org/01903#SignedProperties';

/**
 * DIAN's signature policy ("Política de firma de los documentos electrónicos", v2): its URL,
 * its SHA-256 in base64 (SigPolicyHash) and its name. Every signed document names it (XAdES-EPES).
 */
export const DIAN_POLICY = {
  url: 'https://facturaelectronica.dian.gov.co/politicadefirma/v2/politicadefirmav2.pdf',
  hash: 'dMoMvtcG5aIzgYo0tIsSQeVJBDnUnfSOfBpxXrmor0Y=',
  description: 'Política de firma para facturas electrónicas de la República de Colombia',
} as const;

/** The signer's role the policy asks of the issuer of an invoice or note. */
export const SIGNER_ROLE = 'supplier';

function certBase64(certPem: string): string {
  return certPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

/** SigningTime as DIAN writes it: Colombian local time with milliseconds and offset. */
export function signingTime(at: Date): string {
  return `${new Date(at.getTime() - 5 * 3600_000).toISOString().slice(0, 23)}-05:00`;
}

/**
 * Signs a UBL invoice or note as DIAN's policy asks (XAdES-EPES, enveloped): the signature goes
 * in a second `ext:UBLExtension/ext:ExtensionContent` (added here), RSA-SHA256 over inclusive
 * C14N, three references (the whole document with the enveloped transform, the KeyInfo and the
 * SignedProperties), and SignedProperties with SigningTime, the SigningCertificate's digest and
 * issuer/serial, the policy identifier with its hash, and the ClaimedRole `supplier`.
 * xml-crypto does the XML-signature work; this only shapes what DIAN requires.
 */
export function signUbl(xml: string, key: SigningKey, at: Date): string {
  const id = `xmldsig-${randomUUID()}`;
  const cert = certBase64(key.certPem);
  const certDigest = createHash('sha256').update(Buffer.from(cert, 'base64')).digest('base64');
  // The namespaces of the signature on the root, as DIAN's samples do, so the signed parts need no declarations of their own.
  const withNs = xml.replace(/<(Invoice|CreditNote|DebitNote)\s/, (m) => `${m}xmlns:ds="${DS}" xmlns:xades="${XADES}" xmlns:xades141="${XADES141}" `)
    .replace('</ext:UBLExtensions>', '<ext:UBLExtension><ext:ExtensionContent></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>');
  // xades is declared again here: xml-crypto parses the Object's content on its own, where the root's declarations are not in scope.
  const qualifying = `<xades:QualifyingProperties xmlns:xades="${XADES}" Target="#${id}"><xades:SignedProperties Id="${id}-signedprops"><xades:SignedSignatureProperties>`
    + `<xades:SigningTime>${signingTime(at)}</xades:SigningTime>`
    + `<xades:SigningCertificate><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>${certDigest}</ds:DigestValue></xades:CertDigest>`
    + `<xades:IssuerSerial><ds:X509IssuerName>${x(key.issuer)}</ds:X509IssuerName><ds:X509SerialNumber>${key.serial}</ds:X509SerialNumber></xades:IssuerSerial></xades:Cert></xades:SigningCertificate>`
    + `<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId><xades:Identifier>${DIAN_POLICY.url}</xades:Identifier><xades:Description>${x(DIAN_POLICY.description)}</xades:Description></xades:SigPolicyId>`
    + `<xades:SigPolicyHash><ds:DigestMethod Algorithm="${SHA256}"/><ds:DigestValue>${DIAN_POLICY.hash}</ds:DigestValue></xades:SigPolicyHash></xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>`
    + `<xades:SignerRole><xades:ClaimedRoles><xades:ClaimedRole>${SIGNER_ROLE}</xades:ClaimedRole></xades:ClaimedRoles></xades:SignerRole>`
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
  sig.computeSignature(withNs, {
    prefix: 'ds',
    attrs: { Id: id },
    existingPrefixes: { ds: DS },
    location: { reference: "/*/*[local-name()='UBLExtensions']/*[local-name()='UBLExtension'][2]/*[local-name()='ExtensionContent']", action: 'append' },
  });
  return sig.getSignedXml();
}

/** One refusal of a signature, with DIAN's rule code. */
export interface SignatureError {
  code: 'FAA02' | 'ZE02';
  message: string;
}

function only(parent: Element | Document, ns: string, local: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, local)) as unknown as Element[];
}

function textOf(el: Element | undefined): string {
  return el?.textContent?.trim() ?? '';
}

/**
 * Verifies a signed UBL document as the authority does, against the certificate the issuer
 * registered (`certPem`): exactly one ds:Signature, in the second UBLExtension; RSA-SHA256;
 * a reference to the whole document (enveloped) and one to the SignedProperties; every digest and
 * the signature value correct (xml-crypto, with the registered certificate as the only key); the
 * KeyInfo and SigningCertificate naming that certificate; DIAN's policy and its hash; a
 * SigningTime inside the certificate's validity. `FAA02` when there is no signature, `ZE02` for
 * any signature that does not hold.
 */
export function verifyUbl(xml: string, certPem: string): SignatureError[] {
  const invalid = (message: string): SignatureError[] => [{ code: 'ZE02', message: `ZE02: valor de la firma inválido: ${message}` }];
  let doc: Document;
  try {
    doc = new DOMParser({ onError: (level, msg) => { if (level !== 'warning') throw new Error(msg); } }).parseFromString(xml, 'text/xml');
  } catch (err) {
    return invalid(`el XML no se puede leer (${(err as Error).message}).`);
  }
  const signatures = only(doc, DS, 'Signature');
  if (signatures.length === 0) return [{ code: 'FAA02', message: 'FAA02: el documento debe llevar ext:UBLExtension/ext:ExtensionContent/ds:Signature (el emisor tiene certificado de firma registrado).' }];
  if (signatures.length > 1) return invalid('hay más de una ds:Signature.');
  const signature = signatures[0];
  const content = signature.parentNode as Element | null;
  const extension = content?.parentNode as Element | null;
  const extensions = only(doc, 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2', 'UBLExtension');
  if (content?.localName !== 'ExtensionContent' || extension?.localName !== 'UBLExtension' || extensions.indexOf(extension) !== 1 || extension.parentNode?.parentNode !== doc.documentElement) {
    return invalid('la firma debe ir en el segundo ext:UBLExtension/ext:ExtensionContent.');
  }
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
  if (textOf(only(props, XADES, 'Identifier')[0]) !== DIAN_POLICY.url || textOf(only(only(props, XADES, 'SigPolicyHash')[0] ?? props, DS, 'DigestValue')[0]) !== DIAN_POLICY.hash) {
    return invalid('la política de firma no es la de la DIAN (identificador y hash).');
  }
  if (!only(props, XADES, 'ClaimedRole').some((r) => textOf(r) === SIGNER_ROLE)) return invalid(`falta el rol del firmante "${SIGNER_ROLE}".`);
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
  return [];
}
