import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, startInvoices } from './setup.ts';
import { vendor } from './bills-helpers.ts';
import { rollups } from '../src/books/rollup-store.ts';

/**
 * Retención en la fuente by concept (issue 30, item 12): a month of bills and invoices with several
 * concepts, some under their minimum base, against a hand calculation of every posting, every
 * per-concept total and the month's Formulario 350.
 *
 * The law used by hand (see src/accounting/withholdings.ts for the texts):
 *   UVT 2026 = $52,374 (DIAN Resolución 000238 de 2025). Art. 868 E.T. rounds UVT × value to the nearest thousand:
 *     services' minimum 2 UVT (Decreto 0572 de 2025 art. 2) = $104,748 → $105,000;
 *     purchases' and rent's minimum 10 UVT (Decreto 0572 de 2025 art. 6) = $523,740 → $524,000.
 *   Rates: honorarios 11 %, servicios 4 %, transporte de carga 1 %, arrendamiento de inmuebles 3.5 %, compras 2.5 %.
 *   Below the minimum the table's rate is not applied; a rate the buyer states is applied whatever the base
 *   (art. 1.2.4.6 DUR 1625 de 2016). ReteIVA 15 % of the VAT, as the bill states it.
 *
 * Bills of November 2026 (pesos; the tools take centavos, × 100), retefuente from the table unless said:
 *   B1 honorarios (5110) 3,000,000 + VAT 570,000; retefuente 11 % = 330,000; ReteIVA 15 % × 570,000 = 85,500.
 *   B2 soporte (5135, servicios) 800,000 + VAT 152,000; 800,000 ≥ 105,000 → 4 % = 32,000.
 *   B3 mantenimiento (5145, servicios) 104,900: ≥ 104,748 but < 105,000 (the rounded minimum) → nothing.
 *   B4 arriendo oficina (5120, arrendamiento de inmuebles) 4,000,000 ≥ 524,000 → 3.5 % = 140,000.
 *   B5 papelería (5195, compras) 450,000 < 524,000 → nothing.
 *   B6 computadores (1528, compras) 2 × 1,000,000 = 2,000,000 + VAT 380,000 → 2.5 % = 50,000;
 *      its credit note NC-6 (one computer back): base −1,000,000, retefuente −25,000 (at the bill's 2.5 %).
 *   B7 one bill, three concepts: honorarios (5110) 1,000,000 → 11 % = 110,000; equipo (1524, compras)
 *      300,000 < 524,000 → nothing; flete (5135 named transporte_carga) 600,000 ≥ 105,000 → 1 % = 6,000.
 *   B8 cafetería (5195, compras) 200,000 with a stated 2.5 % (under the minimum, the buyer's choice) → 5,000.
 * Invoices of November 2026 (what customers withhold from us, at the rates they state):
 *   I1 consultoría (a service item) 10,000,000 + VAT 1,900,000; retefuente 4 % = 400,000 → servicios.
 *   I2 equipos (a product item) 5,000,000 + VAT 950,000, and alquiler de equipo 1,000,000 (line named
 *      arrendamiento_muebles) + VAT 190,000; the invoice's retefuente 2.5 %: 125,000 compras, 25,000 arrendamientos.
 */
const C = 100; // centavos per peso

let sg: TestSubgraph;
let owner: Principal;
const ids: Record<string, string> = {};

async function call(tool: string, input: Record<string, unknown>, p: Principal = owner) {
  const r = await sg.call(tool, input, p);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}
const line = (description: string, account: string, pesos: number, extra: Record<string, unknown> = {}) => ({ description, account, quantity: 1, unit_price: pesos * C, tax_rate_ppm: 0, ...extra });
async function bill(key: string, v: string, lines: Record<string, unknown>[], withholdings: Record<string, unknown>[] = [{ type: 'retefuente' }]) {
  const d = await call('bills.create', { vendor_id: v, supplier_number: `FE-${key}`, currency: 'COP', issue_date: '2026-11-10', due_date: '2026-12-10', lines, withholdings });
  const posted = (await call('bills.post', { id: d.bill.id })).bill;
  ids[key] = posted.id;
  return posted;
}
async function entryOf(journalEntryId: string) {
  return entryOf2(owner, journalEntryId);
}
async function entryOf2(p: Principal, journalEntryId: string) {
  return ((await call('journal.get', { id: journalEntryId }, p)).entry.lines as any[]).map((l) => [l.account, l.debit, l.credit]);
}

beforeAll(async () => {
  sg = await startInvoices();
  owner = await configuredWorkspace(sg);
  const lawyers = await vendor(owner, 'Abogados Asociados SAS');
  const supplier = await vendor(owner, 'Suministros del Valle SAS');
  await bill('B1', lawyers, [line('Asesoría jurídica noviembre', '5110', 3_000_000, { tax_rate_ppm: 190000 })], [{ type: 'retefuente' }, { type: 'reteiva', rate_ppm: 150000 }]);
  await bill('B2', supplier, [line('Soporte técnico', '5135', 800_000, { tax_rate_ppm: 190000 })]);
  await bill('B3', supplier, [line('Mantenimiento aire acondicionado', '5145', 104_900)]);
  await bill('B4', supplier, [line('Arriendo oficina noviembre', '5120', 4_000_000)]);
  await bill('B5', supplier, [line('Papelería', '5195', 450_000)]);
  await bill('B6', supplier, [{ ...line('Computadores portátiles', '1528', 1_000_000, { tax_rate_ppm: 190000 }), quantity: 2 }]);
  await bill('B7', lawyers, [line('Honorarios auditoría', '5110', 1_000_000), line('Escritorio', '1524', 300_000), line('Flete de mercancía', '5135', 600_000, { withholding_concept: 'transporte_carga' })]);
  await bill('B8', supplier, [line('Cafetería', '5195', 200_000)], [{ type: 'retefuente', rate_ppm: 25000 }]);
  ids.NC6 = (await call('bills.credit_note', { bill_id: ids.B6, supplier_number: 'NC-6', reason: 'Devolución de un computador', issue_date: '2026-11-20', lines: [{ line: 0, quantity: 1 }] })).credit_note.id;

  const consulting = (await call('items.create', { name: 'Consultoría', kind: 'service', price: { amount: 10_000_000 * C, currency: 'COP' } })).item;
  const laptops = (await call('items.create', { name: 'Equipos', kind: 'product', price: { amount: 5_000_000 * C, currency: 'COP' } })).item;
  expect([consulting.withholding_concept, laptops.withholding_concept]).toEqual([null, null]);
  const customer = await andina(owner);
  const invoice = async (key: string, lines: Record<string, unknown>[], withholdings: Record<string, unknown>[]) => {
    const d = await call('invoices.create', { customer_id: customer, currency: 'COP', issue_date: '2026-11-12', due_date: '2026-12-12', lines, withholdings });
    ids[key] = (await call('invoices.post', { id: d.invoice.id })).invoice.id;
  };
  await invoice('I1', [{ item_id: consulting.id, quantity: 1 }], [{ type: 'retefuente', rate_ppm: 40000 }]);
  await invoice('I2', [{ item_id: laptops.id, quantity: 1 }, { description: 'Alquiler de equipo', quantity: 1, unit_price: 1_000_000 * C, withholding_concept: 'arrendamiento_muebles' }], [{ type: 'retefuente', rate_ppm: 25000 }]);
});
afterAll(async () => {
  await sg?.close();
});

describe('retención en la fuente by concept: a month of bills and invoices against the hand calculation', () => {
  it('takes each concept of a bill on its own base, at its rate, only from its minimum; books it to its 2365 sub-account', async () => {
    const b = async (key: string) => (await call('bills.get', { id: ids[key] })).bill;
    const w = (bill: any) => bill.withholdings.map((x: any) => [x.type, x.concept ?? null, x.rate_ppm, x.base, x.amount]);
    expect(w(await b('B1'))).toEqual([['retefuente', 'honorarios', 110000, 3_000_000 * C, 330_000 * C], ['reteiva', null, 150000, 570_000 * C, 85_500 * C]]);
    expect(w(await b('B2'))).toEqual([['retefuente', 'servicios', 40000, 800_000 * C, 32_000 * C]]);
    expect(w(await b('B3'))).toEqual([]);
    expect(w(await b('B4'))).toEqual([['retefuente', 'arrendamiento_inmuebles', 35000, 4_000_000 * C, 140_000 * C]]);
    expect(w(await b('B5'))).toEqual([]);
    expect(w(await b('B6'))).toEqual([['retefuente', 'compras', 25000, 2_000_000 * C, 50_000 * C]]);
    expect(w(await b('B7'))).toEqual([['retefuente', 'honorarios', 110000, 1_000_000 * C, 110_000 * C], ['retefuente', 'transporte_carga', 10000, 600_000 * C, 6_000 * C]]);
    expect(w(await b('B8'))).toEqual([['retefuente', 'compras', 25000, 200_000 * C, 5_000 * C]]);
    expect(w(await b('NC6'))).toEqual([['retefuente', 'compras', 25000, 1_000_000 * C, 25_000 * C]]);
    // B7 owes the vendor 1,900,000 − 110,000 − 6,000 = 1,784,000; each line keeps its concept.
    const b7 = await b('B7');
    expect(b7.lines.map((l: any) => l.withholding_concept)).toEqual(['honorarios', 'compras', 'transporte_carga']);
    expect(b7).toMatchObject({ total: 1_900_000 * C, withholding_total: 116_000 * C, amount_due: 1_784_000 * C });

    // B1: Dr 5110 3,000,000, Dr 240810 570,000 = 3,570,000; Cr 236515 330,000, Cr 236740 85,500, Cr 220505 3,570,000 − 415,500 = 3,154,500.
    expect(await entryOf(`je_${ids.B1}`)).toEqual([
      ['5110', 3_000_000 * C, 0], ['240810', 570_000 * C, 0], ['220505', 0, 3_154_500 * C], ['236515', 0, 330_000 * C], ['236740', 0, 85_500 * C],
    ]);
    // B2 is a service: 236525, never 236540 (the audit's finding).
    expect(await entryOf(`je_${ids.B2}`)).toEqual([['5135', 800_000 * C, 0], ['240810', 152_000 * C, 0], ['220505', 0, 920_000 * C], ['236525', 0, 32_000 * C]]);
    expect(await entryOf(`je_${ids.B3}`)).toEqual([['5145', 104_900 * C, 0], ['220505', 0, 104_900 * C]]);
    expect(await entryOf(`je_${ids.B4}`)).toEqual([['5120', 4_000_000 * C, 0], ['220505', 0, 3_860_000 * C], ['236530', 0, 140_000 * C]]);
    // B7: Dr 5110 1,000,000, 1524 300,000, 5135 600,000; Cr 220505 1,784,000, 236515 110,000, 236525 6,000.
    expect(await entryOf(`je_${ids.B7}`)).toEqual([
      ['5110', 1_000_000 * C, 0], ['1524', 300_000 * C, 0], ['5135', 600_000 * C, 0], ['220505', 0, 1_784_000 * C], ['236515', 0, 110_000 * C], ['236525', 0, 6_000 * C],
    ]);
    // NC-6 takes back one computer: Dr 220505 1,190,000 − 25,000 = 1,165,000, Dr 236540 25,000; Cr 1528 1,000,000, Cr 240810 190,000.
    expect(await entryOf(`je_${ids.NC6}`)).toEqual([['220505', 1_165_000 * C, 0], ['236540', 25_000 * C, 0], ['1528', 0, 1_000_000 * C], ['240810', 0, 190_000 * C]]);
  });

  it('books what customers withhold on sales to the 135515 auxiliary of each line\'s concept', async () => {
    const i1 = (await call('invoices.get', { id: ids.I1 })).invoice;
    expect(i1.lines[0].withholding_concept).toBe('servicios');
    expect(i1.withholdings).toEqual([{ type: 'retefuente', rate_ppm: 40000, base: 10_000_000 * C, amount: 400_000 * C, concept: 'servicios' }]);
    // I1: Dr 130505 11,900,000 − 400,000 = 11,500,000, Dr 13551525 400,000; Cr 413595 10,000,000, Cr 240805 1,900,000.
    expect(await entryOf(`je_${ids.I1}`)).toEqual([['130505', 11_500_000 * C, 0], ['13551525', 400_000 * C, 0], ['413595', 0, 10_000_000 * C], ['240805', 0, 1_900_000 * C]]);
    const i2 = (await call('invoices.get', { id: ids.I2 })).invoice;
    expect(i2.withholdings).toEqual([
      { type: 'retefuente', rate_ppm: 25000, base: 5_000_000 * C, amount: 125_000 * C, concept: 'compras' },
      { type: 'retefuente', rate_ppm: 25000, base: 1_000_000 * C, amount: 25_000 * C, concept: 'arrendamiento_muebles' },
    ]);
    // I2: total 6,000,000 + VAT 1,140,000 = 7,140,000; Dr 130505 7,140,000 − 150,000 = 6,990,000, Dr 13551540 125,000, Dr 13551530 25,000.
    expect(await entryOf(`je_${ids.I2}`)).toEqual([
      ['130505', 6_990_000 * C, 0], ['13551540', 125_000 * C, 0], ['13551530', 25_000 * C, 0], ['413595', 0, 6_000_000 * C], ['240805', 0, 1_140_000 * C],
    ]);
  });

  it('answers the month\'s totals by concept and its Formulario 350, equal to the hand figures and to the books', async () => {
    const m = await call('tax.withholdings', { month: '2026-11' });
    expect(m).toMatchObject({ month: '2026-11', currency: 'COP', uvt: { year: 2026, value: 52374 } });
    const t = (rows: any[]) => rows.map((r) => [r.type, r.concept, r.account, r.base, r.amount]);
    // Practiced, by concept: honorarios B1 + B7 = 4,000,000 → 440,000; servicios B2 800,000 → 32,000; transporte B7 600,000 → 6,000;
    // arrendamiento B4 4,000,000 → 140,000; compras B6 2,000,000 − NC-6 1,000,000 + B8 200,000 = 1,200,000 → 50,000 − 25,000 + 5,000 = 30,000;
    // ReteIVA B1 570,000 → 85,500. B3 and B5 (under their minimum) count nowhere.
    expect(t(m.practiced)).toEqual([
      ['retefuente', 'honorarios', '236515', 4_000_000 * C, 440_000 * C],
      ['retefuente', 'servicios', '236525', 800_000 * C, 32_000 * C],
      ['retefuente', 'transporte_carga', '236525', 600_000 * C, 6_000 * C],
      ['retefuente', 'arrendamiento_inmuebles', '236530', 4_000_000 * C, 140_000 * C],
      ['retefuente', 'compras', '236540', 1_200_000 * C, 30_000 * C],
      ['reteiva', null, '236740', 570_000 * C, 85_500 * C],
    ]);
    expect(t(m.suffered)).toEqual([
      ['retefuente', 'servicios', '13551525', 10_000_000 * C, 400_000 * C],
      ['retefuente', 'arrendamiento_muebles', '13551530', 1_000_000 * C, 25_000 * C],
      ['retefuente', 'compras', '13551540', 5_000_000 * C, 125_000 * C],
    ]);
    // Formulario 350, renta rows: servicios = servicios + transporte de carga: base 1,400,000, withheld 38,000.
    // Declared to the nearest thousand pesos (art. 577 E.T.); every row here is already whole thousands.
    const rows = m.form_350.renta.map((r: any) => [r.row, r.base, r.withheld, r.declared.base, r.declared.withheld, r.booked]);
    expect(rows).toEqual([
      ['honorarios', 4_000_000 * C, 440_000 * C, 4_000_000 * C, 440_000 * C, 440_000 * C],
      ['comisiones', 0, 0, 0, 0, 0],
      ['servicios', 1_400_000 * C, 38_000 * C, 1_400_000 * C, 38_000 * C, 38_000 * C],
      ['arrendamientos', 4_000_000 * C, 140_000 * C, 4_000_000 * C, 140_000 * C, 140_000 * C],
      ['compras', 1_200_000 * C, 30_000 * C, 1_200_000 * C, 30_000 * C, 30_000 * C],
    ]);
    // Renta: 440,000 + 38,000 + 140,000 + 30,000 = 648,000. IVA 85,500 is declared 86,000 (half up to the thousand).
    // Total to pay: 648,000 + 86,000 = 734,000 (exactly withheld: 733,500).
    expect(m.form_350.renta_total).toEqual({ withheld: 648_000 * C, declared: 648_000 * C });
    expect(m.form_350.iva).toMatchObject({ withheld: 85_500 * C, declared: 86_000 * C, account: '236740', booked: 85_500 * C });
    expect(m.form_350.total).toEqual({ withheld: 733_500 * C, declared: 734_000 * C });

    // The books agree: November's trial balance movement on each 2365 sub-account is the row's withholding.
    const tb = await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: { metric: 'trial_balance', as_of: '2026-11-30' } }, owner);
    const bal = Object.fromEntries((tb.body.data.invoicesMetric.rows as any[]).map((r) => [r.account, [r.debit, r.credit, r.name]]));
    expect(bal['236515']).toEqual([0, 440_000 * C, 'Honorarios']);
    expect(bal['236525']).toEqual([0, 38_000 * C, 'Servicios']);
    expect(bal['236530']).toEqual([0, 140_000 * C, 'Arrendamientos']);
    expect(bal['236540']).toEqual([25_000 * C, 55_000 * C, 'Compras']);
    expect(bal['13551525']).toEqual([400_000 * C, 0, 'Servicios']);

    // October had none; another workspace sees none of November's.
    expect((await call('tax.withholdings', { month: '2026-10' })).form_350.total).toEqual({ withheld: 0, declared: 0 });
    const stranger = await call('tax.withholdings', { month: '2026-11' }, testPrincipal());
    expect([stranger.practiced, stranger.suffered, stranger.form_350.total.withheld]).toEqual([[], [], 0]);
    expect(await sg.call('tax.withholdings', { month: '2026-13' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/month' });
  });

  it('puts the month\'s Formulario 350 figures on its deadline in the agenda\'s tax lane', async () => {
    const r = await sg.graphql('query($l: String!, $w: JSON!) { invoicesAgenda(lane: $l, window: $w) }', { l: 'tax', w: { from: '2026-12-01', to: '2026-12-31', limit: 50, overdue: false } }, owner);
    expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
    const entry = (r.body.data.invoicesAgenda as any[]).find((e) => e.ref?.obligation === 'withholding');
    // NIT 900373115-3: last digit 5 → the 11th business day of December 2026 (8 December is a holiday): the 16th.
    expect(entry).toMatchObject({ date: '2026-12-16', amount: 734_000 * C, currency: 'COP' });
    expect(entry.ref).toMatchObject({ period: '2026-11/2026-11', form: '350', tool: 'tax.withholdings', month: '2026-11', form_350: { renta: 648_000 * C, iva: 86_000 * C, total: 734_000 * C } });
    expect(entry.ref.form_350.rows).toEqual([
      { row: 'honorarios', base: 4_000_000 * C, withheld: 440_000 * C }, { row: 'servicios', base: 1_400_000 * C, withheld: 38_000 * C },
      { row: 'arrendamientos', base: 4_000_000 * C, withheld: 140_000 * C }, { row: 'compras', base: 1_200_000 * C, withheld: 30_000 * C },
    ]);
  });

  it('counts a bill whose post died before its withholdings were counted exactly once, by the sweep after a minute (never a read)', async () => {
    const p = testPrincipal();
    const v = await vendor(p, 'Consultores Uno SAS');
    const d = await call('bills.create', { vendor_id: v, supplier_number: 'FE-K1', currency: 'COP', issue_date: '2026-11-10', lines: [line('Honorarios', '5110', 1_000_000)], withholdings: [{ type: 'retefuente' }] }, p);
    // The process dies while adding the bill's counters: every write to the withholdings rollups fails.
    const coll = rollups(sg.db).collection;
    const original = coll.updateOne;
    coll.updateOne = function (this: unknown, filter: { _id?: unknown }, ...rest: unknown[]) {
      if (String(filter?._id).includes('|wh:')) return Promise.reject(new Error('killed')) as never;
      return (original as (...a: unknown[]) => unknown).call(this, filter, ...rest) as never;
    } as typeof coll.updateOne;
    try {
      expect((await sg.call('bills.post', { id: d.bill.id }, p)).ok).toBe(false);
    } finally {
      coll.updateOne = original;
    }
    // Posted and journalled (honorarios 11 % of 1,000,000 = 110,000 to 236515); its withholding not counted yet.
    expect((await call('bills.get', { id: d.bill.id }, p)).bill.status).toBe('posted');
    expect(await entryOf2(p, `je_${d.bill.id}`)).toContainEqual(['236515', 0, 110_000 * C]);
    // A minute later (the repair leaves a younger intent to the call that wrote it), the owner's sweep counts it, once.
    await sg.db.collection('pending_changes').updateMany({ workspace: p.workspace }, { $set: { at: new Date(Date.now() - 2 * 60_000) } });
    await sg.sweep();
    for (let i = 0; i < 2; i++) {
      const m = await call('tax.withholdings', { month: '2026-11' }, p);
      expect(m.practiced.map((t: any) => [t.concept, t.base, t.amount])).toEqual([['honorarios', 1_000_000 * C, 110_000 * C]]);
      expect(m.form_350.renta[0]).toMatchObject({ row: 'honorarios', withheld: 110_000 * C, booked: 110_000 * C });
    }
    expect(await sg.db.collection('pending_changes').countDocuments({ workspace: p.workspace })).toBe(0);
  });

  it('refuses ReteIVA or ReteICA without a rate, and an unknown concept, at the field', async () => {
    const v = await vendor(owner, 'Otro Proveedor SAS');
    const base = { vendor_id: v, supplier_number: 'FE-X', currency: 'COP', lines: [line('x', '5135', 1000)] };
    expect(await sg.call('bills.create', { ...base, withholdings: [{ type: 'reteiva' }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/withholdings/0/rate_ppm' });
    expect(await sg.call('bills.create', { ...base, lines: [line('x', '5135', 1000, { withholding_concept: 'dividendos' })] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/withholding_concept' });
    expect(await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 100, withholding_concept: 'x' }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/withholding_concept' });
  });
});
