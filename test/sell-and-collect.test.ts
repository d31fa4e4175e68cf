// A company's month of selling and collecting, over real HTTP through the gateway: customers,
// items, a quote accepted into an invoice, posted, sent to the authority sandbox, partly paid,
// one credited. Every figure the read-outs give is checked against a hand calculation over the
// same documents, every journal entry must balance, CUFE/CUDE are recomputed here from
// DOMAIN.md's formula (independently of the service's code), and each refusal has its code.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let workspaceId: string;

const TECH_KEY = 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c';
const PIN = '75315';
const AS_OF = '2026-11-30';

/** What the test keeps of each document it makes. */
const docs: Record<string, any> = {};
const ids: Record<string, string> = {};

async function ok(tool: string, input: unknown): Promise<any> {
  const r = await sys.invoke(tool, input, key);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

async function refused(tool: string, input: unknown, k = key) {
  const r = await sys.invoke(tool, input, k);
  return { status: r.status, ...r.body };
}

async function graph(query: string, variables: Record<string, unknown> = {}) {
  const r = await sys.fetch('/graphql', { key, body: { query, variables } });
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data;
}

const metric = async (q: Record<string, unknown>) => (await graph('query($q: JSON!) { invoicesMetric(query: $q) }', { q })).invoicesMetric;
const records = async (q: Record<string, unknown>) => (await graph('query($q: JSON!) { invoicesRecords(query: $q) }', { q })).invoicesRecords;

/** DOMAIN.md's CUFE/CUDE, written out again here on purpose. */
function expectedKey(doc: any, key: string): string {
  const d = (c: number) => (c / 100).toFixed(2);
  const buyer = doc.customer.tax_id?.number ?? '222222222222';
  const source = `${doc.number}${doc.issue_date}${doc.issue_time}${d(doc.subtotal)}01${d(doc.tax_total)}04${d(0)}03${d(0)}${d(doc.total)}900373115${buyer}${key}2`;
  return createHash('sha384').update(source).digest('hex');
}

beforeAll(async () => {
  sys = await startTestSystem('sellcollect');
  const ws = await sys.workspace('Cuadra Demo SAS');
  key = ws.api_key;
  workspaceId = ws.workspace_id;
});
afterAll(async () => {
  await sys?.stop();
});

describe('a month of selling and collecting', () => {
  it('sets up e-invoicing, customers and the catalog', async () => {
    await ok('einvoicing.configure', {
      // The issuer's fiscal profile DIAN requires on every document (Anexo Técnico 1.9): without its address nothing is sent.
      issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS', responsibilities: ['O-15'], address: { line: 'Calle 93 # 11-28', municipality_code: '11001' }, email: 'facturacion@cuadra.example.co' },
      technical_key: TECH_KEY, software_pin: PIN,
      numbering: { invoice: { prefix: 'SETP', from: 990000001, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 5000 } },
    });
    const andina = await ok('parties.create', { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' }, addresses: [{ line1: 'Cra 7 # 12-34', city: 'Bogotá', country: 'CO' }], contacts: [{ name: 'Lucía Pérez', email: 'lucia@andina.co' }], tags: ['retail'] });
    const buho = await ok('parties.create', { name: 'Ferretería Búho Ltda', kind: 'both', tax_id: { type: 'NIT', number: '860002964-4' } });
    const ana = await ok('parties.create', { name: 'Ana Gómez', kind: 'customer', tax_id: { type: 'CC', number: '1020304050' } });
    ids.andina = andina.party.id;
    ids.buho = buho.party.id;
    ids.ana = ana.party.id;
    docs.parties = { andina: andina.party, buho: buho.party, ana: ana.party };
    ids.consulting = (await ok('items.create', { name: 'Consultoría', kind: 'service', sku: 'CONS-H', price: { amount: 15000000, currency: 'COP' }, tax_rate_ppm: 190000 })).item.id;
    ids.licence = (await ok('items.create', { name: 'Licencia anual', kind: 'product', sku: 'LIC-1', price: { amount: 120000000, currency: 'COP' } })).item.id;
    ids.book = (await ok('items.create', { name: 'Libro de contabilidad', kind: 'product', sku: 'LIB-1', unit: '94', price: { amount: 8999950, currency: 'COP' }, tax_rate_ppm: 50000 })).item.id;

    // Refusals of this step.
    expect(await refused('parties.create', { name: 'X', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-5' } })).toMatchObject({ status: 422, code: 'invalid_input', field: '/tax_id/number' });
    expect(await refused('parties.create', { name: 'Dup', kind: 'vendor', tax_id: { type: 'NIT', number: '800197268-4' } })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('items.create', { name: 'Dup', kind: 'product', sku: 'LIC-1', price: { amount: 1, currency: 'COP' } })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('items.create', { name: 'IVA 16', kind: 'product', price: { amount: 1, currency: 'COP' }, tax_rate_ppm: 160000 })).toMatchObject({ status: 422, code: 'invalid_input', field: '/tax_rate_ppm' });
    expect(await refused('einvoicing.configure', { issuer: { nit: '900373115-4', name: 'x' }, technical_key: TECH_KEY, software_pin: PIN, numbering: { invoice: { prefix: 'X', from: 1, to: 2 } } })).toMatchObject({ status: 422, field: '/issuer/nit' });
    await ok('parties.update', { id: ids.andina, email: 'facturas@andina.co' });
  });

  it('turns an accepted quote into an invoice, posts it and sends it to the sandbox', async () => {
    const andina = docs.parties.andina;
    const quote = (await ok('quotes.create', {
      customer_id: ids.andina, currency: 'COP', issue_date: '2026-10-28',
      lines: [{ item_id: ids.consulting, quantity: 10 }, { item_id: ids.licence, quantity: 1, discount_bps: 1000 }],
    })).quote;
    // The buyer is the crm party as crm knows it, not typed again by the caller.
    expect(quote.customer).toMatchObject({ name: andina.name, email: 'facturas@andina.co', tax_id: { type: 'NIT', number: andina.tax_id.number, check_digit: andina.tax_id.check_digit } });
    expect(await refused('quotes.convert', { id: quote.id })).toMatchObject({ status: 409, code: 'conflict' });
    await ok('quotes.send', { id: quote.id });
    await ok('quotes.accept', { id: quote.id });
    const converted = await ok('quotes.convert', { id: quote.id });
    expect(converted.quote.status).toBe('converted');
    // Dated on the day it was agreed to be invoiced.
    const draft = (await ok('invoices.update', { id: converted.invoice.id, issue_date: '2026-11-02', due_date: '2026-12-02' })).invoice;
    // 10 h × 150,000.00 = 1,500,000.00 + licence 1,200,000.00 − 10 % = 1,080,000.00; VAT 19 % on both.
    expect(draft).toMatchObject({ subtotal: 258000000, tax_total: 49020000, total: 307020000, amount_due: 307020000 });
    const posted = (await ok('invoices.post', { id: draft.id })).invoice;
    expect(posted).toMatchObject({ status: 'posted', number: 'SETP990000001' });
    expect(posted.cufe).toBe(expectedKey(posted, TECH_KEY));
    ids.inv1 = posted.id;

    expect(await refused('invoices.post', { id: posted.id })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('invoices.update', { id: posted.id, notes: 'edit' })).toMatchObject({ status: 409, code: 'conflict' });

    const sent = await ok('invoices.send', { id: posted.id });
    expect(sent.authority).toMatchObject({ is_valid: true, status_code: '00', document_key: posted.cufe });
    expect(sent.invoice.authority.status).toBe('accepted');
    expect(await refused('invoices.send', { id: posted.id })).toMatchObject({ status: 409, code: 'conflict' });
    const tools = await sys.fetch('/v1/tools?module=invoices', { key });
    const risk = Object.fromEntries(tools.body.tools.map((t: any) => [t.name, t.risk]));
    expect(risk).toMatchObject({ 'invoices.post': 'write', 'invoices.send': 'external', 'invoices.credit_note': 'destructive', 'invoices.get': 'read' });
  });

  it('invoices the other customers, with withholdings, VAT 5 % and an old October invoice', async () => {
    const make = async (input: Record<string, unknown>) => {
      const d = (await ok('invoices.create', { currency: 'COP', ...input })).invoice;
      return (await ok('invoices.post', { id: d.id })).invoice;
    };
    // Búho withholds 4 % retención en la fuente, 15 % ReteIVA and 9.66 ‰ ReteICA.
    docs.inv2 = await make({
      customer_id: ids.buho, issue_date: '2026-11-05', due_date: '2026-11-20',
      lines: [{ item_id: ids.consulting, quantity: 4 }], withholdings: [{ type: 'retefuente', rate_ppm: 40000 }, { type: 'reteiva', rate_ppm: 150000 }, { type: 'reteica', rate_ppm: 9660 }],
    });
    // 600,000.00 base: 24,000.00 + 15 % of 114,000.00 = 17,100.00 + 5,796.00
    expect(docs.inv2).toMatchObject({ subtotal: 60000000, tax_total: 11400000, total: 71400000, withholding_total: 2400000 + 1710000 + 579600, amount_due: 71400000 - 4689600 });
    docs.inv3 = await make({
      customer_id: ids.ana, issue_date: '2026-11-12', due_date: '2026-11-12',
      lines: [{ item_id: ids.book, quantity: 3 }],
    });
    // 3 × 89,999.50 = 269,998.50; VAT 5 % = 13,499.925 → 13,499.93 (half away from zero per line)
    expect(docs.inv3).toMatchObject({ subtotal: 26999850, tax_total: 1349993, total: 28349843 });
    docs.inv4 = await make({
      customer_id: ids.andina, issue_date: '2026-10-10', due_date: '2026-10-25',
      lines: [{ description: 'Soporte octubre', quantity: 1, unit_price: 50000000, tax_rate_ppm: 190000 }],
    });
    docs.inv5 = await make({
      customer_id: ids.buho, issue_date: '2026-11-26', due_date: '2026-12-26',
      lines: [{ description: 'Capacitación', quantity: 2, unit_price: 35000000, tax_rate_ppm: 0 }],
    });
    expect([docs.inv2, docs.inv3, docs.inv4, docs.inv5].map((i) => i.number)).toEqual(['SETP990000002', 'SETP990000003', 'SETP990000004', 'SETP990000005']);
    for (const inv of [docs.inv2, docs.inv3, docs.inv4, docs.inv5]) expect(inv.cufe).toBe(expectedKey(inv, TECH_KEY));
    const draftOnly = (await ok('invoices.create', { customer_id: ids.ana, currency: 'COP', issue_date: '2026-11-27', lines: [{ description: 'Borrador', quantity: 1, unit_price: 100 }] })).invoice;
    ids.draft = draftOnly.id;
    expect(await refused('invoices.send', { id: draftOnly.id })).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('collects: part of the quote invoice, Búho in full, October plus an over-payment', async () => {
    const p1 = (await ok('payments.register', { customer_id: ids.andina, amount: 100000000, currency: 'COP', date: '2026-11-15', reference: 'TRF-1001', invoices: [{ invoice_id: ids.inv1, amount: 100000000 }] })).payment;
    expect(p1).toMatchObject({ applied: 100000000, unapplied: 0 });
    const p2 = (await ok('payments.register', { customer_id: ids.buho, amount: docs.inv2.amount_due, currency: 'COP', date: '2026-11-25', reference: 'TRF-1002', invoices: [{ invoice_id: docs.inv2.id }] })).payment;
    expect(p2.applied).toBe(docs.inv2.amount_due);
    // Andina pays October's invoice and 100,000.00 more than it owes there: kept as its credit.
    const p3 = (await ok('payments.register', { customer_id: ids.andina, amount: docs.inv4.amount_due + 10000000, currency: 'COP', date: '2026-11-28', invoices: [{ invoice_id: docs.inv4.id }] })).payment;
    expect(p3).toMatchObject({ applied: docs.inv4.amount_due, unapplied: 10000000 });
    ids.p3 = p3.id;
    expect(await refused('payments.register', { customer_id: ids.andina, amount: 1000, currency: 'COP', invoices: [{ invoice_id: docs.inv4.id }] })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('payments.register', { customer_id: ids.andina, amount: 999999999999, currency: 'COP', invoices: [{ invoice_id: ids.inv1, amount: 999999999999 }] })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('payments.register', { customer_id: ids.buho, amount: 1000, currency: 'COP', invoices: [{ invoice_id: ids.inv1 }] })).toMatchObject({ status: 422, field: '/invoices/0/invoice_id' });
    expect(await refused('payments.get', { id: 'pay_nothere' })).toMatchObject({ status: 404, code: 'not_found' });
    const inv1 = (await ok('invoices.get', { id: ids.inv1 })).invoice;
    expect(inv1).toMatchObject({ status: 'partially_paid', balance: 307020000 - 100000000 });
  });

  it('credits Ana’s invoice in full (concept 2) and refuses to credit more', async () => {
    expect(await refused('invoices.credit_note', { invoice_id: docs.inv3.id, concept: 1, reason: 'x', lines: [{ line: 0, quantity: 4 }] })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('invoices.credit_note', { invoice_id: ids.draft, concept: 1, reason: 'x' })).toMatchObject({ status: 409, code: 'conflict' });
    expect(await refused('invoices.credit_note', { invoice_id: 'inv_nothere', concept: 1, reason: 'x' })).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refused('invoices.credit_note', { invoice_id: docs.inv3.id, concept: 9, reason: 'x' })).toMatchObject({ status: 422, field: '/concept' });
    const r = await ok('invoices.credit_note', { invoice_id: docs.inv3.id, concept: 2, reason: 'Pedido anulado por la clienta', issue_date: '2026-11-20' });
    docs.cn1 = r.credit_note;
    expect(r.credit_note).toMatchObject({ number: 'NC1', kind: 'credit_note', subtotal: docs.inv3.subtotal, total: docs.inv3.total });
    expect(r.credit_note.cude).toBe(expectedKey(r.credit_note, PIN));
    expect(r.invoice).toMatchObject({ status: 'cancelled', balance: 0 });
    expect(await refused('invoices.credit_note', { invoice_id: docs.inv3.id, concept: 5, reason: 'again' })).toMatchObject({ status: 409, code: 'conflict' });
    const sent = await ok('invoices.send', { id: r.credit_note.id });
    expect(sent.authority).toMatchObject({ is_valid: true, document_key: r.credit_note.cude });
  });

  it('keeps every journal entry balanced, and the receivable account equal to what is open', async () => {
    const entries = (await ok('journal.list', { from: '2026-10-01', to: '2026-11-30', limit: 100 })).rows;
    // 5 invoices + 1 credit note + 3 payments
    expect(entries).toHaveLength(9);
    // The same entries as a records source (newest first, counted on write), and page by page through journal.list.
    const source = await ok('records.list', { source: 'journal_entries', limit: 100 });
    expect(source.total).toBe(9);
    expect(source.rows.map((e: any) => e.id).sort()).toEqual(entries.map((e: any) => e.id).sort());
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok('journal.list', { limit: 4, ...(cursor ? { cursor } : {}) });
      paged.push(...page.rows.map((e: any) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged).toEqual(source.rows.map((e: any) => e.id));
    for (const e of entries) {
      expect(e.total_debit, e.memo).toBe(e.total_credit);
      expect(e.total_debit).toBeGreaterThan(0);
    }
    const net = (account: string) => entries.flatMap((e: any) => e.lines).filter((l: any) => l.account === account).reduce((s: number, l: any) => s + l.debit - l.credit, 0);
    const open = [];
    for (const id of [ids.inv1, docs.inv2.id, docs.inv3.id, docs.inv4.id, docs.inv5.id]) open.push((await ok('invoices.get', { id })).invoice);
    const outstanding = open.reduce((s, i) => s + i.balance, 0);
    expect(net('130505')).toBe(outstanding);
    expect(net('280505')).toBe(-10000000); // Andina's credit
    // Búho's 4 % on consulting, a service: carried under 135515's servicios auxiliary.
    expect(net('13551525')).toBe(2400000);
    docs.final = Object.fromEntries(open.map((i) => [i.id, i]));
  });

  it('reports outstanding, aging, revenue per week, status and top customers equal to the hand calculation', async () => {
    const all = Object.values(docs.final) as any[];
    const handOutstanding = all.reduce((s, i) => s + i.balance, 0);
    // By hand: inv1 3,070,200.00 − 1,000,000.00 open; inv2 paid; inv3 cancelled; inv4 paid; inv5 700,000.00 open.
    expect(handOutstanding).toBe(207020000 + 70000000);
    const outstanding = await metric({ metric: 'ar_outstanding', from: '2026-11-01', to: AS_OF, interval: 'month' });
    expect(outstanding.summary.value).toBe(handOutstanding);
    expect(outstanding.series).toEqual([{ period: '2026-11-01', period_end: AS_OF, value: handOutstanding }]);
    // At the end of October only October's invoice was open.
    const october = await metric({ metric: 'ar_outstanding', from: '2026-10-01', to: '2026-10-31', interval: 'month' });
    expect(october.summary.value).toBe(docs.inv4.amount_due);

    // Aging at 30 November: inv1 due 2 December → current; inv5 due 26 December → current.
    // At 16 November: inv4 (due 25 Oct, 22 days) 1–30; inv2 not yet due (20 Nov) current; inv3 due 12 Nov → 1–30; inv1 current.
    const aging = await metric({ metric: 'ar_aging', as_of: AS_OF });
    expect(aging.rows).toEqual([
      { bucket: 'current', value: handOutstanding }, { bucket: '1_30', value: 0 }, { bucket: '31_60', value: 0 },
      { bucket: '61_90', value: 0 }, { bucket: 'over_90', value: 0 },
    ]);
    const mid = await metric({ metric: 'ar_aging', as_of: '2026-11-16' });
    const inv1At16 = 307020000 - 100000000;
    expect(mid.rows.find((r: any) => r.bucket === 'current')).toEqual({ bucket: 'current', value: inv1At16 + docs.inv2.amount_due });
    expect(mid.rows.find((r: any) => r.bucket === '1_30')).toEqual({ bucket: '1_30', value: docs.inv4.amount_due + docs.inv3.amount_due });
    expect(mid.summary.value).toBe(inv1At16 + docs.inv2.amount_due + docs.inv4.amount_due + docs.inv3.amount_due);

    // Revenue (taxable base, net of credit notes) per ISO week of November, by issue date.
    const revenue = await metric({ metric: 'revenue', from: '2026-11-01', to: AS_OF, interval: 'week', compare: 'previous_period' });
    const inWeek = (from: string, to: string) => [
      { date: '2026-11-02', v: 258000000 }, { date: docs.inv2.issue_date, v: docs.inv2.subtotal }, { date: docs.inv3.issue_date, v: docs.inv3.subtotal },
      { date: docs.inv5.issue_date, v: docs.inv5.subtotal }, { date: docs.cn1.issue_date, v: -docs.cn1.subtotal },
    ].filter((x) => x.date >= from && x.date <= to).reduce((s, x) => s + x.v, 0);
    expect(revenue.series.map((p: any) => [p.period, p.period_end, p.value])).toEqual([
      ['2026-11-01', '2026-11-01', 0],
      ['2026-11-02', '2026-11-08', inWeek('2026-11-02', '2026-11-08')],
      ['2026-11-09', '2026-11-15', inWeek('2026-11-09', '2026-11-15')],
      ['2026-11-16', '2026-11-22', inWeek('2026-11-16', '2026-11-22')],
      ['2026-11-23', '2026-11-29', inWeek('2026-11-23', '2026-11-29')],
      ['2026-11-30', '2026-11-30', 0],
    ]);
    expect(revenue.series[3].value).toBe(-26999850); // the week of the credit note
    const novemberRevenue = 258000000 + 60000000 + 26999850 - 26999850 + 70000000;
    expect(revenue.summary).toEqual({ value: novemberRevenue, previous: 50000000, change_bps: Math.round(((novemberRevenue - 50000000) * 10000) / 50000000) });

    const status = await metric({ metric: 'invoices_status', from: '2026-11-01', to: AS_OF });
    expect(status.rows).toEqual([
      { status: 'draft', count: 1 }, { status: 'posted', count: 1 }, { status: 'partially_paid', count: 1 }, { status: 'paid', count: 1 }, { status: 'cancelled', count: 1 },
    ]);

    const top = await metric({ metric: 'top_customers', from: '2026-10-01', to: AS_OF, limit: 2 });
    // Andina: 2,580,000.00 + 500,000.00; Búho: 600,000.00 + 700,000.00; Ana: 0 after the credit note.
    expect(top.rows).toEqual([
      { customer_id: ids.andina, name: 'Tienda Andina SAS', value: 258000000 + 50000000 },
      { customer_id: ids.buho, name: 'Ferretería Búho Ltda', value: 60000000 + 70000000 },
    ]);
  });

  it('lists records for each source in the contract shape', async () => {
    const inv = await records({ source: 'invoices', limit: 3 });
    expect(inv).toMatchObject({ source: 'invoices', total: 7 });
    expect(inv.rows).toHaveLength(3);
    const rest = await records({ source: 'invoices', limit: 5, cursor: inv.next_cursor });
    expect(rest.rows).toHaveLength(4);
    expect(rest.next_cursor).toBeUndefined();
    expect(new Set([...inv.rows, ...rest.rows].map((r: any) => r.id)).size).toBe(7);
    expect((await records({ source: 'invoices', kind: 'credit_note' })).rows.map((r: any) => r.number)).toEqual(['NC1']);
    expect((await records({ source: 'invoices', status: 'paid' })).total).toBe(2);
    expect((await records({ source: 'invoices', search: 'búho' })).rows).toHaveLength(2);
    expect((await records({ source: 'payments', kind: 'incoming' })).total).toBe(3);
    expect((await records({ source: 'items', kind: 'product' })).rows).toHaveLength(2);
    expect((await records({ source: 'quotes', status: 'converted' })).rows).toHaveLength(1);
    expect((await records({ source: 'sales_orders' })).total).toBe(0);
    const parties = (await graph('query($q: JSON!) { crmRecords(query: $q) }', { q: { source: 'parties', kind: 'customer' } })).crmRecords;
    expect(parties).toMatchObject({ source: 'parties' });
    expect(parties.rows).toHaveLength(3);
    const agenda = (await graph('query($w: JSON!) { invoicesAgenda(lane: "receivables", window: $w) }', { w: { from: '2026-11-01', to: '2026-12-31', limit: 100 } })).invoicesAgenda;
    expect(agenda.map((e: any) => [e.date, e.amount])).toEqual([['2026-12-02', 207020000], ['2026-12-26', 70000000]]);
  });

  it('refuses what the credential does not reach', async () => {
    const viewer = await sys.key(workspaceId, 'viewer');
    expect(await refused('invoices.post', { id: ids.draft }, viewer.api_key)).toMatchObject({ status: 403, code: 'policy_denied' });
    const member = await sys.key(workspaceId, 'member');
    expect(await refused('invoices.credit_note', { invoice_id: ids.inv1, concept: 5, reason: 'x' }, member.api_key)).toMatchObject({ status: 403, code: 'policy_denied' });
    const readOnly = await sys.key(workspaceId, 'owner', ['%:read']);
    expect(await refused('invoices.send', { id: ids.inv1 }, readOnly.api_key)).toMatchObject({ status: 403, code: 'policy_denied' });
    expect((await refused('invoices.get', { id: ids.inv1 }, readOnly.api_key)).status).toBe(200);
    const other = await sys.workspace('Otra SAS');
    expect(await refused('invoices.get', { id: ids.inv1 }, other.api_key)).toMatchObject({ status: 404, code: 'not_found' });
  });
});
