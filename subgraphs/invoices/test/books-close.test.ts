import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { configuredWorkspace, draft, startInvoices, unwrap } from './setup.ts';
import { postedBill, vendor } from './bills-helpers.ts';
import { backfillLedgerRollups, BACKFILL_MARKER } from '../src/books/backfill.ts';
import { journalEntries, ledgerDeltas } from '../src/books/journal.ts';
import { applyRollupIntent, rollupIntent } from '../src/books/rollup-intents.ts';

/** Issue 17 (books): dimensions and profitability, cash flow, printable statements, rollup backfill. */

const run = promisify(execFile);
const pdfDir = mkdtempSync(join(tmpdir(), 'books-pdf-'));

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const metric = async (owner: Principal, query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: query }, owner), 'invoicesMetric');
const metricError = async (owner: Principal, query: Record<string, unknown>) => {
  const r = await sg.graphql('query($q: JSON!) { invoicesMetric(query: $q) }', { q: query }, owner);
  return { code: r.body.errors?.[0]?.extensions?.code, field: r.body.errors?.[0]?.extensions?.field };
};
const records = async (owner: Principal, query: Record<string, unknown>) => unwrap(await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner), 'invoicesRecords');

async function call(owner: Principal, tool: string, input: Record<string, unknown>) {
  const r = await sg.call(tool, input, owner);
  if (!r.ok) throw new Error(`${tool} failed: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

async function manual(owner: Principal, date: string, memo: string, lines: Record<string, unknown>[]) {
  const d = await call(owner, 'journal.create', { date, memo, lines });
  return (await call(owner, 'journal.post', { id: d.entry.id })).entry;
}

describe('dimensions and tags: tools, sources, refusals, sealing', () => {
  it('cost_center exists everywhere; dimensions and tags are created, listed, archived; refusals name the field', async () => {
    const owner = testPrincipal();
    expect((await call(owner, 'dimensions.list', {})).rows).toEqual([{ key: 'cost_center', name: 'Centro de costo', default: true, status: 'active' }]);
    expect((await call(owner, 'dimensions.create', { key: 'proyecto', name: 'Proyecto' })).dimension).toEqual({ key: 'proyecto', name: 'Proyecto', default: false, status: 'active' });
    expect(await sg.call('dimensions.create', { key: 'proyecto', name: 'Otro' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('dimensions.create', { key: 'cost_center', name: 'CC' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('dimensions.create', { key: 'Proyecto X', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/key' });
    await call(owner, 'dimensions.create_tag', { dimension: 'cost_center', key: 'ventas', name: 'Ventas' });
    await call(owner, 'dimensions.create_tag', { dimension: 'cost_center', key: 'admin', name: 'Administración' });
    await call(owner, 'dimensions.create_tag', { dimension: 'proyecto', key: 'erp-2026', name: 'Implantación ERP' });
    expect(await sg.call('dimensions.create_tag', { dimension: 'region', key: 'x', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/dimension' });
    expect(await sg.call('dimensions.create_tag', { dimension: 'cost_center', key: 'ventas', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('dimensions.create_tag', { dimension: 'cost_center', key: 'Ventas!', name: 'x' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/key' });
    expect((await call(owner, 'dimensions.archive_tag', { dimension: 'cost_center', key: 'admin' })).tag).toEqual({ dimension: 'cost_center', key: 'admin', name: 'Administración', status: 'inactive' });
    expect(await sg.call('dimensions.archive_tag', { dimension: 'cost_center', key: 'nada' }, owner)).toMatchObject({ ok: false, code: 'not_found' });

    // Lines are tagged only with active tags of active dimensions.
    const je = (tags: Record<string, unknown>) => sg.call('journal.create', { date: '2026-10-02', memo: 'x', lines: [{ account: '5195', debit: 100, tags }, { account: '111005', credit: 100 }] }, owner);
    expect(await je({ cost_center: 'admin' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/cost_center' });
    expect(await je({ cost_center: 'nadie' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/cost_center' });
    expect(await je({ region: 'norte' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/region' });
    expect(await je({ cost_center: 'Ventas Norte' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/cost_center' });
    await call(owner, 'dimensions.archive', { key: 'proyecto' });
    expect(await je({ proyecto: 'erp-2026' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/proyecto' });
    await call(owner, 'dimensions.archive', { key: 'proyecto', restore: true });
    expect(await je({ proyecto: 'erp-2026', cost_center: 'ventas' })).toMatchObject({ ok: true });
    await call(owner, 'dimensions.archive_tag', { dimension: 'cost_center', key: 'admin', restore: true });
    expect(await je({ cost_center: 'admin' })).toMatchObject({ ok: true });
    expect(await sg.call('invoices.create', { customer_id: 'pty_nobody', currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 100, tags: { cost_center: 'nadie' } }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/cost_center' });
    expect(await sg.call('bills.create', { vendor_id: 'pty_nobody', supplier_number: 'FE-1', currency: 'COP', lines: [{ description: 'x', account: '5135', quantity: 1, unit_price: 100, tags: { cost_center: 'nadie' } }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tags/cost_center' });

    // Sources (specification §2.5): tags by ref (dimension), status, search; tag_dimensions by search.
    expect((await records(owner, { source: 'tags' })).rows.map((r: any) => `${r.dimension}/${r.key}`)).toEqual(['cost_center/admin', 'cost_center/ventas', 'proyecto/erp-2026']);
    expect((await records(owner, { source: 'tags', ref: 'proyecto' })).rows.map((r: any) => r.key)).toEqual(['erp-2026']);
    expect((await records(owner, { source: 'tags', search: 'admin' })).rows.map((r: any) => r.key)).toEqual(['admin']);
    expect((await records(owner, { source: 'tags', status: 'inactive' })).rows).toEqual([]);
    const paged = await records(owner, { source: 'tags', limit: 2 });
    expect(paged.rows).toHaveLength(2);
    expect((await records(owner, { source: 'tags', limit: 2, cursor: paged.next_cursor })).rows.map((r: any) => r.key)).toEqual(['erp-2026']);
    await expect(records(owner, { source: 'tags', status: 'archived' })).rejects.toMatchObject({ code: 'invalid_input', field: '/status' });
    await expect(records(owner, { source: 'tags', kind: 'x' })).rejects.toMatchObject({ code: 'invalid_input', field: '/kind' });
    expect((await records(owner, { source: 'tag_dimensions', status: 'whatever' })).rows.map((r: any) => r.key)).toEqual(['cost_center', 'proyecto']);
    expect((await records(owner, { source: 'tag_dimensions', search: 'proy' })).rows.map((r: any) => r.key)).toEqual(['proyecto']);

    // Another workspace sees none of it.
    const stranger = testPrincipal();
    expect((await records(stranger, { source: 'tags' })).rows).toEqual([]);
    expect((await records(stranger, { source: 'tag_dimensions' })).rows.map((r: any) => r.key)).toEqual(['cost_center']);
    expect(await sg.call('dimensions.archive_tag', { dimension: 'cost_center', key: 'ventas' }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
  });
});

describe('profitability by dimension: tags from invoices, bills and manual entries add up to the result', () => {
  let owner: Principal;
  beforeAll(async () => {
    owner = await configuredWorkspace(sg);
    await call(owner, 'dimensions.create', { key: 'sucursal', name: 'Sucursal' });
    for (const [dimension, key, name] of [['cost_center', 'ventas', 'Ventas'], ['cost_center', 'proyectos', 'Proyectos'], ['cost_center', 'admin', 'Administración'], ['sucursal', 'bogota', 'Bogotá']]) {
      await call(owner, 'dimensions.create_tag', { dimension, key, name });
    }
    // Invoice 2026-10-05: A 10,000,000 {ventas, bogota}; B 4,000,000 {proyectos}; C 1,000,000 untagged; VAT 19 %.
    const inv = await draft(sg, owner, {
      issue_date: '2026-10-05', due_date: '2026-11-04', lines: [
        { description: 'Licencias', quantity: 1, unit_price: 10000000, tax_rate_ppm: 190000, tags: { cost_center: 'ventas', sucursal: 'bogota' } },
        { description: 'Implantación', quantity: 1, unit_price: 4000000, tax_rate_ppm: 190000, tags: { cost_center: 'proyectos' } },
        { description: 'Soporte', quantity: 1, unit_price: 1000000, tax_rate_ppm: 190000 },
      ],
    });
    expect(inv.lines[0].tags).toEqual({ cost_center: 'ventas', sucursal: 'bogota' });
    await call(owner, 'invoices.post', { id: inv.id });
    // Bill 2026-10-10: 5135 2,000,000 {ventas}; 5120 1,500,000 untagged; no VAT.
    const v = await vendor(owner);
    await postedBill(sg, owner, v, {
      issue_date: '2026-10-10', due_date: '2026-11-10', lines: [
        { description: 'Publicidad', account: '5135', quantity: 1, unit_price: 2000000, tags: { cost_center: 'ventas' } },
        { description: 'Arriendo', account: '5120', quantity: 1, unit_price: 1500000 },
      ],
    });
    // Manual 2026-10-20: Dr 5195 500,000 {proyectos}; 2026-10-25: Dr 5195 300,000 {admin}; both Cr 111005.
    await manual(owner, '2026-10-20', 'Viáticos proyecto', [{ account: '5195', debit: 500000, tags: { cost_center: 'proyectos' } }, { account: '111005', credit: 500000 }]);
    await manual(owner, '2026-10-25', 'Papelería', [{ account: '5195', debit: 300000, tags: { cost_center: 'admin' } }, { account: '111005', credit: 300000 }]);
  });

  it('the invoice\'s and the bill\'s journal entries carry the lines\' tags', async () => {
    const entries = (await records(owner, { source: 'journal_entries', limit: 10 })).rows;
    const inv = entries.find((e: any) => e.source.kind === 'invoice');
    expect(inv.lines.filter((l: any) => l.account === '413595')).toEqual([
      { account: '413595', name: expect.any(String), debit: 0, credit: 10000000, party_id: null, tags: { cost_center: 'ventas', sucursal: 'bogota' } },
      { account: '413595', name: expect.any(String), debit: 0, credit: 4000000, party_id: null, tags: { cost_center: 'proyectos' } },
      { account: '413595', name: expect.any(String), debit: 0, credit: 1000000, party_id: null },
    ]);
    const bill = entries.find((e: any) => e.source.kind === 'bill');
    expect(bill.lines.filter((l: any) => l.account.startsWith('51'))).toEqual([
      { account: '5135', name: 'Servicios', debit: 2000000, credit: 0, party_id: null, tags: { cost_center: 'ventas' } },
      { account: '5120', name: 'Arrendamientos', debit: 1500000, credit: 0, party_id: null },
    ]);
  });

  it('by cost_center: per-tag figures as by hand, the untagged row, Σ rows = the income statement\'s result', async () => {
    // By hand, October 2026:
    //   income  ventas 10,000,000 · proyectos 4,000,000 · untagged 1,000,000            = 15,000,000
    //   costs   ventas  2,000,000 · proyectos   500,000 · admin 300,000 · untagged 1,500,000 = 4,300,000
    //   result  ventas  8,000,000 · proyectos 3,500,000 · admin −300,000 · untagged −500,000 = 10,700,000
    const p = await metric(owner, { metric: 'profitability', from: '2026-10-01', to: '2026-10-31', interval: 'month', target: 12000000 });
    expect(p.summary).toEqual({ value: 10700000, target: 12000000 });
    expect(p.rows.map((r: any) => [r.kind, r.tag, r.name, r.income, r.costs, r.value])).toEqual([
      ['tag', 'ventas', 'Ventas', 10000000, 2000000, 8000000],
      ['tag', 'proyectos', 'Proyectos', 4000000, 500000, 3500000],
      ['tag', 'admin', 'Administración', 0, 300000, -300000],
      ['untagged', null, 'Sin etiqueta', 1000000, 1500000, -500000],
    ]);
    expect(p.rows.reduce((s: number, r: any) => s + r.value, 0)).toBe(10700000);
    const is = await metric(owner, { metric: 'income_statement', from: '2026-10-01', to: '2026-10-31', interval: 'month' });
    expect(is.summary.value).toBe(10700000);
    expect(p.series).toEqual([{ period: '2026-10-01', period_end: '2026-10-31', value: 10700000 }]);
    // limit 2: the two best tags, the rest in one row, the untagged row; still adds up.
    const top = await metric(owner, { metric: 'profitability', from: '2026-10-01', to: '2026-10-31', limit: 2 });
    expect(top.rows.map((r: any) => [r.kind, r.tag, r.value])).toEqual([['tag', 'ventas', 8000000], ['tag', 'proyectos', 3500000], ['other', null, -300000], ['untagged', null, -500000]]);
    // By sucursal: bogota 10,000,000 income, no costs; untagged 15,000,000 − 10,000,000 = 5,000,000 income, 4,300,000 costs.
    const bySucursal = await metric(owner, { metric: 'profitability', dimension_key: 'sucursal', from: '2026-10-01', to: '2026-10-31' });
    expect(bySucursal.rows.map((r: any) => [r.tag, r.income, r.costs, r.value])).toEqual([['bogota', 10000000, 0, 10000000], [null, 5000000, 4300000, 700000]]);
    // compare previous_period (September: nothing) fills previous = 0 on each row and the summary.
    const cmp = await metric(owner, { metric: 'profitability', from: '2026-10-01', to: '2026-10-31', compare: 'previous_period' });
    expect(cmp.summary).toMatchObject({ value: 10700000, previous: 0 });
    expect(cmp.rows.every((r: any) => r.previous === 0)).toBe(true);
    expect(await metricError(owner, { metric: 'profitability', dimension_key: 'region' })).toEqual({ code: 'invalid_input', field: '/dimension_key' });
    // Sealed: another workspace's profitability is empty.
    const other = await metric(testPrincipal(), { metric: 'profitability', from: '2026-10-01', to: '2026-10-31' });
    expect(other.rows).toEqual([{ dimension: 'cost_center', kind: 'untagged', tag: null, name: 'Sin etiqueta', income: 0, costs: 0, value: 0 }]);
  });

  it('a reversal carries the tags back: the reversed tag nets to zero and leaves the rows', async () => {
    const admin = (await records(owner, { source: 'journal_entries', search: 'papelería' })).rows[0];
    await call(owner, 'journal.reverse', { id: admin.source.id });
    const p = await metric(owner, { metric: 'profitability', from: '2026-10-01', to: '2026-10-31' });
    expect(p.rows.map((r: any) => [r.tag, r.value])).toEqual([['ventas', 8000000], ['proyectos', 3500000], [null, -500000]]);
    expect(p.summary.value).toBe(11000000);
  });
});

describe('cashflow: direct method from the counter-accounts of cash movements, tied to the balance sheet', () => {
  let owner: Principal;
  beforeAll(async () => {
    owner = await configuredWorkspace(sg);
    // September: capital Dr 111005 50,000,000 / Cr 3105 (financing +50,000,000).
    await manual(owner, '2026-09-01', 'Aporte de capital', [{ account: '111005', debit: 50000000 }, { account: '3105', credit: 50000000 }]);
    // October:
    // 10/05 invoice 2 × 15,000,000 + 19 % VAT = 35,700,000 (no cash).
    const inv = await draft(sg, owner, { issue_date: '2026-10-05', due_date: '2026-11-04' });
    await call(owner, 'invoices.post', { id: inv.id });
    // 10/12 computer bought: Dr 1528 8,000,000 / Cr 111005 (investing −8,000,000).
    await manual(owner, '2026-10-12', 'Compra de equipos', [{ account: '1528', debit: 8000000 }, { account: '111005', credit: 8000000 }]);
    // 10/18 bank loan: Dr 111005 30,000,000 / Cr 2105 (financing +30,000,000).
    await manual(owner, '2026-10-18', 'Préstamo bancario', [{ account: '111005', debit: 30000000 }, { account: '2105', credit: 30000000 }]);
    // 10/20 customer pays 20,000,000: Dr 111005 / Cr 130505 (operating +20,000,000).
    await call(owner, 'payments.register', { customer_id: inv.customer_id, amount: 20000000, currency: 'COP', date: '2026-10-20', invoices: [{ invoice_id: inv.id }] });
    // 10/22 VAT paid: Dr 240805 5,000,000 / Cr 111005 (operating −5,000,000).
    await manual(owner, '2026-10-22', 'Pago IVA', [{ account: '240805', debit: 5000000 }, { account: '111005', credit: 5000000 }]);
    // 10/25 transfer bank → savings: Dr 112005 1,000,000 / Cr 111005 (cash to cash: no flow).
    await manual(owner, '2026-10-25', 'Traslado a ahorros', [{ account: '112005', debit: 1000000 }, { account: '111005', credit: 1000000 }]);
    // 10/28 petty cash expense: Dr 5195 200,000 / Cr 110505 (operating −200,000).
    await manual(owner, '2026-10-28', 'Caja menor', [{ account: '5195', debit: 200000 }, { account: '110505', credit: 200000 }]);
    // 10/29 no cash at all: Dr 5195 100,000 / Cr 220505 (an accrual: no cash flow).
    await manual(owner, '2026-10-29', 'Causación', [{ account: '5195', debit: 100000 }, { account: '220505', credit: 100000 }]);
  });

  it('October by hand: operating 14,800,000, investing −8,000,000, financing 30,000,000; net 36,800,000 = closing − opening cash', async () => {
    // operating: 130505 +20,000,000; 240805 −5,000,000; 5195 −200,000 = 14,800,000
    // investing: 1528 −8,000,000; financing: 2105 +30,000,000
    // net = 14,800,000 − 8,000,000 + 30,000,000 = 36,800,000; opening cash (30 Sep) 50,000,000; closing 86,800,000.
    const cf = await metric(owner, { metric: 'cashflow', from: '2026-10-01', to: '2026-10-31', interval: 'month', compare: 'previous_period' });
    expect(cf.unit).toBe('money');
    const rows = cf.rows.map((r: any) => [r.kind, r.section, r.account, r.value, r.previous]);
    expect(rows).toEqual([
      ['account', 'operating', '130505', 20000000, 0],
      ['account', 'operating', '240805', -5000000, 0],
      ['account', 'operating', '5195', -200000, 0],
      ['total', 'operating', null, 14800000, 0],
      ['account', 'investing', '1528', -8000000, 0],
      ['total', 'investing', null, -8000000, 0],
      ['account', 'financing', '2105', 30000000, 0],
      ['account', 'financing', '3105', 0, 50000000],
      ['total', 'financing', null, 30000000, 50000000],
      ['total', 'net_change', null, 36800000, 50000000],
      ['balance', 'opening_cash', null, 50000000, undefined],
      ['balance', 'closing_cash', null, 86800000, undefined],
    ]);
    // compare: September computed separately is the previous figure.
    const sep = await metric(owner, { metric: 'cashflow', from: '2026-09-01', to: '2026-09-30', interval: 'month' });
    expect(cf.summary).toEqual({ value: 36800000, previous: sep.summary.value, change_bps: -2640 });
    expect(sep.summary.value).toBe(50000000);
    // Tied to the balance sheet: Σ 11xx at 31 October − at 30 September = the net change.
    const cashAt = async (asOf: string) => (await metric(owner, { metric: 'balance_sheet', as_of: asOf })).rows
      .filter((r: any) => r.kind === 'account' && r.account.startsWith('11')).reduce((s: number, r: any) => s + r.balance, 0);
    expect(await cashAt('2026-10-31') - await cashAt('2026-09-30')).toBe(36800000);
    // The series by month over both months, and the window total.
    const both = await metric(owner, { metric: 'cashflow', from: '2026-09-01', to: '2026-10-31', interval: 'month' });
    expect(both.series.map((p: any) => p.value)).toEqual([50000000, 36800000]);
    expect(both.summary.value).toBe(86800000);
    // previous_year (October 2025: nothing) and a sealed workspace: zero flows.
    expect((await metric(owner, { metric: 'cashflow', from: '2026-10-01', to: '2026-10-31', compare: 'previous_year' })).summary).toEqual({ value: 36800000, previous: 0 });
    expect((await metric(testPrincipal(), { metric: 'cashflow', from: '2026-10-01', to: '2026-10-31' })).summary).toEqual({ value: 0 });
    expect(await metricError(owner, { metric: 'cashflow', from: '2026-10-31', to: '2026-10-01' })).toMatchObject({ code: 'invalid_input' });
  });
});

describe('accounts.print_statement: Spanish, es-CO numbers, printed by Chromium, read back by pdftotext', () => {
  it('prints the trial balance, balance sheet and income statement of a hand-computed month', async () => {
    const owner = await configuredWorkspace(sg);
    // 2026-10-01 capital Dr 111005 12,000,000.00 / Cr 3105; 2026-10-15 rent Dr 5120 1,234,567.89 / Cr 111005.
    await manual(owner, '2026-10-01', 'Aporte de capital', [{ account: '111005', debit: 1200000000 }, { account: '3105', credit: 1200000000 }]);
    await manual(owner, '2026-10-15', 'Arriendo', [{ account: '5120', debit: 123456789 }, { account: '111005', credit: 123456789 }]);
    const text = async (input: Record<string, unknown>) => {
      const r = await call(owner, 'accounts.print_statement', input);
      const bytes = Buffer.from(r.content_base64, 'base64');
      expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
      expect(r.bytes).toBe(bytes.length);
      expect(r.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      const file = join(pdfDir, r.filename);
      writeFileSync(file, bytes);
      return (await run('pdftotext', ['-layout', file, '-'])).stdout.replace(/[ \t]+/g, ' ');
    };
    // Trial balance at 31 October, by hand: 111005 Dr 12.000.000 Cr 1.234.567,89 balance 10.765.432,11;
    // 3105 Cr 12.000.000 balance -12.000.000; 5120 Dr 1.234.567,89; sums 13.234.567,89 each side, difference 0.
    const tb = await text({ metric: 'trial_balance', as_of: '2026-10-31' });
    expect(tb).toContain('Cuadra Demo SAS');
    expect(tb).toContain('NIT 900373115-3');
    expect(tb).toContain('Balance de prueba');
    expect(tb).toContain('Al 2026-10-31');
    expect(tb).toMatch(/111005 .*12\.000\.000 1\.234\.567,89 10\.765\.432,11/);
    expect(tb).toMatch(/3105 .*0 12\.000\.000 -12\.000\.000/);
    expect(tb).toMatch(/Sumas iguales 13\.234\.567,89 13\.234\.567,89 0/);
    // Balance sheet: assets 10.765.432,11 = equity 12.000.000 + result -1.234.567,89.
    const bs = await text({ metric: 'balance_sheet', as_of: '2026-10-31' });
    expect(bs).toContain('Estado de situación financiera');
    expect(bs).toMatch(/Total activo 10\.765\.432,11/);
    expect(bs).toMatch(/Total patrimonio 10\.765\.432,11/);
    // Income statement for October against September (nothing): expenses 1.234.567,89, result -1.234.567,89.
    const is = await text({ metric: 'income_statement', from: '2026-10-01', to: '2026-10-31', compare: 'previous_period' });
    expect(is).toContain('Estado de resultados');
    expect(is).toContain('Del 2026-10-01 al 2026-10-31');
    expect(is).toMatch(/Gastos 1\.234\.567,89 0/);
    expect(is).toMatch(/Resultado del periodo -1\.234\.567,89 0/);
    // The HTML it prints from, and the refusals.
    const html = await call(owner, 'accounts.print_statement', { metric: 'trial_balance', as_of: '2026-10-31', format: 'html' });
    expect(html.content_type).toBe('text/html; charset=utf-8');
    expect(Buffer.from(html.content_base64, 'base64').toString()).toContain('<html lang="es-CO">');
    // Cash flow for October: financing 12.000.000 (3105), operating -1.234.567,89 (5120); cash 0 → 10.765.432,11.
    const cf = await text({ metric: 'cashflow', from: '2026-10-01', to: '2026-10-31' });
    expect(cf).toContain('Estado de flujos de efectivo (método directo)');
    expect(cf).toMatch(/Flujo de efectivo de actividades de operación -1\.234\.567,89/);
    expect(cf).toMatch(/Flujo de efectivo de actividades de financiación 12\.000\.000/);
    expect(cf).toMatch(/Aumento \(disminución\) neto del efectivo 10\.765\.432,11/);
    expect(cf).toMatch(/Efectivo al 2026-10-31 10\.765\.432,11/);
    // The same cash flow exported to XLSX, read back with exceljs: amounts in pesos with two decimals.
    const xlsx = await call(owner, 'accounts.export_statement', { metric: 'cashflow', from: '2026-10-01', to: '2026-10-31' });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(Buffer.from(xlsx.base64, 'base64') as never);
    const sheet = wb.getWorksheet('Flujos de efectivo')!;
    const cells: Record<string, unknown> = {};
    sheet.eachRow((row) => { cells[String(row.getCell(3).value)] = row.getCell(4).value; });
    expect(cells['Aumento (disminución) neto del efectivo']).toBe(10765432.11);
    expect(cells['Flujo de efectivo de actividades de financiación']).toBe(12000000);
    expect(cells['Flujo de efectivo de actividades de operación']).toBe(-1234567.89);
    expect(await sg.call('accounts.print_statement', { metric: 'ar_aging' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/metric' });
    expect(await sg.call('accounts.print_statement', { metric: 'income_statement', from: '2026-10-31', to: '2026-10-01' }, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
  });
});

describe('backfill: journal entries written before the statement rollups are counted once', () => {
  it('adds every counter to an entry of before the ledger rollups and the new ones to a version-1 entry; idempotent', async () => {
    const owner = testPrincipal();
    await call(owner, 'dimensions.create_tag', { dimension: 'cost_center', key: 'ventas', name: 'Ventas' });
    const coll = sg.db.collection('journal_entries');
    const base = { workspace: owner.workspace, currency: 'COP', created_at: new Date('2026-10-03T12:00:00Z') };
    // Version 0 (before the ledger rollups): a cash sale Dr 111005 1,000,000 / Cr 413595 1,000,000 {ventas}; no counters at all.
    await coll.insertOne({ _id: `je_legacy0_${owner.workspace}`, ...base, date: '2026-10-03', memo: 'Venta de contado (antigua)', source: { kind: 'manual', id: 'mje_legacy0' },
      lines: [{ account: '111005', name: 'Bancos', debit: 1000000, credit: 0, party_id: null }, { account: '413595', name: 'Ingresos', debit: 0, credit: 1000000, party_id: null, tags: { cost_center: 'ventas' } }] } as never);
    // Version 1: Dr 5195 300,000 {ventas} / Cr 111005 300,000, counted under d/c/n only (written now, then its version-2 counters taken back out).
    const v1 = await manual(owner, '2026-10-08', 'Gasto (versión 1)', [{ account: '5195', debit: 300000, tags: { cost_center: 'ventas' } }, { account: '111005', credit: 300000 }]);
    const v1Entry = await journalEntries(sg.db).findById(v1.journal_entry_id).lean();
    const undo = rollupIntent(ledgerDeltas(v1Entry!, 1).map((d) => ({ ...d, inc: Object.fromEntries(Object.entries(d.inc).map(([k, v]) => [k, -v])) })), new Date());
    await applyRollupIntent(sg.db, journalEntries(sg.db), v1Entry!._id, owner.workspace, undo);
    await coll.updateOne({ _id: v1Entry!._id } as never, { $unset: { rolled: '' } });

    const tb = async () => Object.fromEntries((await metric(owner, { metric: 'trial_balance', as_of: '2026-10-31' })).rows.map((r: any) => [r.account, [r.debit, r.credit]]));
    const ventas = async () => (await metric(owner, { metric: 'profitability', from: '2026-10-01', to: '2026-10-31' })).rows.find((r: any) => r.tag === 'ventas')?.value;
    const cash = async () => (await metric(owner, { metric: 'cashflow', from: '2026-10-01', to: '2026-10-31' })).summary.value;
    // Before: only the version-1 entry's account totals; no tag or cash counters.
    expect(await tb()).toEqual({ 111005: [0, 300000], 5195: [300000, 0] });
    expect(await ventas()).toBeUndefined();
    expect(await cash()).toBe(0);

    // As at a start on a database of before (the done-marker absent).
    await sg.db.collection('migrations').deleteOne({ _id: BACKFILL_MARKER } as never);
    expect(await backfillLedgerRollups(sg.db)).toBe(2);
    // By hand: 111005 Dr 1,000,000 Cr 300,000; 413595 Cr 1,000,000; 5195 Dr 300,000.
    expect(await tb()).toEqual({ 111005: [1000000, 300000], 413595: [0, 1000000], 5195: [300000, 0] });
    // ventas: 1,000,000 − 300,000 = 700,000; cash: +1,000,000 (413595) − 300,000 (5195) = 700,000.
    expect(await ventas()).toBe(700000);
    expect(await cash()).toBe(700000);
    expect((await call(owner, 'accounts.get', { code: '413595' })).lines_posted).toBe(1);
    // Again: the marker stops it; without the marker, every entry is already at the version: nothing counted twice.
    expect(await backfillLedgerRollups(sg.db)).toBe(0);
    await sg.db.collection('migrations').deleteOne({ _id: BACKFILL_MARKER } as never);
    expect(await backfillLedgerRollups(sg.db)).toBe(0);
    expect(await tb()).toEqual({ 111005: [1000000, 300000], 413595: [0, 1000000], 5195: [300000, 0] });
    expect(await ventas()).toBe(700000);
    expect(await cash()).toBe(700000);
  });
});
