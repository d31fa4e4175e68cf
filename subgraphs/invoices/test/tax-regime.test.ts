import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { create } from '../src/modules/invoices/tools/create.ts';
import { andina, configuredWorkspace, ISSUER, party, PIN, startInvoices, TECH_KEY } from './setup.ts';

// Issue 30, item 7: a workspace's country decides its tax regime (the gateway states the country
// in its assertion, Principal.country): Colombia → DIAN's rates, withholdings and documents;
// elsewhere → EN 16931's rates and categories, posting without any DIAN set-up.
describe('the tax regime follows the workspace\'s country', () => {
  let sg: TestSubgraph;
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  const dutchBuyer = { name: 'Bouwbedrijf Jansen B.V.', kind: 'customer', tax_id: { type: 'FOREIGN', number: 'NL123456789B01' } };

  it('a Dutch workspace invoices at 21 % and 9 % with EN 16931 categories and posts without DIAN: its own numbering, no CUFE, a balanced entry', async () => {
    const dutch = testPrincipal({ country: 'NL' });
    const customer = await party(dutch, dutchBuyer);
    const r = await sg.call('invoices.create', {
      customer_id: customer, currency: 'EUR', lines: [
        { description: 'Advies', quantity: 10, unit: 'HUR', unit_price: 9500, tax_rate_ppm: 210000 },
        { description: 'Boeken', quantity: 3, unit_price: 2499, tax_rate_ppm: 90000 },
        { description: 'Medische keuring', quantity: 1, unit_price: 12000, tax_rate_ppm: 0, tax_category: 'E', tax_exemption_reason_code: 'VATEX-EU-132-1C', tax_exemption_reason: 'Medische zorg' },
      ],
    }, dutch);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    checkOutput('invoices.create', create.output, r.output);
    // 10 × 95.00 = 950.00, VAT 21 % = 199.50; 3 × 24.99 = 74.97, VAT 9 % = 6.7473 → 6.75; 120.00 exempt.
    // Total 950.00 + 74.97 + 120.00 = 1,144.97; VAT 206.25; 1,351.22.
    const inv = r.output.invoice;
    expect(inv).toMatchObject({ subtotal: 114497, tax_total: 20625, total: 135122 });
    expect(inv.lines.map((l: any) => l.vat)).toEqual([
      { category: 'S', reason_code: null, reason: null }, { category: 'S', reason_code: null, reason: null },
      { category: 'E', reason_code: 'VATEX-EU-132-1C', reason: 'Medische zorg' },
    ]);
    const posted = await sg.call('invoices.post', { id: inv.id }, dutch);
    expect(posted.ok, JSON.stringify(posted)).toBe(true);
    expect(posted.output.invoice).toMatchObject({ status: 'posted', number: 'INV1', cufe: null, issue_time: null });
    const second = await sg.call('invoices.post', { id: (await sg.call('invoices.create', { customer_id: customer, currency: 'EUR', lines: [{ description: 'Advies', quantity: 1, unit_price: 100, tax_rate_ppm: 210000 }] }, dutch)).output.invoice.id }, dutch);
    expect(second.output.invoice.number).toBe('INV2');
    const entry = await sg.db.collection('journal_entries').findOne({ 'source.id': inv.id });
    const lines = entry!.lines as { debit: number; credit: number }[];
    expect(lines.reduce((s, l) => s + l.debit, 0)).toBe(135122);
    expect(lines.reduce((s, l) => s + l.credit, 0)).toBe(135122);
    // DIAN's documents are not this workspace's.
    expect(await sg.call('invoices.send', { id: inv.id }, dutch)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.debit_note', { invoice_id: inv.id, concept: 1, reason: 'x', lines: [{ description: 'x', quantity: 1, unit_price: 100 }] }, dutch)).toMatchObject({ ok: false, code: 'conflict' });
    const dian = await sg.call('einvoicing.configure', { issuer: ISSUER, technical_key: TECH_KEY, software_pin: PIN, numbering: { invoice: { prefix: 'SETP', from: 1, to: 10 } } }, dutch);
    expect(dian).toMatchObject({ ok: false, code: 'conflict' });
    expect(dian.message).toMatch(/NL/);
    // Its catalog takes its own rates.
    expect((await sg.call('items.create', { name: 'Advies', kind: 'service', price: { amount: 9500, currency: 'EUR' }, tax_rate_ppm: 210000 }, dutch)).output.item.tax_rate_ppm).toBe(210000);
  });

  it('refuses in a Dutch workspace what is Colombian (withholdings) and a 0 % line with no category', async () => {
    const dutch = testPrincipal({ country: 'NL' });
    const customer = await party(dutch, dutchBuyer);
    const base = { customer_id: customer, currency: 'EUR', lines: [{ description: 'Advies', quantity: 1, unit_price: 100, tax_rate_ppm: 210000 }] };
    expect(await sg.call('invoices.create', { ...base, withholdings: [{ type: 'retefuente', rate_ppm: 40000 }] }, dutch)).toMatchObject({ ok: false, code: 'invalid_input', field: '/withholdings' });
    expect(await sg.call('invoices.create', { ...base, lines: [{ ...base.lines[0], withholdings: [{ type: 'reteica', rate_ppm: 9660 }] }] }, dutch)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/withholdings' });
    expect(await sg.call('invoices.create', { ...base, lines: [{ ...base.lines[0], tax_rate_ppm: 0 }] }, dutch)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_category' });
    expect(await sg.call('invoices.create', { ...base, lines: [{ ...base.lines[0], tax_category: 'Z' }] }, dutch)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_rate_ppm' });
    expect(await sg.call('invoices.create', { ...base, lines: [{ ...base.lines[0], tax_rate_ppm: 0, tax_category: 'E' }] }, dutch)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_exemption_reason' });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: dutch.workspace })).toBe(0);
  });

  it('a Colombian workspace takes only IVA at 19, 5 or 0 %, no EN 16931 category, and configures DIAN, not Peppol', async () => {
    const owner = await configuredWorkspace(sg);
    const base = { customer_id: await andina(owner), currency: 'COP', lines: [{ description: 'Consultoría', quantity: 1, unit_price: 100_000, tax_rate_ppm: 210000 }] };
    expect(await sg.call('invoices.create', base, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_rate_ppm' });
    expect(await sg.call('invoices.create', { ...base, lines: [{ ...base.lines[0], tax_rate_ppm: 0, tax_category: 'Z' }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_category' });
    expect(await sg.call('invoices.create', { ...base, allowance_charges: [{ charge: true, reason: 'Flete', amount: 100, tax_rate_ppm: 190000 }], lines: [{ ...base.lines[0], tax_rate_ppm: 190000 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/allowance_charges/0/tax_rate_ppm' });
    expect(await sg.call('items.create', { name: 'X', kind: 'product', price: { amount: 100, currency: 'COP' }, tax_rate_ppm: 210000 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/tax_rate_ppm' });
    expect(await sg.call('einvoicing.peppol_configure', { name: 'X', endpoint: { scheme: '0208', id: '0123456749' }, address: { country: 'BE' }, vat_id: 'BE0123456749' }, owner))
      .toMatchObject({ ok: false, code: 'conflict' });
    const ok = await sg.call('invoices.create', { ...base, lines: [{ ...base.lines[0], tax_rate_ppm: 50000 }] }, owner);
    expect(ok.ok, ok.message).toBe(true);
  });

  it('a principal that states no country is read as Colombian (what every workspace was before): DIAN\'s set-up is needed to post', async () => {
    const legacy = testPrincipal();
    const inv = await sg.call('invoices.create', { customer_id: await andina(legacy), currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 100, tax_rate_ppm: 190000 }] }, legacy);
    expect(inv.ok).toBe(true);
    expect(await sg.call('invoices.post', { id: inv.output.invoice.id }, legacy)).toMatchObject({ ok: false, code: 'conflict' });
  });
});
