import { certificateStore, signXadesEpes, verifyXadesEpes, XADES141, XADES_NS, XMLDSIG_NS, type CertificateDoc, type SigningKey, type XadesCheck, type XadesPolicy } from '@cuadra/shared/xades';

/**
 * The employer's signing certificate for electronic payroll (DIAN's "certificado de firma
 * digital"), one per workspace, uploaded to payroll with `payroll.upload_certificate`.
 *
 * Why payroll keeps its own: the payroll subgraph may not read the invoices subgraph's
 * collections, and a private key never travels between services (the graph between subgraphs is
 * read-only and carries no secrets). The same .p12 may be uploaded to both; each service seals
 * its copy, both the one way (@cuadra/shared certificates.ts). The private key is kept only sealed
 * (CONTRACT.md §9) under a context naming the workspace (`epayroll.certificate:<workspace>`), so a
 * box copied elsewhere does not open; the file and its password are never kept. Without a sealing
 * key (CUADRA_SEAL_KEY) nothing is kept.
 */
export type EpayrollCertificateDoc = CertificateDoc;

/** The collection (`_id` = workspace); the signing key, or null when none was uploaded (an expired certificate or a key that no longer opens is a `conflict`: nothing is submitted); an upload. */
export const { certificates: epayrollCertificates, signingKey, upload } = certificateStore({
  model: 'EpayrollCertificate', collection: 'epayroll_certificates', sealPrefix: 'epayroll.certificate',
  uploadTool: 'payroll.upload_certificate', certificateName: 'payroll signing certificate', keyName: 'payroll signing key',
  sealerRefusalBeforeAnyEffect: true,
});

export { CERTIFICATE_UPLOAD_INPUT, CERTIFICATE_UPLOAD_OUTPUT, CERTIFICATE_VIEW_SCHEMA, certificateView } from '@cuadra/shared/xades';

/**
 * DIAN's signature policy v2 and the issuer's role, as e-invoicing signs (invoices
 * e-documents/xades.ts): the payroll annex (Resolución 000013 de 2021) asks for XAdES-EPES
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
