/** Escapes text or an attribute value for XML. */
export function xmlEscape(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** A parsed element: name with prefix (`cbc:ID`), attributes, children and its own text. */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string, at: number): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);|&/g, (_whole, name: string | undefined) => {
    if (!name) throw new XmlError(`A bare "&" is not allowed (near offset ${at}).`);
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    const v = ENTITIES[name];
    if (v === undefined) throw new XmlError(`Unknown entity &${name}; (near offset ${at}).`);
    return v;
  });
}

/** A document that is not well-formed XML. */
export class XmlError extends Error {}

const NAME = /^[A-Za-z_][\w.-]*(:[A-Za-z_][\w.-]*)?$/;

/**
 * Parses a well-formed XML document (elements, attributes, text, entities, comments, CDATA,
 * the XML declaration; no DTDs — the authority refuses them too). Throws {@link XmlError} with
 * the reason when the document is not well-formed. Small on purpose: this is all UBL needs.
 */
export function parseXml(source: string): XmlElement {
  let i = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const text = source.replace(/^\uFEFF/, '');
  if (text.startsWith('<?xml')) {
    const end = text.indexOf('?>');
    if (end < 0) throw new XmlError('The XML declaration is not closed.');
    i = end + 2;
  }
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = lt < 0 ? text.slice(i) : text.slice(i, lt);
    if (chunk.length) {
      if (stack.length === 0) {
        if (chunk.trim()) throw new XmlError(`Text outside the root element (offset ${i}).`);
      } else {
        stack[stack.length - 1].text += decodeEntities(chunk, i);
      }
    }
    if (lt < 0) break;
    i = lt;
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end < 0) throw new XmlError('A comment is not closed.');
      i = end + 3;
    } else if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i);
      if (end < 0 || stack.length === 0) throw new XmlError('A CDATA section is not closed or is outside the root.');
      stack[stack.length - 1].text += text.slice(i + 9, end);
      i = end + 3;
    } else if (text.startsWith('<!', i) || text.startsWith('<?', i)) {
      throw new XmlError(`Declarations and processing instructions are not accepted (offset ${i}).`);
    } else if (text.startsWith('</', i)) {
      const end = text.indexOf('>', i);
      if (end < 0) throw new XmlError('An end tag is not closed.');
      const name = text.slice(i + 2, end).trim();
      const open = stack.pop();
      if (!open || open.name !== name) throw new XmlError(`End tag </${name}> does not match <${open?.name ?? ''}> (offset ${i}).`);
      i = end + 1;
    } else {
      const end = findTagEnd(text, i);
      let body = text.slice(i + 1, end);
      const selfClosing = body.endsWith('/');
      if (selfClosing) body = body.slice(0, -1);
      const nameMatch = /^[^\s/>]+/.exec(body);
      if (!nameMatch || !NAME.test(nameMatch[0])) throw new XmlError(`A malformed start tag (offset ${i}).`);
      const el: XmlElement = { name: nameMatch[0], attrs: {}, children: [], text: '' };
      const attrText = body.slice(nameMatch[0].length);
      const attrRe = /\s+([^\s=]+)\s*=\s*("([^"]*)"|'([^']*)')/gy;
      let pos = 0;
      while (pos < attrText.length) {
        if (/^\s*$/.test(attrText.slice(pos))) break;
        attrRe.lastIndex = pos;
        const m = attrRe.exec(attrText);
        if (!m || !NAME.test(m[1])) throw new XmlError(`A malformed attribute in <${el.name}> (offset ${i}).`);
        if (Object.hasOwn(el.attrs, m[1])) throw new XmlError(`Attribute ${m[1]} repeated in <${el.name}>.`);
        const raw = m[3] ?? m[4];
        if (raw.includes('<')) throw new XmlError(`"<" inside an attribute of <${el.name}>.`);
        el.attrs[m[1]] = decodeEntities(raw, i);
        pos = attrRe.lastIndex;
      }
      if (stack.length) stack[stack.length - 1].children.push(el);
      else if (root) throw new XmlError('More than one root element.');
      else root = el;
      if (!selfClosing) stack.push(el);
      i = end + 1;
    }
  }
  if (stack.length) throw new XmlError(`<${stack[stack.length - 1].name}> is never closed.`);
  if (!root) throw new XmlError('The document has no root element.');
  return root;
}

function findTagEnd(text: string, from: number): number {
  let quote: string | null = null;
  for (let j = from + 1; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return j;
    } else if (c === '<') {
      break;
    }
  }
  throw new XmlError(`A start tag is not closed (offset ${from}).`);
}

/** The first child with this name, following a path of names (`cac:LegalMonetaryTotal/cbc:PayableAmount`). */
export function child(el: XmlElement | undefined, path: string): XmlElement | undefined {
  let cur = el;
  for (const name of path.split('/')) {
    cur = cur?.children.find((c) => c.name === name);
    if (!cur) return undefined;
  }
  return cur;
}

/** Every direct child with this name. */
export function childrenNamed(el: XmlElement | undefined, name: string): XmlElement[] {
  return el ? el.children.filter((c) => c.name === name) : [];
}
