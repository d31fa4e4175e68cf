import { xmlChild, xmlChildren, xmlText } from '@cuadra/shared/xml';
import { statementXml } from './camt.ts';
import { badFile, isDate, minorUnits, type ParsedStatement, type StatementEntry } from './entry.ts';

/*
 * OFX bank statements (STMTRS), both generations: OFX 2.x is XML and goes straight to the
 * hardened XML reader (shared/src/xml.ts: a DOCTYPE is refused, no entity is read); OFX 1.x is SGML (a colon header, then tags whose leaf elements are never
 * closed), which is turned into well-formed XML by walking its tags — each leaf closed where its
 * text ends, each aggregate where its end tag is — and then parsed the same way. The OFX npm
 * parsers were not used: they rewrite the SGML with regular expressions and are barely kept.
 */

function escapeXml(s: string): string {
  let out = '';
  for (const c of s) out += c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c;
  return out;
}

/** SGML entities OFX 1.x allows in text. */
function decodeSgml(s: string): string {
  return s.split('&lt;').join('<').split('&gt;').join('>').split('&nbsp;').join(' ').split('&amp;').join('&');
}

const TAG_NAME = (name: string) => name.length > 0 && name.length <= 64 && [...name].every((c) => (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '.' || c === '_');

/** OFX 1.x SGML body → XML, closing leaf elements; refuses a structure that does not nest. */
export function sgmlToXml(body: string): string {
  const out: string[] = [];
  const open: string[] = [];
  let i = 0;
  while (i < body.length) {
    const lt = body.indexOf('<', i);
    const textPart = (lt === -1 ? body.slice(i) : body.slice(i, lt)).trim();
    if (textPart) {
      // Text belongs to the element just opened: a leaf, closed here unless the file closes it itself.
      const leaf = open.pop();
      if (!leaf) throw badFile('The OFX file has text outside any element.');
      out.push(escapeXml(decodeSgml(textPart)));
      const after = lt === -1 ? '' : body.slice(lt, body.indexOf('>', lt) + 1);
      if (after === `</${leaf}>`) i = lt + after.length;
      else i = lt === -1 ? body.length : lt;
      out.push(`</${leaf}>`);
      continue;
    }
    if (lt === -1) break;
    const gt = body.indexOf('>', lt);
    if (gt === -1) throw badFile('The OFX file ends inside a tag.');
    const raw = body.slice(lt + 1, gt).trim();
    i = gt + 1;
    if (raw.startsWith('/')) {
      const name = raw.slice(1).trim();
      // An end tag closes its element; empty leaves opened inside it and never given text are closed too.
      const at = open.lastIndexOf(name);
      if (at === -1) throw badFile(`The OFX file closes <${name}> which is not open.`);
      while (open.length > at) out.push(`</${open.pop()}>`);
    } else {
      if (!TAG_NAME(raw)) throw badFile(`The OFX file has a malformed tag <${raw.slice(0, 40)}>.`);
      open.push(raw);
      out.push(`<${raw}>`);
    }
  }
  if (open.length) throw badFile(`The OFX file ends with <${open[open.length - 1]}> still open.`);
  return out.join('');
}

/** YYYYMMDD[HHMMSS[.XXX]][[±h:TZ]] → YYYY-MM-DD (the day as the bank wrote it). */
function ofxDate(s: string | null, what: string): string {
  const d = s && s.length >= 8 ? `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}` : '';
  if (!isDate(d)) throw badFile(`${what}: "${s ?? ''}" is not an OFX date.`);
  return d;
}

/** Reads an OFX 1.x (SGML) or 2.x (XML) bank statement. */
export function parseOfx(content: string): ParsedStatement {
  const start = content.indexOf('<OFX>');
  if (start === -1) throw badFile('The file is not OFX: it has no <OFX> element.');
  const head = content.slice(0, start);
  const isXml = head.includes('<?xml') || head.includes('<?OFX');
  if (!isXml && !head.includes('OFXHEADER:')) throw badFile('The file is not OFX: it has neither an OFX 1.x header (OFXHEADER:100) nor an XML declaration.');
  // OFX 2.x is the file itself (its `<?OFX …?>` header is a processing instruction of the prolog).
  const root = statementXml(isXml ? content : sgmlToXml(content.slice(start)), 'OFX');
  const rs = root.localName === 'OFX' ? xmlChild(root, 'BANKMSGSRSV1/STMTTRNRS/STMTRS') : undefined;
  if (!rs) throw badFile('The OFX file holds no bank statement (BANKMSGSRSV1/STMTTRNRS/STMTRS).');
  const currency = xmlText(rs, 'CURDEF');
  if (!currency || currency.length !== 3) throw badFile('The OFX statement has no currency (CURDEF).');
  const list = xmlChild(rs, 'BANKTRANLIST');
  const account = xmlText(rs, 'BANKACCTFROM/ACCTID');
  const entries: StatementEntry[] = xmlChildren(list, 'STMTTRN').map((t, i) => {
    const what = `Transaction ${i + 1}`;
    const fitid = xmlText(t, 'FITID');
    if (!fitid) throw badFile(`${what} has no FITID.`);
    const name = xmlText(t, 'NAME');
    const memo = xmlText(t, 'MEMO');
    return {
      entry_id: fitid, date: ofxDate(xmlText(t, 'DTPOSTED'), what), amount: minorUnits(xmlText(t, 'TRNAMT') ?? '', currency, what), currency,
      description: [name, memo].filter(Boolean).join(' — ') || xmlText(t, 'TRNTYPE') || 'Sin descripción',
      reference: xmlText(t, 'REFNUM') ?? xmlText(t, 'CHECKNUM') ?? null,
    };
  });
  const dtStart = xmlText(list, 'DTSTART');
  const dtEnd = xmlText(list, 'DTEND');
  const period = dtStart && dtEnd ? `${ofxDate(dtStart, 'DTSTART')}/${ofxDate(dtEnd, 'DTEND')}` : 'sin-periodo';
  return { statement_id: `${account ?? 'ofx'}:${period}`, account, currency, entries, skipped: 0 };
}
