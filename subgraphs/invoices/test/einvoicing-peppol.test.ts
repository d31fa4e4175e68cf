import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { peppolConfigure } from '../src/modules/einvoicing/tools/peppol_configure.ts';
import { peppolExport } from '../src/modules/einvoicing/tools/peppol_export.ts';
import { PEPPOL_CUSTOMIZATION_ID } from '../src/e-documents/peppol/ubl.ts';
import { party, startInvoices } from './setup.ts';
import { fatal, PeppolValidator, type Verdict } from './peppol-validator.ts';

// Peppol BIS Billing 3.0 (issue 19): the UBL einvoicing.peppol_export answers is checked by the
// official artefacts run by an independent engine — phive with the UBL 2.1 XSD, the CEN EN 16931
// UBL Schematron and the OpenPEPPOL BIS 3 Schematron (scripts/peppol-validator) — one JVM for
// the whole `npm test` run (the test pool's), several documents per call.

const SELLER = {
  country: 'BE', name: 'Atelier Lumière SRL', trading_name: 'Lumière', vat_id: 'BE0123456749', legal_id: '0123456749',
  // 0208 = Belgian enterprise number (10 digits, mod 97: 97 − 01234567 mod 97 = 97 − 48 = 49).
  endpoint: { scheme: '0208', id: '0123456749' },
  address: { street: 'Rue de la Loi 16', city: 'Bruxelles', postal_code: '1000', country: 'BE' },
  email: 'factures@lumiere.example',
  payment: { means_code: '58', iban: 'BE71096123456769', bic: 'GKCCBEBB', account_name: 'Atelier Lumière SRL' },
  payment_terms: 'Net 30 days',
  // 0 % lines are medical care, exempt under article 132(1)(c) of the VAT directive.
  zero_rate: { category: 'E', reason_code: 'VATEX-EU-132-1C', reason: 'Exempt: medical care (art. 132(1)(c) Directive 2006/112/EC)' },
} as const;

// The buyer: a Dutch company, Peppol id 9944 (NL VAT number).
const BUYER = {
  endpoint: { scheme: '9944', id: 'NL123456789B01' },
  address: { street: 'Keizersgracht 1', city: 'Amsterdam', postal_code: '1015 CJ', country: 'NL' },
  vat_id: 'NL123456789B01',
};

describe('Peppol BIS Billing 3.0', () => {
  let sg: TestSubgraph;
  let validator: PeppolValidator;
  let owner: Principal;
  let customer: string;
  let jvmStartMs = 0;

  beforeAll(async () => {
    const started = Date.now();
    // The JVM starts while the services start (its rules load in a few seconds).
    const [s, v] = await Promise.all([startInvoices(), PeppolValidator.start().then((x) => { jvmStartMs = Date.now() - started; return x; })]);
    sg = s;
    validator = v;
    expect(validator.warmed).toBe(true);
    // A Belgian workspace (its country, stated by the gateway, decides the regime): it posts without any DIAN set-up, numbered from its own series.
    owner = testPrincipal({ country: 'BE' });
    const r = await sg.call('einvoicing.peppol_configure', SELLER, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    checkOutput('einvoicing.peppol_configure', peppolConfigure.output, r.output);
    customer = await party(owner, { name: 'Bouwbedrijf Jansen B.V.', kind: 'customer', email: 'inkoop@jansen.example', tax_id: { type: 'FOREIGN', number: 'NL123456789B01' } });
  }, 120_000);

  afterAll(async () => {
    await validator?.stop();
    await sg?.close();
  });

  async function postedInvoice(lines: Record<string, unknown>[]) {
    const c = await sg.call('invoices.create', { customer_id: customer, currency: 'EUR', issue_date: '2026-11-02', due_date: '2026-12-02', lines }, owner);
    expect(c.ok, JSON.stringify(c)).toBe(true);
    const p = await sg.call('invoices.post', { id: c.output.invoice.id }, owner);
    expect(p.ok, JSON.stringify(p)).toBe(true);
    return p.output.invoice as { id: string; number: string; total: number };
  }

  async function exported(input: Record<string, unknown>) {
    const r = await sg.call('einvoicing.peppol_export', { buyer: BUYER, ...input }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    checkOutput('einvoicing.peppol_export', peppolExport.output, r.output);
    return r.output as { document_type: string; xml: string; totals: Record<string, number>; vat_breakdown: Record<string, unknown>[] };
  }

  function expectValid(v: Verdict) {
    expect(fatal(v), v.id).toEqual([]);
    expect(v.valid).toBe(true);
    // The three artefacts ran (none skipped): the UBL 2.1 XSD, CEN EN 16931 and OpenPEPPOL Schematron.
    expect(v.artefacts.map((a) => [a.path.split('/').pop(), a.skipped])).toEqual([
      [v.vesid.includes('credit') ? 'UBL-CreditNote-2.1.xsd' : 'UBL-Invoice-2.1.xsd', false],
      ['CEN-EN16931-UBL.xslt', false],
      ['PEPPOL-EN16931-UBL.xslt', false],
    ]);
  }

  it('an invoice with 19 % and 5 % VAT, a discounted line and an exempt line, and its credit note, pass the Peppol and EN 16931 rules; tampered totals fail them', async () => {
    const invoice = await postedInvoice([
      { description: 'Lighting design', quantity: 3, unit: 'HUR', unit_price: 12000, tax_rate_ppm: 190000 },
      { description: 'Training manual', quantity: 7, unit: 'C62', unit_price: 1499, discount_bps: 1000, tax_rate_ppm: 50000 },
      { description: 'Eye examination', quantity: 1, unit: 'C62', unit_price: 25000, tax_rate_ppm: 0 },
      { description: 'LED strip', quantity: 0.5, unit: 'MTR', unit_price: 3333, tax_rate_ppm: 190000 },
    ]);
    // Hand calculation (cents). Each line's net amount is rounded to the cent first, then summed:
    //   line 1: 3 × 120.00 = 360.00; VAT 19 % = 68.40
    //   line 2: 7 × 14.99 = 104.93 gross; −10 % = 94.437 → 94.44 net (allowance 104.93 − 94.44 = 10.49); VAT 5 % = 4.722 → 4.72
    //   line 3: 1 × 250.00 = 250.00, exempt (E, VATEX-EU-132-1C); VAT 0
    //   line 4: 0.5 × 33.33 = 16.665 → 16.67; VAT 19 % = 3.1673 → 3.17
    //   S 19 %: taxable 360.00 + 16.67 = 376.67; VAT 68.40 + 3.17 = 71.57 (376.67 × 0.19 = 71.5673 → 71.57, BR-CO-17)
    //   S 5 %: taxable 94.44; VAT 4.72      E 0 %: taxable 250.00; VAT 0.00
    //   line total (BR-CO-10) 360.00 + 94.44 + 250.00 + 16.67 = 721.11; VAT (BR-CO-14) 71.57 + 4.72 = 76.29
    //   with VAT (BR-CO-15) 721.11 + 76.29 = 797.40 = amount due (BR-CO-16)
    expect(invoice.total).toBe(79740);
    const inv = await exported({ invoice_id: invoice.id, buyer_reference: 'PO-2026-117' });
    expect(inv.document_type).toBe('Invoice');
    expect(inv.totals).toEqual({ line_extension: 72111, tax_exclusive: 72111, tax: 7629, tax_inclusive: 79740, payable: 79740 });
    expect(inv.vat_breakdown).toEqual([
      { category: 'S', rate_ppm: 190000, taxable: 37667, tax: 7157, reason_code: null, reason: null },
      { category: 'S', rate_ppm: 50000, taxable: 9444, tax: 472, reason_code: null, reason: null },
      { category: 'E', rate_ppm: 0, taxable: 25000, tax: 0, reason_code: 'VATEX-EU-132-1C', reason: SELLER.zero_rate.reason },
    ]);
    expect(inv.xml).toContain(`<cbc:CustomizationID>${PEPPOL_CUSTOMIZATION_ID}</cbc:CustomizationID>`);
    expect(inv.xml).toContain('<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>');
    expect(inv.xml).toContain('<cbc:EndpointID schemeID="0208">0123456749</cbc:EndpointID>');
    expect(inv.xml).toContain('<cbc:PayableAmount currencyID="EUR">797.40</cbc:PayableAmount>');

    // Credit note of 1 h of design (120.00, VAT 22.80) and the exempt examination (250.00):
    //   line total 370.00; VAT 22.80; amount due 392.80
    const cn = await sg.call('invoices.credit_note', { invoice_id: invoice.id, concept: 1, reason: 'Returned', lines: [{ line: 0, quantity: 1 }, { line: 2, quantity: 1 }] }, owner);
    expect(cn.ok, JSON.stringify(cn)).toBe(true);
    const note = await exported({ invoice_id: cn.output.credit_note.id });
    expect(note.document_type).toBe('CreditNote');
    expect(note.totals).toEqual({ line_extension: 37000, tax_exclusive: 37000, tax: 2280, tax_inclusive: 39280, payable: 39280 });
    expect(note.xml).toContain('<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>');
    expect(note.xml).toContain(`<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>${invoice.number}</cbc:ID>`);

    // Tampered copies: the amount due one cent off (BR-CO-16), and a line amount changed so the
    // lines no longer add up to the line total (BR-CO-10).
    const wrongPayable = inv.xml.replace('<cbc:PayableAmount currencyID="EUR">797.40<', '<cbc:PayableAmount currencyID="EUR">797.41<');
    const wrongLine = inv.xml.replace('<cbc:LineExtensionAmount currencyID="EUR">360.00<', '<cbc:LineExtensionAmount currencyID="EUR">361.00<');
    // And one per other layer: no buyer reference (a Peppol rule, PEPPOL-EN16931-R003), and the
    // due date after the type code (the UBL 2.1 XSD's element order).
    const noBuyerReference = inv.xml.replace('<cbc:BuyerReference>PO-2026-117</cbc:BuyerReference>', '');
    const badOrder = inv.xml.replace('<cbc:DueDate>2026-12-02</cbc:DueDate><cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>', '<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode><cbc:DueDate>2026-12-02</cbc:DueDate>');
    for (const t of [wrongPayable, wrongLine, noBuyerReference, badOrder]) expect(t).not.toBe(inv.xml);

    // Kept for a person (and for the validator's command line: java -jar <jar> file.xml).
    const out = path.join(process.env.CUADRA_TEST_OUTPUT ?? 'test-output', 'peppol');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'invoice.xml'), inv.xml);
    writeFileSync(path.join(out, 'credit-note.xml'), note.xml);
    writeFileSync(path.join(out, 'invoice-wrong-payable.xml'), wrongPayable);
    const started = Date.now();
    const [vInv, vNote, vPayable, vLine] = await Promise.all([
      validator.validate('invoice', inv.xml), validator.validate('credit-note', note.xml),
      validator.validate('wrong-payable', wrongPayable), validator.validate('wrong-line', wrongLine),
    ]);
    const [vNoRef, vOrder] = await Promise.all([validator.validate('no-buyer-reference', noBuyerReference), validator.validate('bad-order', badOrder)]);
    console.log(`[peppol] rules ${validator.rules}; validator ready for this file in ${jvmStartMs} ms (Schematron compiled in ${validator.warmUpMs} ms); 4 documents in ${Date.now() - started} ms (${[vInv, vNote, vPayable, vLine].map((v) => `${v.id} ${v.ms} ms`).join(', ')})`);
    expectValid(vInv);
    expectValid(vNote);
    expect(vNote.vesid).toMatch(/credit/);
    expect(vPayable.valid).toBe(false);
    expect(fatal(vPayable).map((e) => e.split(':')[0])).toEqual(['BR-CO-16']);
    expect(vLine.valid).toBe(false);
    expect(fatal(vLine).map((e) => e.split(':')[0])).toContain('BR-CO-10');
    expect(vNoRef.valid).toBe(false);
    expect(fatal(vNoRef).map((e) => e.split(':')[0])).toEqual(['PEPPOL-EN16931-R003']);
    expect(vOrder.valid).toBe(false);
    expect(vOrder.artefacts.map((a) => [a.type, a.errors > 0, a.skipped])).toEqual([['xsd', true, false], ['schematron-xslt', false, true], ['schematron-xslt', false, true]]);
    expect(fatal(vOrder).join(' ')).toMatch(/cvc-complex-type.*DueDate/);
  }, 120_000);

  it('intra-community supply (K) and reverse charge (AE) name the buyer\'s VAT id, the delivery and the exemption, and pass', async () => {
    const invoice = await postedInvoice([
      { description: 'Lamp prototypes', quantity: 2, unit: 'C62', unit_price: 45050, tax_rate_ppm: 0 },
    ]);
    // 2 × 450.50 = 901.00, no VAT: line total = with VAT = amount due = 901.00
    const k = await exported({ invoice_id: invoice.id, vat: [{ line: 0, category: 'K' }] });
    expect(k.totals).toEqual({ line_extension: 90100, tax_exclusive: 90100, tax: 0, tax_inclusive: 90100, payable: 90100 });
    expect(k.vat_breakdown).toEqual([{ category: 'K', rate_ppm: 0, taxable: 90100, tax: 0, reason_code: 'VATEX-EU-IC', reason: 'Intra-Community supply' }]);
    expect(k.xml).toContain('<cbc:ActualDeliveryDate>2026-11-02</cbc:ActualDeliveryDate>');
    const ae = await exported({ invoice_id: invoice.id, vat: [{ line: 0, category: 'AE' }] });
    const [vK, vAE] = await Promise.all([validator.validate('k', k.xml), validator.validate('ae', ae.xml)]);
    expectValid(vK);
    expectValid(vAE);
  }, 60_000);

  it('Belgian rates (21 %, 6 %, 12 %, zero-rated) through invoices.create, as a Belgian workspace invoices: per-line VAT summed stays within BR-CO-17 and passes', async () => {
    const spec: [string, number, number, number, number][] = [
      // description, quantity, unit price (cents), discount bps, VAT ppm
      ['Fuse', 1, 99, 0, 210000], ['Fuse', 1, 99, 0, 210000], ['Fuse', 1, 99, 0, 210000],
      ['Books', 2.5, 1333, 500, 60000], ['Repairs', 4, 1250, 0, 120000], ['Export crate', 1, 4000, 0, 0],
    ];
    const input = spec.map(([description, quantity, unit_price, discount_bps, tax_rate_ppm]) => ({
      description, quantity, unit: 'C62', unit_price, discount_bps, tax_rate_ppm, ...(tax_rate_ppm === 0 ? { tax_category: 'Z' } : {}),
    }));
    const posted = await postedInvoice(input);
    const lines = (await sg.call('invoices.get', { id: posted.id }, owner)).output.invoice.lines as { subtotal: number; tax: number }[];
    // Hand calculation (cents):
    //   3 × fuse 0.99 at 21 %: each 0.99, VAT 0.2079 → 0.21; taxable 2.97, VAT 0.63 (2.97 × 0.21 = 0.6237 → 0.62:
    //     one cent apart, inside BR-CO-17's one-unit tolerance)
    //   books 2.5 × 13.33 = 33.325 gross → 33.33; −5 % = 31.66 (33.325 × 0.95 = 31.65875 → 31.66; allowance 33.33 − 31.66 = 1.67);
    //     VAT 6 % = 1.8996 → 1.90. PEPPOL-EN16931-R120: 2.5 × 13.33 − 1.67 = 31.655, within 0.02 of 31.66
    //   repairs 4 × 12.50 = 50.00, VAT 12 % = 6.00; crate 40.00 zero rated (Z)
    //   line total 2.97 + 31.66 + 50.00 + 40.00 = 124.63; VAT 0.63 + 1.90 + 6.00 = 8.53; amount due 133.16
    expect(lines.map((l) => [l.subtotal, l.tax])).toEqual([[99, 21], [99, 21], [99, 21], [3166, 190], [5000, 600], [4000, 0]]);
    expect(posted.total).toBe(13316);
    const { xml, totals, vat_breakdown: breakdown } = await exported({ invoice_id: posted.id, buyer_reference: 'PO-77' });
    expect(totals).toEqual({ line_extension: 12463, tax_exclusive: 12463, tax: 853, tax_inclusive: 13316, payable: 13316 });
    expect(breakdown.map((r) => [r.category, r.rate_ppm, r.taxable, r.tax])).toEqual([['S', 210000, 297, 63], ['S', 60000, 3166, 190], ['S', 120000, 5000, 600], ['Z', 0, 4000, 0]]);
    expect(xml).toContain('<cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator><cbc:AllowanceChargeReasonCode>95</cbc:AllowanceChargeReasonCode><cbc:AllowanceChargeReason>Descuento</cbc:AllowanceChargeReason><cbc:MultiplierFactorNumeric>5.00</cbc:MultiplierFactorNumeric><cbc:Amount currencyID="EUR">1.67</cbc:Amount><cbc:BaseAmount currencyID="EUR">33.33</cbc:BaseAmount></cac:AllowanceCharge>');
    expectValid(await validator.validate('belgian-rates', xml));
  }, 30_000);

  it('one line model with the DIAN document (issue 30 item 2): line discounts and charges, the document\'s own allowance and charge with their VAT, a full credit note taking them back — amounts by hand, and both pass the official rules', async () => {
    const invoice = await sg.call('invoices.create', {
      customer_id: customer, currency: 'EUR', issue_date: '2026-11-02', due_date: '2026-12-02',
      lines: [
        { description: 'Lamp', quantity: 4, unit: 'C62', unit_price: 4999, discount_bps: 500, charges: [{ reason: 'Packaging', reason_code: 'ABL', rate_bps: 200 }], tax_rate_ppm: 210000 },
        { description: 'Cable', quantity: 10, unit: 'MTR', unit_price: 250, tax_rate_ppm: 60000 },
      ],
      allowance_charges: [
        { charge: false, reason: 'Loyalty discount', reason_code: '95', rate_bps: 300, tax_rate_ppm: 210000 },
        { charge: true, reason: 'Freight', reason_code: 'FC', amount: 1500, tax_rate_ppm: 210000 },
      ],
    }, owner);
    expect(invoice.ok, JSON.stringify(invoice)).toBe(true);
    // Hand calculation (cents):
    //   Lamp: 4 × 49.99 = 199.96 gross; −5 % = 9.998 → 10.00; +2 % packaging = 3.9992 → 4.00; net 193.96; VAT 21 % = 40.7316 → 40.73
    //   Cable: 10 × 2.50 = 25.00; VAT 6 % = 1.50                        line total 218.96
    //   document: loyalty −3 % of 218.96 = 6.5688 → 6.57, its VAT 21 % = 1.3797 → 1.38; freight +15.00, VAT 3.15
    //   VAT 40.73 + 1.50 − 1.38 + 3.15 = 44.00; without VAT 218.96 − 6.57 + 15.00 = 227.39; payable 271.39
    //   breakdown S 21 %: 193.96 − 6.57 + 15.00 = 202.39, VAT 40.73 − 1.38 + 3.15 = 42.50 (202.39 × 0.21 = 42.5019, BR-CO-17); S 6 %: 25.00, 1.50
    expect(invoice.output.invoice).toMatchObject({ subtotal: 21896, allowance_total: 657, charge_total: 1500, tax_total: 4400, total: 27139 });
    const posted = await sg.call('invoices.post', { id: invoice.output.invoice.id }, owner);
    expect(posted.ok, JSON.stringify(posted)).toBe(true);
    expect(posted.output.invoice).toMatchObject({ number: expect.stringMatching(/^INV\d+$/), cufe: null, issue_time: null });
    const inv = await exported({ invoice_id: invoice.output.invoice.id });
    expect(inv.totals).toEqual({ line_extension: 21896, tax_exclusive: 22739, tax: 4400, tax_inclusive: 27139, payable: 27139 });
    expect(inv.vat_breakdown.map((r) => [r.category, r.rate_ppm, r.taxable, r.tax])).toEqual([['S', 210000, 20239, 4250], ['S', 60000, 2500, 150]]);
    expect(inv.xml).toContain('<cbc:LineExtensionAmount currencyID="EUR">193.96</cbc:LineExtensionAmount><cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator><cbc:AllowanceChargeReasonCode>95</cbc:AllowanceChargeReasonCode><cbc:AllowanceChargeReason>Descuento</cbc:AllowanceChargeReason><cbc:MultiplierFactorNumeric>5.00</cbc:MultiplierFactorNumeric><cbc:Amount currencyID="EUR">10.00</cbc:Amount><cbc:BaseAmount currencyID="EUR">199.96</cbc:BaseAmount></cac:AllowanceCharge><cac:AllowanceCharge><cbc:ChargeIndicator>true</cbc:ChargeIndicator><cbc:AllowanceChargeReasonCode>ABL</cbc:AllowanceChargeReasonCode>');
    expect(inv.xml).toContain('<cbc:AllowanceTotalAmount currencyID="EUR">6.57</cbc:AllowanceTotalAmount><cbc:ChargeTotalAmount currencyID="EUR">15.00</cbc:ChargeTotalAmount><cbc:PayableAmount currencyID="EUR">271.39</cbc:PayableAmount>');
    const cn = await sg.call('invoices.credit_note', { invoice_id: invoice.output.invoice.id, concept: 2, reason: 'Cancelled order' }, owner);
    expect(cn.ok, JSON.stringify(cn)).toBe(true);
    expect(cn.output.credit_note).toMatchObject({ number: expect.stringMatching(/^CN\d+$/), total: 27139, allowance_total: 657, charge_total: 1500 });
    expect(cn.output.invoice).toMatchObject({ status: 'cancelled', balance: 0 });
    const note = await exported({ invoice_id: cn.output.credit_note.id });
    expect(note.totals).toEqual({ line_extension: 21896, tax_exclusive: 22739, tax: 4400, tax_inclusive: 27139, payable: 27139 });
    const [vInv, vNote] = await Promise.all([validator.validate('allowances-charges', inv.xml), validator.validate('allowances-charges-credit', note.xml)]);
    expectValid(vInv);
    expectValid(vNote);
  }, 60_000);

  it('refuses what it cannot issue, with the contract code and field', async () => {
    const colombian = await sg.call('einvoicing.peppol_configure', { ...SELLER, country: 'CO', address: { ...SELLER.address, country: 'CO' } }, owner);
    expect(colombian).toMatchObject({ ok: false, code: 'invalid_input', field: '/country' });
    const vatPrefix = await sg.call('einvoicing.peppol_configure', { ...SELLER, vat_id: 'NL123456789B01' }, owner);
    expect(vatPrefix).toMatchObject({ ok: false, code: 'invalid_input', field: '/vat_id' });

    const invoice = await postedInvoice([{ description: 'Lamp', quantity: 1, unit: 'C62', unit_price: 10000, tax_rate_ppm: 190000 }]);
    const standardOnZero = await sg.call('einvoicing.peppol_export', { invoice_id: invoice.id, buyer: BUYER, vat: [{ line: 0, category: 'Z' }] }, owner);
    expect(standardOnZero).toMatchObject({ ok: false, code: 'invalid_input', field: '/vat/0/category' });
    const noLine = await sg.call('einvoicing.peppol_export', { invoice_id: invoice.id, buyer: BUYER, vat: [{ line: 3, category: 'S' }] }, owner);
    expect(noLine).toMatchObject({ ok: false, code: 'invalid_input', field: '/vat/0/line' });
    const zero = await postedInvoice([{ description: 'Lamp', quantity: 1, unit: 'C62', unit_price: 10000, tax_rate_ppm: 0 }]);
    const { vat_id: _v, ...buyerWithoutVat } = BUYER;
    const aeWithoutVat = await sg.call('einvoicing.peppol_export', { invoice_id: zero.id, buyer: buyerWithoutVat, vat: [{ line: 0, category: 'AE' }] }, owner);
    expect(aeWithoutVat).toMatchObject({ ok: false, code: 'invalid_input', field: '/buyer/vat_id' });
    const exemptWithoutReason = await sg.call('einvoicing.peppol_export', { invoice_id: zero.id, buyer: BUYER, vat: [{ line: 0, category: 'S' }] }, owner);
    expect(exemptWithoutReason).toMatchObject({ ok: false, code: 'invalid_input', field: '/vat/0/category' });
    const badEndpoint = await sg.call('einvoicing.peppol_export', { invoice_id: invoice.id, buyer: { ...BUYER, endpoint: { scheme: 'EM', id: 'x@y.z' } } }, owner);
    expect(badEndpoint).toMatchObject({ ok: false, code: 'invalid_input', field: '/buyer/endpoint/scheme' });

    const c = await sg.call('invoices.create', { customer_id: customer, currency: 'EUR', issue_date: '2026-11-02', due_date: '2026-12-02', lines: [{ description: 'Draft', quantity: 1, unit_price: 100, tax_rate_ppm: 190000 }] }, owner);
    const draft = await sg.call('einvoicing.peppol_export', { invoice_id: c.output.invoice.id, buyer: BUYER }, owner);
    expect(draft).toMatchObject({ ok: false, code: 'conflict' });

    // Workspace seal: another workspace sees neither the invoice nor any Peppol set-up.
    const other = testPrincipal({ country: 'BE' });
    const sealed = await sg.call('einvoicing.peppol_export', { invoice_id: invoice.id, buyer: BUYER }, other);
    expect(sealed).toMatchObject({ ok: false, code: 'conflict' });
    const otherConfigured = await sg.call('einvoicing.peppol_configure', { ...SELLER, name: 'Other SRL' }, other);
    expect(otherConfigured.ok).toBe(true);
    const notFound = await sg.call('einvoicing.peppol_export', { invoice_id: invoice.id, buyer: BUYER }, other);
    expect(notFound).toMatchObject({ ok: false, code: 'not_found' });
  }, 60_000);
});
