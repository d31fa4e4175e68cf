import { DOMParser, type Element, type Node } from '@xmldom/xmldom';
import { XMLValidator } from 'fast-xml-parser';

export type { Element as XmlElement } from '@xmldom/xmldom';

/*
 * The one way Cuadra reads XML it did not write (issue 31, finding 5): bank statements (camt.053,
 * OFX 2.x and OFX 1.x once closed into XML), supplier e-invoices and documents, the authority
 * sandboxes, signatures being verified. A document type declaration is refused before anything
 * parses the text, so no entity — internal (billion laughs, or a value swapped in where the
 * schema was checked) or external (a file or URL read) — is ever declared, expanded or fetched.
 * A refusal is an {@link XmlError}: the caller turns it into its own 422 `invalid_input`.
 */

/** A document that is not well-formed XML, or that Cuadra does not read (a DTD, too big, too deep). */
export class XmlError extends Error {}

/** The largest document read (characters): a signed invoice of 500 lines is ~1 MB; an AttachedDocument carries it twice at most. */
export const MAX_XML_CHARS = 8_000_000;
/** The deepest element nesting read: UBL needs about 12 levels, camt.053 about 10; the database refuses past 100. */
export const MAX_XML_DEPTH = 100;
/** The most elements read in one document. */
export const MAX_XML_ELEMENTS = 50_000;

/**
 * Refuses a document type declaration in the prolog (the only place one can stand), reading
 * nothing but the prolog: the XML declaration, processing instructions, comments and white space
 * before the root element. Anything else there is left to the parsers to refuse.
 */
function refuseDoctype(text: string): void {
  let i = 0;
  for (;;) {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\r' || text[i] === '\n')) i++;
    if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      if (end === -1) return;
      i = end + 2;
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end === -1) return;
      i = end + 3;
    } else {
      if (text.startsWith('<!', i) && text.slice(i + 2, i + 9).toUpperCase() === 'DOCTYPE') {
        throw new XmlError('A document type declaration (DOCTYPE) is not accepted: no DTD or entity is read.');
      }
      return;
    }
  }
}

/**
 * Parses a well-formed XML document with @xmldom/xmldom and answers its root element. Refused
 * with {@link XmlError}, before anything is expanded or fetched: text over {@link MAX_XML_CHARS}
 * characters, any DOCTYPE, anything fast-xml-parser's validator finds not well-formed (a bare `&`
 * xmldom lets through, an entity that is not one of XML's five), anything xmldom reports as an
 * error, processing instructions inside the root element, more than {@link MAX_XML_DEPTH} levels
 * or {@link MAX_XML_ELEMENTS} elements.
 */
export function parseXml(source: string): Element {
  if (typeof source !== 'string') throw new XmlError('The document is not text.');
  if (source.length > MAX_XML_CHARS) throw new XmlError(`The document has ${source.length} characters; at most ${MAX_XML_CHARS} are read.`);
  const text = source.replace(/^\uFEFF/, '');
  refuseDoctype(text);
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) throw new XmlError(`${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col}).`);
  let root: Element | null;
  try {
    const doc = new DOMParser({
      onError: (level, msg) => {
        if (level !== 'warning') throw new XmlError(String(msg).split('\n')[0]);
      },
    }).parseFromString(text, 'text/xml');
    // Never reached with a DOCTYPE (refused above); kept so no later change of the prolog scan lets one through.
    if (doc.doctype) throw new XmlError('A document type declaration (DOCTYPE) is not accepted: no DTD or entity is read.');
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

/**
 * The direct child elements of `el` with this local name, in document order; with `ns`, only
 * those in that namespace (null: in no namespace).
 */
export function xmlChildren(el: Element | null | undefined, local: string, ns?: string | null): Element[] {
  const out: Element[] = [];
  if (!el) return out;
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === local && (ns === undefined || ((n as Element).namespaceURI ?? null) === ns)) out.push(n as Element);
  }
  return out;
}

/** The first element along a path of local names (`Acct/Id/IBAN`), each in `ns` when given, or undefined. */
export function xmlChild(el: Element | null | undefined, path: string, ns?: string | null): Element | undefined {
  let cur: Element | undefined = el ?? undefined;
  for (const step of path.split('/')) {
    cur = xmlChildren(cur, step, ns)[0];
    if (!cur) return undefined;
  }
  return cur;
}

/** The trimmed text of the element along `path` from `el` (its descendants' text, CDATA included), or null when absent or empty. */
export function xmlText(el: Element | null | undefined, path?: string, ns?: string | null): string | null {
  const target = path ? xmlChild(el, path, ns) : el ?? undefined;
  const text = target?.textContent?.trim() ?? '';
  return text.length ? text : null;
}
