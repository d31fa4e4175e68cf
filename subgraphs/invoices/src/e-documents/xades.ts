import type { Element } from '@xmldom/xmldom';
import { signingTime, signXadesEpes, verifyXadesEpes, XADES141, XADES_NS, XMLDSIG_NS, type XadesPolicy } from '@cuadra/shared/xades';
import type { SigningKey } from './certificate.ts';

export { signingTime };

/**
 * DIAN's signature policy ("Política de firma de los documentos electrónicos", v2): its URL,
 * its SHA-256 in base64 (SigPolicyHash) and its name. Every signed document names it (XAdES-EPES).
 */
export const DIAN_POLICY: XadesPolicy = {
  url: 'https://facturaelectronica.dian.gov.co/politicadefirma/v2/politicadefirmav2.pdf',
  hash: 'dMoMvtcG5aIzgYo0tIsSQeVJBDnUnfSOfBpxXrmor0Y=',
  description: 'Política de firma para facturas electrónicas de la República de Colombia',
} as const;

/** The signer's role the policy asks of the issuer of an invoice or note. */
export const SIGNER_ROLE = 'supplier';

const EXT = 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2';

/**
 * Signs a UBL invoice or note as DIAN's policy asks (XAdES-EPES, enveloped; the signing core is
 * shared/src/xades.ts): the signature goes in a second `ext:UBLExtension/ext:ExtensionContent`
 * (added here), with the namespaces of the signature declared on the root as DIAN's samples do,
 * DIAN's policy and the ClaimedRole `supplier`.
 */
export function signUbl(xml: string, key: SigningKey, at: Date): string {
  // The namespaces of the signature on the root, as DIAN's samples do, so the signed parts need no declarations of their own.
  const withNs = xml.replace(/<(Invoice|CreditNote|DebitNote)\s/, (m) => `${m}xmlns:ds="${XMLDSIG_NS}" xmlns:xades="${XADES_NS}" xmlns:xades141="${XADES141}" `)
    .replace('</ext:UBLExtensions>', '<ext:UBLExtension><ext:ExtensionContent></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>');
  return signXadesEpes(withNs, key, at, {
    policy: DIAN_POLICY,
    role: SIGNER_ROLE,
    location: "/*/*[local-name()='UBLExtensions']/*[local-name()='UBLExtension'][2]/*[local-name()='ExtensionContent']",
  });
}

/**
 * Signs DIAN's AttachedDocument (the container sent to the buyer) the same way, in its one
 * ext:UBLExtension (an AttachedDocument carries no DianExtensions before it).
 */
export function signAttached(xml: string, key: SigningKey, at: Date): string {
  const withNs = xml.replace(/<AttachedDocument\s/, (m) => `${m}xmlns:ds="${XMLDSIG_NS}" xmlns:xades="${XADES_NS}" xmlns:xades141="${XADES141}" `);
  return signXadesEpes(withNs, key, at, {
    policy: DIAN_POLICY,
    role: SIGNER_ROLE,
    location: "/*/*[local-name()='UBLExtensions']/*[local-name()='UBLExtension'][1]/*[local-name()='ExtensionContent']",
  });
}

/** One refusal of a signature, with DIAN's rule code. */
export interface SignatureError {
  code: 'FAA02' | 'ZE02';
  message: string;
}

/**
 * Verifies a signed UBL document as the authority does, against the certificate the issuer
 * registered (`certPem`): exactly one ds:Signature, in the second UBLExtension, and everything
 * shared/src/xades.ts verifyXadesEpes checks (algorithm, references, digests and value with the
 * registered certificate, SigningCertificate, DIAN's policy and its hash, the role, SigningTime in
 * the certificate's validity). `FAA02` when there is no signature, `ZE02` for any signature that does not hold.
 */
export function verifyUbl(xml: string, certPem: string): SignatureError[] {
  const checked = verifyXadesEpes(xml, certPem, {
    policy: DIAN_POLICY,
    role: SIGNER_ROLE,
    placement: (signature, doc) => {
      const content = signature.parentNode as Element | null;
      const extension = content?.parentNode as Element | null;
      const extensions = Array.from(doc.getElementsByTagNameNS(EXT, 'UBLExtension')) as unknown as Element[];
      if (content?.localName !== 'ExtensionContent' || extension?.localName !== 'UBLExtension' || extensions.indexOf(extension) !== 1 || extension.parentNode?.parentNode !== doc.documentElement) {
        return 'la firma debe ir en el segundo ext:UBLExtension/ext:ExtensionContent.';
      }
      return null;
    },
  });
  if (checked.ok) return [];
  if (checked.missing) return [{ code: 'FAA02', message: 'FAA02: el documento debe llevar ext:UBLExtension/ext:ExtensionContent/ds:Signature (el emisor tiene certificado de firma registrado).' }];
  return [{ code: 'ZE02', message: `ZE02: valor de la firma inválido: ${checked.problem}` }];
}
