import type { Element, Node } from '@xmldom/xmldom';

export type { Element as XmlElement } from '@xmldom/xmldom';

/** Escapes text or an attribute value for XML. */
export function xmlEscape(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

// The one hardened XML reader of the product (DOCTYPE refused, bounded): shared/src/xml.ts.
export { MAX_XML_CHARS, MAX_XML_DEPTH, MAX_XML_ELEMENTS, parseXml, XmlError } from '@cuadra/shared/xml';

/** The namespaces of DIAN's UBL documents, by the prefixes the Anexo Técnico uses. */
export const UBL_NS = {
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
  sts: 'dian:gov:co:facturaelectronica:Structures-2-1',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  xades: 'http://uri.etsi.org/01903/v1.3.2#',
} as const;

/** The namespace of a UBL 2.1 document's root (`Invoice`, `CreditNote`, `DebitNote`, `AttachedDocument`, …). */
export function ublRootNs(name: string): string {
  return `urn:oasis:names:specification:ubl:schema:xsd:${name}-2`;
}

function isElement(n: Node): n is Element {
  return n.nodeType === 1;
}

/** `cbc:ID` → its namespace and local name (a prefix of {@link UBL_NS}); an unprefixed name is in no namespace. */
function qname(step: string): { ns: string | null; local: string } {
  const i = step.indexOf(':');
  if (i < 0) return { ns: null, local: step };
  const ns = UBL_NS[step.slice(0, i) as keyof typeof UBL_NS];
  if (!ns) throw new Error(`Unknown prefix in ${step}.`);
  return { ns, local: step.slice(i + 1) };
}

/** Every direct child element with this name (`cac:TaxTotal`: namespace by the UBL prefix, not by how the document spells it). */
export function childrenNamed(el: Element | null | undefined, name: string): Element[] {
  if (!el) return [];
  const { ns, local } = qname(name);
  const out: Element[] = [];
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (isElement(n) && n.localName === local && (n.namespaceURI ?? null) === ns) out.push(n);
  }
  return out;
}

/** The first child element along a path of names (`cac:LegalMonetaryTotal/cbc:PayableAmount`), or undefined. */
export function child(el: Element | null | undefined, path: string): Element | undefined {
  let cur: Element | undefined = el ?? undefined;
  for (const step of path.split('/')) {
    cur = childrenNamed(cur, step)[0];
    if (!cur) return undefined;
  }
  return cur;
}

/** The text of an element (its descendants' text, CDATA included), or '' when absent. */
export function textOf(el: Element | null | undefined): string {
  return el?.textContent ?? '';
}
