import { DOMParser, type Element, type Node } from '@xmldom/xmldom';
import { XMLValidator } from 'fast-xml-parser';

export type { Element as XmlElement } from '@xmldom/xmldom';

/** Escapes text or an attribute value for XML. */
export function xmlEscape(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** A document that is not well-formed XML, or that this service does not read (DTDs, too big, too deep). */
export class XmlError extends Error {}

/** The largest document read (characters): a signed invoice of 500 lines is ~1 MB; an AttachedDocument carries it twice at most. */
export const MAX_XML_CHARS = 8_000_000;
/** The deepest element nesting read: UBL needs about 12 levels; the database refuses past 100. */
export const MAX_XML_DEPTH = 100;
/** The most elements read in one document. */
export const MAX_XML_ELEMENTS = 50_000;

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

/**
 * Parses a well-formed XML document with @xmldom/xmldom and answers its root element. Refused
 * with {@link XmlError} (nothing is expanded or fetched): anything xmldom reports as an error,
 * what fast-xml-parser's validator finds not well-formed (a bare `&` xmldom lets through), any
 * DOCTYPE (so no entity declarations: the authority refuses DTDs too), processing instructions,
 * more than {@link MAX_XML_CHARS} characters, more than {@link MAX_XML_DEPTH} levels or
 * {@link MAX_XML_ELEMENTS} elements.
 */
export function parseXml(source: string): Element {
  if (typeof source !== 'string') throw new XmlError('The document is not text.');
  if (source.length > MAX_XML_CHARS) throw new XmlError(`The document has ${source.length} characters; at most ${MAX_XML_CHARS} are read.`);
  const text = source.replace(/^\uFEFF/, '');
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) throw new XmlError(`${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col}).`);
  let root: Element | null;
  try {
    const doc = new DOMParser({
      onError: (level, msg) => {
        if (level !== 'warning') throw new XmlError(String(msg).split('\n')[0]);
      },
    }).parseFromString(text, 'text/xml');
    if (doc.doctype) throw new XmlError('A DOCTYPE (DTD) is not accepted.');
    root = doc.documentElement;
  } catch (err) {
    if (err instanceof XmlError) throw err;
    if (err instanceof RangeError) throw new XmlError('The document is nested too deeply.');
    throw new XmlError((err as Error).message.split('\n')[0]);
  }
  if (!root) throw new XmlError('The document has no root element.');
  checkShape(root);
  return root;
}

/** Walks the tree without recursion: refuses processing instructions, and too deep or too many elements. */
function checkShape(root: Element): void {
  let elements = 0;
  const stack: { node: Node; depth: number }[] = [{ node: root, depth: 1 }];
  while (stack.length) {
    const { node, depth } = stack.pop()!;
    if (node.nodeType === 7) throw new XmlError('Processing instructions are not accepted.');
    if (node.nodeType !== 1) continue;
    if (depth > MAX_XML_DEPTH) throw new XmlError(`The document nests elements more than ${MAX_XML_DEPTH} deep.`);
    if (++elements > MAX_XML_ELEMENTS) throw new XmlError(`The document has more than ${MAX_XML_ELEMENTS} elements.`);
    for (let c = node.firstChild; c; c = c.nextSibling) stack.push({ node: c, depth: depth + 1 });
  }
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
