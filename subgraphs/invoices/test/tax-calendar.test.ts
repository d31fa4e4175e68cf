import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { dueDate, nonBusinessDays, nthBusinessDay } from '../src/modules/tax/calendar.ts';
import { configure } from '../src/modules/tax/tools/configure.ts';
import { configuredWorkspace, startInvoices } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const lane = async (owner: Principal, window: Record<string, unknown>) => {
  const r = await sg.graphql('query($l: String!, $w: JSON!) { invoicesAgenda(lane: $l, window: $w) }', { l: 'tax', w: { limit: 50, overdue: false, ...window } }, owner);
  if (r.body.errors?.length) throw new Error(r.body.errors[0].message);
  return r.body.data.invoicesAgenda as any[];
};
const brief = (entries: any[]) => entries.map((e) => [e.date, e.ref.obligation, e.ref.period]);

describe('the calendar data: holidays, business days, the rule of Decreto 2229 de 2023', () => {
  it('counts no term on Colombia\'s holidays (Ley 51 de 1983, Ley 2578 de 2026) nor on DIAN\'s civic day (Decreto 500 de 2024)', () => {
    // By hand for 2026: Easter is 5 April; Holy Thursday 2 April, Good Friday 3 April; Ascension Monday 18 May
    // (+43), Corpus Christi 8 June (+64), Sacred Heart 15 June (+71); Reyes (Tue 6 Jan) → Mon 12 Jan; San José
    // (Thu 19 Mar) → Mon 23 Mar; San Pedro Mon 29 Jun; Chiquinquirá (Thu 9 Jul, Ley 2578 de 2026) → Mon 13 Jul;
    // Asunción (Sat 15 Aug) → Mon 17 Aug; Raza Mon 12 Oct; Todos los Santos (Sun 1 Nov) → Mon 2 Nov; Cartagena
    // (Wed 11 Nov) → Mon 16 Nov. The civic day is April's third Friday: 3, 10, 17 → 17 April.
    expect(nonBusinessDays(2026)).toEqual([
      '2026-01-01', '2026-01-12', '2026-03-23', '2026-04-02', '2026-04-03', '2026-04-17', '2026-05-01', '2026-05-18', '2026-06-08',
      '2026-06-15', '2026-06-29', '2026-07-13', '2026-07-20', '2026-08-07', '2026-08-17', '2026-10-12', '2026-11-02', '2026-11-16',
      '2026-12-08', '2026-12-25',
    ]);
    // 2027: Easter 28 March (Holy Thursday 25, Good Friday 26 March); Chiquinquirá (Fri 9 Jul) → Mon 12 Jul; April's
    // Fridays 2, 9, 16 → the civic day is 16 April.
    const y2027 = nonBusinessDays(2027);
    for (const d of ['2027-03-25', '2027-03-26', '2027-04-16', '2027-07-12']) expect(y2027, d).toContain(d);
    expect(y2027).not.toContain('2027-07-09');
  });

  it('reproduces the dates DIAN published for 2026 (first and last NIT digit), moved by the days that stopped being business days', () => {
    const range = (y: number, m: number) => [dueDate({ dueYear: y, dueMonth: m }, '1'), dueDate({ dueYear: y, dueMonth: m }, '0')];
    expect(range(2026, 3)).toEqual(['2026-03-10', '2026-03-24']); // VAT bimonthly Jan–Feb
    expect(range(2026, 5)).toEqual(['2026-05-12', '2026-05-26']); // legal persons' income tax, 1st instalment
    // 2nd instalment: DIAN published 9–23 July (December 2025); 13 July became a holiday (Ley 2578 de 2026), so the
    // 16th business day is 1,2,3,6,7,8,9,10,14,15,16,17,21,22,23,24 → 24 July (20 July a holiday too).
    expect(range(2026, 7)).toEqual(['2026-07-09', '2026-07-24']);
    expect(range(2026, 2)).toEqual(['2026-02-10', '2026-02-23']); // large taxpayers, 1st
    // Large taxpayers, 2nd and the return: published 13–24 April; DIAN moved every deadline from 17 April (the civic
    // day) one business day on (communiqué of 3 March 2026): 1,6,7,8,9,10,13,14,15,16,20,21,22,23,24,27 → 27 April.
    expect(range(2026, 4)).toEqual(['2026-04-13', '2026-04-27']);
    expect(range(2026, 6)).toEqual(['2026-06-10', '2026-06-24']); // large taxpayers, 3rd
    expect(range(2025, 12)).toEqual(['2025-12-10', '2025-12-23']); // withholding of November 2025
    expect(nthBusinessDay(2026, 3, 11)).toBe('2026-03-16'); // digit 5: "Marzo 16: último dígito 5"
  });
});

describe('the tax lane', () => {
  it('lists a NIT ending in 5 (900373115-3, e-invoicing issuer): four-monthly VAT without last year\'s income, dates checked by hand', async () => {
    const owner = await configuredWorkspace(sg);
    // Digit 5 → the 11th business day. November 2026 (2 and 16 are holidays): 3,4,5,6,9,10,11,12,13,17,18 → 18 Nov.
    // December 2026 (8 is a holiday): 1,2,3,4,7,9,10,11,14,15,16 → 16 Dec. January 2027 (1 and 11 are holidays):
    // 4,5,6,7,8,12,13,14,15,18,19 → 19 Jan.
    const entries = await lane(owner, { from: '2026-11-01', to: '2027-01-31' });
    expect(brief(entries)).toEqual([
      ['2026-11-18', 'withholding', '2026-10/2026-10'],
      ['2026-12-16', 'withholding', '2026-11/2026-11'],
      ['2027-01-19', 'vat_four_monthly', '2026-09/2026-12'],
      ['2027-01-19', 'withholding', '2026-12/2026-12'],
    ]);
    expect(entries[0]).toMatchObject({
      kind: 'tax', source: 'tax', title: 'Retención en la fuente octubre 2026 — declarar y pagar (formulario 350)',
      ref: { form: '350', nit_last_digit: '5' }, legal_source: 'Decreto 2229 de 2023 (Decreto 1625 de 2016, Libro 1, Parte 6, Título 1, Capítulo 13, Sección 2), art. 1.6.1.13.2.33',
      verified: true,
    });
    // 2027's dates are computed from the rule, not yet published: said so.
    expect(entries[2]).toMatchObject({ verified: false, article_verified: false, ref: { form: '300', basis: 'income 2025 < 92,000 UVT' } });
    // The window's limit applies.
    expect(await lane(owner, { from: '2026-11-01', to: '2027-01-31', limit: 2 })).toHaveLength(2);
    // Legal persons' income tax 2025, digit 5: May 2026 (1 and 18 holidays): 4,5,6,7,8,11,12,13,14,15,19 → 19 May;
    // July 2026 (13 and 20 holidays): 1,2,3,6,7,8,9,10,14,15,16 → 16 July.
    const income = (await lane(owner, { from: '2026-04-01', to: '2026-07-31' })).filter((e) => e.ref.obligation.startsWith('income'));
    expect(brief(income)).toEqual([['2026-05-19', 'income_tax_legal_person', '2025-01/2025-12'], ['2026-07-16', 'income_tax_legal_person', '2025-01/2025-12']]);
    expect(income[0].title).toBe('Renta 2025 personas jurídicas — declarar y pagar la primera cuota (formulario 110)');
  });

  it('declares VAT bimonthly once last year\'s income reached 92,000 UVT; the profile changes the obligations', async () => {
    const owner = await configuredWorkspace(sg);
    // 2025 income 4,600,000,000.00 COP ≥ 92,000 × 49,799 = 4,581,508,000 COP → the periods of 2026 are bimonthly;
    // 2024 had none, so September–December 2025 is four-monthly (due January 2026).
    const d = await sg.call('journal.create', { date: '2025-06-30', memo: 'Ventas 2025', lines: [{ account: '111005', debit: 460_000_000_000 }, { account: '413595', credit: 460_000_000_000 }] }, owner);
    expect((await sg.call('journal.post', { id: d.output.entry.id }, owner)).ok).toBe(true);
    // Digit 5: January 2026 (1 and 12 holidays) 2,5,6,7,8,9,13,14,15,16,19 → 19 Jan; February 2,3,4,5,6,9,10,11,12,13,16 → 16 Feb; March 16.
    const q1 = await lane(owner, { from: '2026-01-01', to: '2026-03-31' });
    expect(brief(q1)).toEqual([
      ['2026-01-19', 'vat_four_monthly', '2025-09/2025-12'],
      ['2026-01-19', 'withholding', '2025-12/2025-12'],
      ['2026-02-16', 'withholding', '2026-01/2026-01'],
      ['2026-03-16', 'vat_bimonthly', '2026-01/2026-02'],
      ['2026-03-16', 'withholding', '2026-02/2026-02'],
    ]);
    expect(q1[3].ref.basis).toBe('income 2025 ≥ 92,000 UVT');

    // A large taxpayer with NIT 800197268-4 (digit 8 → the 14th business day): income tax in three instalments —
    // February 2026: …,13,16,17,18,19 → 19 Feb; April (2 and 3 holidays, 17 the civic day): 1,6,7,8,9,10,13,14,15,16,20,21,22,23 → 23 Apr;
    // June (8 and 15 holidays): 1,2,3,4,5,9,10,11,12,16,17,18,19,22 → 22 Jun. No withholding when it is not an agent.
    const r = await sg.call('tax.configure', { nit: '800197268-4', large_taxpayer: true, withholding_agent: false }, owner);
    expect(r.ok).toBe(true);
    checkOutput('tax.configure', configure.output, r.output);
    expect(r.output.profile).toMatchObject({ nit: '800197268', check_digit: 4, large_taxpayer: true, vat: 'auto', withholding_agent: false, income_tax: true });
    const big = await lane(owner, { from: '2026-02-01', to: '2026-06-30' });
    expect(brief(big)).toEqual([
      ['2026-02-19', 'income_tax_large_taxpayer', '2025-01/2025-12'],
      ['2026-03-19', 'vat_bimonthly', '2026-01/2026-02'], // March (23 a holiday): 2,3,4,5,6,9,10,11,12,13,16,17,18,19 → 19 Mar
      ['2026-04-23', 'income_tax_large_taxpayer', '2025-01/2025-12'],
      ['2026-05-22', 'vat_bimonthly', '2026-03/2026-04'], // May (1 and 18 holidays): 4,5,6,7,8,11,12,13,14,15,19,20,21,22 → 22 May
      ['2026-06-22', 'income_tax_large_taxpayer', '2025-01/2025-12'],
    ]);
    expect(big[1].ref.basis).toBe('large taxpayer');
    // Not responsible for VAT, no income tax, no withholding: no deadlines.
    await sg.call('tax.configure', { vat: 'not_responsible', income_tax: false, large_taxpayer: false }, owner);
    expect(await lane(owner, { from: '2026-02-01', to: '2026-06-30' })).toEqual([]);
  });

  it('refuses a bad profile with the field, and is sealed to the workspace', async () => {
    const owner = await configuredWorkspace(sg);
    expect(await sg.call('tax.configure', { nit: '900373115-4' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/nit' });
    expect(await sg.call('tax.configure', { large_taxpayer: true, vat: 'four_monthly' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/vat' });
    expect(await sg.call('tax.configure', { vat: 'monthly' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/vat' });
    expect(await sg.call('tax.configure', {}, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
    // Another workspace without a NIT has no deadlines; years outside the calendar have none either.
    expect(await lane(testPrincipal(), { from: '2026-11-01', to: '2027-01-31' })).toEqual([]);
    expect(await lane(owner, { from: '2028-01-01', to: '2028-12-31' })).toEqual([]);
  });
});
