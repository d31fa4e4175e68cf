import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { cufe, cufeSource } from '../src/e-documents/cufe.ts';
import { validateDocument } from '../src/e-documents/sandbox.ts';
import { openSettings } from '../src/lib/settings.ts';
import { child, childrenNamed, MAX_XML_CHARS, MAX_XML_DEPTH, MAX_XML_ELEMENTS, parseXml, textOf, XmlError, xmlEscape } from '../src/e-documents/xml.ts';
import { roundDiv } from '@cuadra/shared';
import { decimalAmount, lineAmounts, localTime } from '../src/lib/money.ts';
import { PIN, TECH_KEY, configuredWorkspace, draft, startInvoices } from './setup.ts';

describe('CUFE', () => {
  it('matches the worked example of DIAN’s Anexo Técnico', () => {
    const input = {
      number: '323200000129', issueDate: '2019-01-16', issueTime: '10:53:10-05:00', subtotal: 150000000, vat: 28500000, inc: 0, ica: 0, total: 178500000,
      issuerNit: '700085371', buyerId: '800199436', key: '693ff6f2a553c3646a063436fd4dd9ded0311471', environment: '1' as const,
    };
    expect(cufeSource(input)).toBe('3232000001292019-01-1610:53:10-05:001500000.0001285000.00040.00030.001785000.00700085371800199436693ff6f2a553c3646a063436fd4dd9ded03114711');
    expect(cufe(input)).toBe('8bb918b19ba22a694f1da11c643b5e9de39adf60311cf179179e9b33381030bcd4c3c3f156c506ed5908f9276f5bd9b4');
  });
});

describe('money', () => {
  it('rounds half away from zero, never to even', () => {
    expect(roundDiv(5n, 2n)).toBe(3n);
    expect(roundDiv(7n, 2n)).toBe(4n);
    expect(roundDiv(-5n, 2n)).toBe(-3n);
    expect(lineAmounts(1, 50, 0, 50000)).toEqual({ subtotal: 50, tax: 3, total: 53 }); // 2.5 → 3
    expect(lineAmounts(3, 1001, 1000, 190000)).toEqual({ subtotal: 2703, tax: 514, total: 3217 }); // 2702.7 → 2703; 513.57 → 514
    expect(decimalAmount(123456)).toBe('1234.56');
    expect(decimalAmount(5)).toBe('0.05');
    expect(localTime(new Date('2026-11-02T15:15:00Z'))).toBe('10:15:00-05:00');
  });
});

describe('XML', () => {
  it('escapes and parses (with @xmldom/xmldom), and refuses what is not well-formed', () => {
    expect(xmlEscape(`<a & "b" 'c'>`)).toBe('&lt;a &amp; &quot;b&quot; &apos;c&apos;&gt;');
    const root = parseXml('<?xml version="1.0"?><a x="1 &amp; 2"><b>t&lt;</b><c/><!-- note --><d><![CDATA[<raw>]]></d></a>');
    expect(root.getAttribute('x')).toBe('1 & 2');
    expect(childrenNamed(root, 'b').map(textOf)).toEqual(['t<']);
    expect(textOf(child(root, 'd'))).toBe('<raw>');
    expect(child(root, 'c')).toBeDefined();
    for (const bad of ['<a><b></a></b>', '<a>', '<a></a><b></b>', '<a x="1" x="2"/>', '<a>&nope;</a>', '<a>& </a>', '<!DOCTYPE a><a/>', 'text', '<a><?php echo 1 ?></a>', '<a xmlns:p="u"><q:b/></a>']) {
      expect(() => parseXml(bad), bad).toThrow(XmlError);
    }
  });

  it('finds UBL elements by namespace, whatever prefix the document uses', () => {
    const root = parseXml('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:b="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" xmlns:cbc="urn:other"><cbc:ID>wrong</cbc:ID><b:ID>SETP1</b:ID></Invoice>');
    expect(textOf(child(root, 'cbc:ID'))).toBe('SETP1');
  });

  it('refuses hostile XML: entity expansion, external entities, huge, too deep, too many elements', () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('')}]><lolz>&lol9;</lolz>`;
    expect(() => parseXml(laughs)).toThrow(/DOCTYPE|entity/i);
    const xxe = '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>';
    let message = '';
    try { parseXml(xxe); } catch (err) { message = (err as Error).message; }
    expect(message).toMatch(/DOCTYPE|entity/i);
    expect(message).not.toMatch(/root:/);
    // Refused by its length before any parsing: fast however big it is.
    const started = Date.now();
    expect(() => parseXml(`<a>${'x'.repeat(MAX_XML_CHARS)}</a>`)).toThrow(/at most 8000000/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(() => parseXml(`${'<a>'.repeat(MAX_XML_DEPTH + 1)}${'</a>'.repeat(MAX_XML_DEPTH + 1)}`)).toThrow(/more than 100 deep/);
    expect(() => parseXml(`${'<a>'.repeat(20_000)}${'</a>'.repeat(20_000)}`)).toThrow(XmlError);
    expect(parseXml(`${'<a>'.repeat(MAX_XML_DEPTH)}${'</a>'.repeat(MAX_XML_DEPTH)}`).localName).toBe('a');
    expect(() => parseXml(`<a>${'<b/>'.repeat(MAX_XML_ELEMENTS)}</a>`)).toThrow(/more than 50000 elements/);
  });
});

describe('the sandbox', () => {
  let sg: TestSubgraph;
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  async function postedUbl() {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    await sg.call('invoices.post', { id: inv.id }, owner);
    const xml = (await sg.call('invoices.render', { id: inv.id, format: 'ubl' }, owner)).output.content as string;
    const s = await sg.db.collection('einvoicing_settings').findOne({ _id: owner.workspace } as never);
    // The register's view of the issuer: its set-up with the secrets opened.
    const lookup = async () => openSettings(s as never) as never;
    return { xml, lookup, owner };
  }

  it('accepts the UBL the service renders, and answers a resubmission with the same tracking id', async () => {
    const { xml } = await postedUbl();
    const post = (body: string) => fetch(`${sg.url}/einvoicing/sandbox`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body }).then((r) => r.json() as Promise<any>);
    const first = await post(xml);
    expect(first).toMatchObject({ is_valid: true, status_code: '00', errors: [] });
    const second = await post(xml);
    expect(second.track_id).toBe(first.track_id);
    const broken = await post(xml.slice(0, -20));
    expect(broken).toMatchObject({ is_valid: false, status_code: '99' });
    expect(broken.errors[0]).toMatch(/mal formado/);
    // An entity declaration smuggled in before the root is refused as a whole, never expanded.
    const withDtd = xml.replace('<Invoice ', '<!DOCTYPE Invoice [<!ENTITY x SYSTEM "file:///etc/passwd">]><Invoice ');
    const refused = await post(withDtd);
    expect(refused).toMatchObject({ is_valid: false, status_code: '99' });
    expect(refused.errors[0]).toMatch(/mal formado.*DOCTYPE/);
  });

  it('rejects tampered amounts, a wrong CUFE, a missing element and an unknown issuer, with reasons', async () => {
    const { xml, lookup } = await postedUbl();
    const tampered = xml.replace(/<cbc:PayableAmount currencyID="COP">[^<]+</, '<cbc:PayableAmount currencyID="COP">1.00<');
    expect((await validateDocument(tampered, lookup)).errors).toEqual(expect.arrayContaining([expect.stringMatching(/^Regla: FAU14, Rechazo: /), expect.stringMatching(/^Regla: FAD06, Rechazo: Valor del CUFE no está calculado correctamente/)]));
    const wrongKey = xml.replace(/(<cbc:UUID[^>]*>)[0-9a-f]{96}/, `$1${'0'.repeat(96)}`);
    expect((await validateDocument(wrongKey, lookup)).errors).toEqual(['Regla: FAD06, Rechazo: Valor del CUFE no está calculado correctamente']);
    const missing = xml.replace(/<cbc:IssueTime>[^<]+<\/cbc:IssueTime>/, '');
    expect((await validateDocument(missing, lookup)).errors[0]).toMatch(/^Regla: FAD10, Rechazo: .*IssueTime/);
    expect((await validateDocument(xml, async () => null)).errors.join(' ')).toMatch(/no están habilitados/);
    expect((await validateDocument(xml, lookup)).errors).toEqual([]);
    // The same document checked with the PIN in place of the technical key fails: CUFE uses ClTec.
    const wrongPin = async () => ({ ...(await lookup() as object), technical_key: PIN } as never);
    expect((await validateDocument(xml, wrongPin)).errors.join(' ')).toMatch(/FAD06.*CUFE/);
    expect(TECH_KEY).not.toBe(PIN);
  });
});
