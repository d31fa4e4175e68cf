import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { makeP12, xmlsecVerify } from '@cuadra/shared/testing/signatures';
import { createServer, name } from '../../src/server.ts';
import { finalSettlement, type SettlementInput } from '../../src/modules/payroll/settlement.ts';
import { hirer, pdfText, xmllint } from '../support.ts';

/**
 * The final settlement of a dismissal (issue 30 items 8 and 9): the indemnity of CST art. 64 as
 * modified by Ley 789 de 2002 art. 28, worked out by hand; then the settlement carried by the run
 * of the last day into the books (provisions released, differences and indemnity booked, the
 * amounts owed credited), on the payslip, and in the Nómina Individual (XSD, xmlsec1, sandbox).
 *
 * Amounts are centavos: 200_000_000 is COP 2.000.000,00. A day of salary is a 30th of the monthly
 * salary; years of service are commercial (360 days, 30 a month, day 31 weighing nothing).
 */

const XSD = fileURLToPath(new URL('../../src/modules/payroll/xsd/NominaIndividualElectronicaXSD.xsd', import.meta.url));
const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false, parseTagValue: false }).parse(xml).NominaIndividual;

const indemnityOf = (input: SettlementInput) => finalSettlement(input).lines.find((l) => l.concept === 'indemnity') ?? null;

describe('the indemnity of CST art. 64 (Ley 789 de 2002 art. 28), by hand', () => {
  it('the audit\'s dismissal: indefinite, COP 2.000.000, hired 2025-03-01, dismissed 2026-11-15', () => {
    const s = finalSettlement({
      hire_date: '2025-03-01', termination_date: '2026-11-15', salaries: [{ from: '2025-03-01', amount: 200_000_000 }],
      reason: 'without_just_cause', contract_type: 'indefinite',
    });
    // Service: 2025-03-01 – 2026-11-15 = 10 months of 2025 (300) + 10 of 2026 (300) + 15 = 615 commercial days.
    // 2.000.000 < 10 SMMLV (17.509.050): lit. a. Days = 30 for the first year + 20 × (615 − 360)/360 = 30 + 20 × 255/360 = 44,17.
    // Amount = 200_000_000 / 30 × (30 × 360 + 20 × 255)/360 = 200_000_000 × 15_900/10_800 = 294_444_444.44 → 294_444_444 (COP 2.944.444,44).
    expect(s.lines.find((l) => l.concept === 'indemnity')).toEqual({
      concept: 'indemnity', amount: 294_444_444, base: 200_000_000, days: 615,
      note: 'CST art. 64 lit. a (menos de 10 SMMLV): 30 días por el primer año + 20 × 255/360 por el tiempo siguiente = 44,17 días de salario',
    });
    // The rest of the settlement (the audit's COP 4.726.337,69):
    // base = 200_000_000 + transport 24_909_500 = 224_909_500 (2.000.000 ≤ 2 SMMLV);
    // severance 1 Jan – 15 Nov 2026 = 315 days: 224_909_500 × 315/360 = 196_795_812.5 → 196_795_813;
    // interest = 196_795_812.5 × 12 % × 315/360 = 20_663_560.31 → 20_663_560;
    // service bonus 1 Jul – 15 Nov = 135 days: 224_909_500 × 135/360 = 84_341_062.5 → 84_341_063;
    // vacations: 200_000_000 × 615/720 = 170_833_333.33 → 170_833_333.
    // 196_795_813 + 20_663_560 + 84_341_063 + 170_833_333 = 472_633_769; with the indemnity 767_078_213.
    expect(s.lines.map((l) => [l.concept, l.amount, l.days])).toEqual([
      ['severance', 196_795_813, 315], ['severance_interest', 20_663_560, 315], ['service_bonus', 84_341_063, 135], ['vacations', 170_833_333, 615], ['indemnity', 294_444_444, 615],
    ]);
    expect(s.total).toBe(767_078_213);
  });

  it('a fixed-term dismissal pays the salaries of the rest of the term, never under 15 days', () => {
    const fixed = (termination_date: string) => indemnityOf({
      hire_date: '2026-01-01', termination_date, salaries: [{ from: '2026-01-01', amount: 300_000_000 }],
      reason: 'without_just_cause', contract_type: 'fixed_term', term_end: '2026-12-31',
    });
    // Dismissed 2026-09-15, term to 2026-12-31: left 16–30 Sep (15) + Oct, Nov, Dec (90) = 105 days;
    // 300_000_000 / 30 × 105 = 1_050_000_000 (COP 10.500.000).
    expect(fixed('2026-09-15')).toEqual({ concept: 'indemnity', amount: 1_050_000_000, base: 300_000_000, days: 105, note: 'CST art. 64: salarios de los 105 días que faltaban del plazo (hasta el 2026-12-31)' });
    // Dismissed 2026-12-24: left 25–30 Dec = 6 days (the 31st weighs nothing) < 15: 15 days, 300_000_000 / 30 × 15 = 150_000_000.
    expect(fixed('2026-12-24')).toMatchObject({ amount: 150_000_000, days: 6, note: 'CST art. 64: faltaban 6 días del plazo (hasta el 2026-12-31); mínimo 15 días de salario' });
    // On the term's last day nothing is left: still 15 days.
    expect(fixed('2026-12-31')).toMatchObject({ amount: 150_000_000, days: 0 });
  });

  it('from 10 minimum wages: 20 days for the first year and 15 for each further one', () => {
    // COP 20.000.000 ≥ 10 SMMLV (17.509.050). Hired 2023-02-01, dismissed 2026-04-30: 2023 Feb–Dec 330 + 2024 360
    // + 2025 360 + 2026 Jan–Apr 120 = 1_170 days. Days = 20 + 15 × 810/360 = 20 + 33,75 = 53,75.
    // 2_000_000_000 / 30 × 53.75 = 3_583_333_333.33 → 3_583_333_333 (COP 35.833.333,33).
    const high = indemnityOf({
      hire_date: '2023-02-01', termination_date: '2026-04-30', salaries: [{ from: '2023-02-01', amount: 2_000_000_000 }],
      reason: 'without_just_cause', contract_type: 'indefinite',
    });
    expect(high).toEqual({
      concept: 'indemnity', amount: 3_583_333_333, base: 2_000_000_000, days: 1_170,
      note: 'CST art. 64 lit. b (10 SMMLV o más): 20 días por el primer año + 15 × 810/360 por el tiempo siguiente = 53,75 días de salario',
    });
    // The line is "igual o superior": exactly 10 SMMLV (1_750_905_000) takes 20 days for a first year
    // (1_750_905_000 × 20/30 = 1_167_270_000); a centavo less takes 30 (the salary itself).
    const firstYear = (amount: number) => indemnityOf({ hire_date: '2026-01-01', termination_date: '2026-06-30', salaries: [{ from: '2026-01-01', amount }], reason: 'without_just_cause', contract_type: 'indefinite' })!.amount;
    expect(firstYear(1_750_905_000)).toBe(1_167_270_000);
    expect(firstYear(1_750_904_999)).toBe(1_750_904_999);
  });

  it('ten years of service on 27 Dec 2002 keep the table of Ley 50 de 1990 (45 days + 40 a year)', () => {
    // Hired 1990-01-01: 12 years on 2002-12-27. Dismissed 2026-06-30: 36 years × 360 + 180 = 13_140 days;
    // 45 + 40 × 12_780/360 = 45 + 1_420 = 1_465 days; 300_000_000 / 30 × 1_465 = 14_650_000_000.
    const old = indemnityOf({ hire_date: '1990-01-01', termination_date: '2026-06-30', salaries: [{ from: '1990-01-01', amount: 300_000_000 }], reason: 'without_just_cause', contract_type: 'indefinite' });
    expect(old).toMatchObject({ amount: 14_650_000_000, days: 13_140 });
    expect(old!.note).toContain('Ley 50 de 1990 art. 6 lit. d');
    // Hired 1993-01-01: under ten years then, today's table: 30 + 20 × (12_060 − 360)/360 = 30 + 650 = 680 days.
    const later = indemnityOf({ hire_date: '1993-01-01', termination_date: '2026-06-30', salaries: [{ from: '1993-01-01', amount: 300_000_000 }], reason: 'without_just_cause', contract_type: 'indefinite' });
    expect(later).toMatchObject({ amount: 6_800_000_000, days: 12_060 });
  });

  it('is owed for a dismissal without just cause or the worker leaving for the employer\'s cause, and for nothing else', () => {
    const base = { hire_date: '2026-01-01', termination_date: '2026-06-30', salaries: [{ from: '2026-01-01', amount: 300_000_000 }], contract_type: 'indefinite' as const };
    expect(indemnityOf({ ...base, reason: 'constructive_dismissal' })).toMatchObject({ amount: 300_000_000 });
    for (const reason of ['resignation', 'just_cause', 'mutual_agreement', 'end_of_term', 'other'] as const) expect(indemnityOf({ ...base, reason })).toBeNull();
    // An apprenticeship is not a labour contract (Ley 789 de 2002 art. 30).
    expect(indemnityOf({ ...base, reason: 'without_just_cause', contract_type: 'apprenticeship' })).toBeNull();
  });
});

let payroll: TestSubgraph;
beforeAll(async () => {
  // The e-payroll PIN and certificate are kept sealed: the service gets its key from the environment.
  process.env.CUADRA_SEAL_KEY ??= randomBytes(32).toString('base64');
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

type P = ReturnType<typeof testPrincipal>;
const hire = hirer(() => payroll, { salary: { amount: 300_000_000, currency: 'COP' } });
async function post(owner: P, month: string) {
  const r = await payroll.call('payroll.run', { month }, owner);
  expect(r.ok, JSON.stringify(r)).toBe(true);
  expect((await payroll.call('payroll.approve', { id: r.output.run.id, amount: r.output.run.totals.net }, owner)).ok).toBe(true);
  expect((await payroll.call('payroll.post', { id: r.output.run.id }, owner)).ok).toBe(true);
  return r.output.run.id as string;
}

describe('fixed-term contracts record their term', () => {
  it('needs term_end to hire one (and refuses it on others), takes renewals, and computes the indemnity to it', async () => {
    const owner = testPrincipal();
    const fixed = { contract_type: 'fixed_term', hire_date: '2026-01-01' };
    expect(await payroll.call('employees.create', { name: 'X', document: { type: 'CC', number: '7000000001' }, position: 'X', hire_date: '2026-01-01', salary: { amount: 300_000_000, currency: 'COP' }, contract_type: 'fixed_term', arl_class: 1 }, owner))
      .toMatchObject({ code: 'invalid_input', field: '/term_end' });
    expect(await payroll.call('employees.create', { name: 'X', document: { type: 'CC', number: '7000000002' }, position: 'X', hire_date: '2026-01-01', salary: { amount: 300_000_000, currency: 'COP' }, contract_type: 'indefinite', term_end: '2026-12-31', arl_class: 1 }, owner))
      .toMatchObject({ code: 'invalid_input', field: '/term_end' });
    expect(await payroll.call('employees.create', { name: 'X', document: { type: 'CC', number: '7000000003' }, position: 'X', hire_date: '2026-01-01', salary: { amount: 300_000_000, currency: 'COP' }, contract_type: 'fixed_term', term_end: '2025-12-31', arl_class: 1 }, owner))
      .toMatchObject({ code: 'invalid_input', field: '/term_end' });
    const e = await hire(owner, { ...fixed, term_end: '2026-06-30' });
    expect(e.term_end).toBe('2026-06-30');
    // Renewed to the end of the year.
    expect((await payroll.call('employees.update', { id: e.id, term_end: '2026-12-31' }, owner)).output.employee.term_end).toBe('2026-12-31');
    expect(await payroll.call('employees.update', { id: e.id, contract_type: 'indefinite', term_end: '2027-06-30' }, owner)).toMatchObject({ code: 'invalid_input', field: '/term_end' });
    const r = await payroll.call('employees.terminate', { id: e.id, date: '2026-09-15', reason: 'without_just_cause' }, owner);
    // 105 days left of the term (see the by-hand test above): 300_000_000 / 30 × 105 = 1_050_000_000.
    expect(r.output.employee.termination.settlement.lines.at(-1)).toMatchObject({ concept: 'indemnity', amount: 1_050_000_000, days: 105 });
    // An indefinite contract that becomes fixed-term needs its term; one that stops being fixed-term drops it.
    const other = await hire(owner);
    expect(await payroll.call('employees.update', { id: other.id, contract_type: 'fixed_term' }, owner)).toMatchObject({ code: 'invalid_input', field: '/term_end' });
    const third = await hire(owner, { ...fixed, term_end: '2026-12-31' });
    expect((await payroll.call('employees.update', { id: third.id, contract_type: 'indefinite' }, owner)).output.employee).toMatchObject({ contract_type: 'indefinite', term_end: null });
  });

  it('refuses to dismiss a fixed-term contract whose term is not recorded, or ended before the date', async () => {
    const owner = testPrincipal();
    const e = await hire(owner, { contract_type: 'fixed_term', term_end: '2026-06-30' });
    // A contract recorded before terms were kept.
    await payroll.db.collection('employees').updateOne({ _id: e.id as never }, { $set: { term_end: null } });
    expect(await payroll.call('employees.terminate', { id: e.id, date: '2026-05-15', reason: 'without_just_cause' }, owner)).toMatchObject({ code: 'conflict' });
    await payroll.db.collection('employees').updateOne({ _id: e.id as never }, { $set: { term_end: '2026-03-31' } });
    const late = await payroll.call('employees.terminate', { id: e.id, date: '2026-05-15', reason: 'without_just_cause' }, owner);
    expect(late).toMatchObject({ code: 'conflict' });
    expect(late.message).toContain('2026-03-31');
    // A resignation owes no indemnity and needs no term.
    expect((await payroll.call('employees.terminate', { id: e.id, date: '2026-05-15', reason: 'resignation' }, owner)).output.employee.status).toBe('terminated');
  });
});

describe('the audit\'s dismissal through payroll: run, books, payslip and Nómina Individual', () => {
  const owner = testPrincipal();
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const p12 = makeP12({ password, cn: 'Tienda Andina SAS', org: 'Tienda Andina SAS' });
  const doc = String(1_050_000_000 + Math.floor(Math.random() * 1e8));
  let e: { id: string };
  let september: string;
  let october: string;
  let november: any;

  beforeAll(async () => {
    expect((await payroll.call('payroll.epayroll_configure', {
      nit: '900373115', company_name: 'Tienda Andina SAS', department: '11', municipality: '11001', address: 'Calle 26 # 68-35',
      software_id: 'a1b2c3d4-sw', software_pin: '75315', prefix: 'ND',
    }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.upload_certificate', { p12_base64: p12.base64, password }, owner)).ok).toBe(true);
    e = await hire(owner, { name: 'Luis Pérez Soto', document: { type: 'CC', number: doc }, hire_date: '2025-03-01', salary: { amount: 200_000_000, currency: 'COP' } });
    september = await post(owner, '2026-09');
  });

  it('is refused while a live run pays the employee on or after the last day, or an earlier run is not posted', async () => {
    const oct = await payroll.call('payroll.run', { month: '2026-10' }, owner);
    october = oct.output.run.id;
    expect((await payroll.call('payroll.approve', { id: october, amount: oct.output.run.totals.net }, owner)).ok).toBe(true);
    const early = await payroll.call('payroll.run', { month: '2026-11' }, owner);
    // The November run, computed before the dismissal, pays the whole month: the dismissal waits for it to be voided.
    const refused = await payroll.call('employees.terminate', { id: e.id, date: '2026-11-15', reason: 'without_just_cause' }, owner);
    expect(refused).toMatchObject({ code: 'conflict' });
    expect(refused.message).toContain(early.output.run.id);
    expect((await payroll.call('payroll.void', { id: early.output.run.id }, owner)).ok).toBe(true);
    const done = await payroll.call('employees.terminate', { id: e.id, date: '2026-11-15', reason: 'without_just_cause', note: 'Reestructuración' }, owner);
    expect(done.output.employee.termination.settlement.total).toBe(767_078_213);
    // October is approved, not posted: its provisions are not in the books for the settlement to release.
    const waiting = await payroll.call('payroll.run', { month: '2026-11' }, owner);
    expect(waiting).toMatchObject({ code: 'conflict' });
    expect(waiting.message).toContain(october);
    expect(await payroll.db.collection('payroll_runs').countDocuments({ workspace: owner.workspace, month: '2026-11', status: { $ne: 'void' } })).toBe(0);
    expect((await payroll.call('payroll.post', { id: october }, owner)).ok).toBe(true);
  });

  it('carries the settlement on the last payslip: the provisions it releases and the differences, by hand', async () => {
    const r = await payroll.call('payroll.run', { month: '2026-11' }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    november = r.output;
    const slip = november.payslips[0];
    // 1–15 November: salary 100_000_000 + transport 12_454_750 = 112_454_750. IBC 100_000_000: health and pension
    // 4 % = 4_000_000 each (40.000 pesos, already whole hundreds). Net of the period 112_454_750 − 8_000_000 = 104_454_750.
    expect(slip.period).toEqual({ from: '2026-11-01', to: '2026-11-15', days: 15 });
    // Provisions of September and October (full months, base 224_909_500): severance /12 = 18_742_458.33 → 18_742_458;
    // interest 1 % = 2_249_095; bonus 18_742_458; vacations 200_000_000 × 15/360 = 8_333_333.33 → 8_333_333.
    // November's own (base 112_454_750): severance 9_371_229.17 → 9_371_229; interest 12 % of it 1_124_547.5 → 1_124_548;
    // bonus 9_371_229; vacations 100_000_000 × 15/360 = 4_166_666.67 → 4_166_667.
    // Released (all in 2026 and in the second semester): severance 18_742_458 × 2 + 9_371_229 = 46_856_145;
    // interest 2_249_095 × 2 + 1_124_548 = 5_622_738; bonus 46_856_145; vacations 8_333_333 × 2 + 4_166_667 = 20_833_333
    // (no vacations taken). The earlier months were never run here, so the differences are large; the indemnity was never provisioned.
    expect(slip.settlement).toEqual({
      date: '2026-11-15', reason: 'without_just_cause', total: 767_078_213, released_runs: [october, september].sort(),
      lines: [
        { concept: 'severance', amount: 196_795_813, base: 224_909_500, days: 315, provisioned: 46_856_145, difference: 149_939_668 },
        { concept: 'severance_interest', amount: 20_663_560, base: 196_795_813, days: 315, provisioned: 5_622_738, difference: 15_040_822 },
        { concept: 'service_bonus', amount: 84_341_063, base: 224_909_500, days: 135, provisioned: 46_856_145, difference: 37_484_918 },
        { concept: 'vacations', amount: 170_833_333, base: 200_000_000, days: 615, provisioned: 20_833_333, difference: 150_000_000 },
        { concept: 'indemnity', amount: 294_444_444, base: 200_000_000, days: 615, provisioned: 0, difference: 294_444_444,
          note: 'CST art. 64 lit. a (menos de 10 SMMLV): 30 días por el primer año + 20 × 255/360 por el tiempo siguiente = 44,17 días de salario' },
      ],
    });
    // The payslip pays the period's net and the settlement: 104_454_750 + 767_078_213 = 871_532_963.
    expect(slip.totals).toMatchObject({ net: 871_532_963, settlement: 767_078_213, earnings: 112_454_750, employee_contributions: 8_000_000 });
    expect(november.run.totals).toMatchObject({ employees: 1, net: 871_532_963, settlement: 767_078_213 });
  });

  it('books it: provisions released, differences and indemnity expensed, amounts owed credited — balanced, by hand', async () => {
    const je = november.run.journal_entry;
    // Σ debits = earnings 112_454_750 + employer 16_530_000 + provisions 24_033_673 + settlement 767_078_213 = 920_096_636.
    // (Employer, PILA on 1.000.000: pension 16 % = 160.000, less the employee's 40.000 = 120.000; ARL I 0,522 % = 5.220 → 5.300;
    // family fund 4 % = 40.000; health, ICBF, SENA exempt and their declared figures already whole hundreds.
    // Provisions 9_371_229 + 1_124_548 + 9_371_229 + 4_166_667 = 24_033_673.)
    expect(je).toMatchObject({ total_debit: 920_096_636, total_credit: 920_096_636 });
    const byAccount = Object.fromEntries(je.lines.map((l: any) => [`${l.account}${l.debit ? 'D' : 'C'}`, l.debit || l.credit]));
    expect(byAccount).toEqual({
      '510506D': 100_000_000, '510527D': 12_454_750,
      '510568D': 530_000, '510570D': 12_000_000, '510572D': 4_000_000,
      // Each expense: November's provision + the settlement's difference.
      '510530D': 9_371_229 + 149_939_668, '510533D': 1_124_548 + 15_040_822, '510536D': 9_371_229 + 37_484_918, '510539D': 4_166_667 + 150_000_000,
      '510560D': 294_444_444, // the indemnity, all expense
      // The provisions: November's credited, then everything provisioned for the settlement released.
      '261005C': 9_371_229, '261005D': 46_856_145, '261010C': 1_124_548, '261010D': 5_622_738,
      '261015C': 4_166_667, '261015D': 20_833_333, '261020C': 9_371_229, '261020D': 46_856_145,
      // What is owed, by concept (PUC group 25).
      '251010C': 196_795_813, '251505C': 20_663_560, '252005C': 84_341_063, '252505C': 170_833_333, '254005C': 294_444_444,
      '237005C': 4_000_000, '237006C': 530_000, '237010C': 4_000_000, '238030C': 16_000_000, '250505C': 104_454_750,
    });
    expect(je.lines.find((l: any) => l.account === '254005')).toMatchObject({ name: 'Indemnizaciones laborales' });
    // Approved at what it pays out, posted, and in the feed the finance journal pulls.
    expect(await payroll.call('payroll.approve', { id: november.run.id, amount: 104_454_750 }, owner)).toMatchObject({ code: 'invalid_input', field: '/amount' });
    expect((await payroll.call('payroll.approve', { id: november.run.id, amount: 871_532_963 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: november.run.id }, owner)).output.run.status).toBe('posted');
    const feed = (await payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q: { source: 'payroll_journal' } }, owner)).body.data.payrollRecords.rows;
    expect(feed[0]).toMatchObject({ id: `je_${november.run.id}`, kind: 'posting', date: '2026-11-30', total_debit: 920_096_636, total_credit: 920_096_636 });
  });

  it('prints the settlement on the payslip, headed by the employer (pdftotext)', async () => {
    const r = await payroll.call('payroll.payslip', { run_id: november.run.id, employee_id: e.id, format: 'pdf' }, owner);
    expect(r.output.net).toBe(871_532_963);
    const text = pdfText(r.output.content);
    expect(text).toMatch(/Tienda Andina SAS · NIT 900\.373\.115-3/);
    expect(text).toContain('Liquidación definitiva');
    expect(text).toContain('despido sin justa causa');
    // pdftotext -layout keeps each row's first line together (the concept and the note wrap under it).
    expect(text).toMatch(/Indemnización por .*CST art\. 64 lit\. a .*COP 2\.944\.444,44/);
    expect(text).toMatch(/44,17 días de/);
    expect(text).toMatch(/Cesantías[\s\S]*COP 1\.967\.958,13/);
    expect(text).toMatch(/Total liquidación\s+COP 7\.670\.782,13/);
    expect(text).toMatch(/Neto del periodo: COP 1\.044\.547,50/);
    expect(text).toMatch(/Neto a pagar: COP 8\.715\.329,63/);
  }, 60_000);

  it('reports it in the Nómina Individual: the XSD accepts it, xmlsec1 verifies its signature, the sandbox accepts it', async () => {
    const r = await payroll.call('payroll.einvoice_submit', { employee_id: e.id, month: '2026-11' }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    const d = r.output.document;
    expect(d.authority, JSON.stringify(d.authority)).toMatchObject({ is_valid: true, errors: [] });
    const lint = xmllint(d.xml, XSD);
    expect(lint.ok, lint.out).toBe(true);
    const verified = await xmlsecVerify(d.xml, p12.certPem);
    expect(verified.ok, verified.output).toBe(true);
    const x = parse(d.xml);
    expect(x.Periodo).toMatchObject({ FechaIngreso: '2025-03-01', FechaRetiro: '2026-11-15', FechaLiquidacionInicio: '2026-11-01', FechaLiquidacionFin: '2026-11-15', TiempoLaborado: '615' });
    expect(x.Devengados.Basico).toEqual({ DiasTrabajados: '15', SueldoTrabajado: '1000000.00' });
    // Vacations owed: 615 days × 15/360 = 25,6 → 26 days.
    expect(x.Devengados.Vacaciones).toEqual({ VacacionesCompensadas: { Cantidad: '26', Pago: '1708333.33' } });
    expect(x.Devengados.Primas).toEqual({ Cantidad: '135', Pago: '843410.63' });
    expect(x.Devengados.Cesantias).toEqual({ Pago: '1967958.13', Porcentaje: '12.00', PagoIntereses: '206635.60' });
    expect(x.Devengados.Indemnizacion).toBe('2944444.44');
    // Devengados = 1.000.000 + 124.547,50 + 1.708.333,33 + 843.410,63 + 1.967.958,13 + 206.635,60 + 2.944.444,44 = 8.795.329,63;
    // deducciones 40.000 + 40.000 = 80.000; comprobante 8.715.329,63 — the payslip's "neto a pagar", and what the books owe him
    // (250505 1.044.547,50 + the group-25 credits 7.670.782,13).
    expect([x.DevengadosTotal, x.DeduccionesTotal, x.ComprobanteTotal]).toEqual(['8795329.63', '80000.00', '8715329.63']);
    const g = x.InformacionGeneral;
    const byHand = `ND1${g.FechaGen}${g.HoraGen}8795329.6380000.008715329.63900373115${doc}102753152`;
    expect(g.CUNE).toBe(createHash('sha384').update(byHand, 'utf8').digest('hex'));
  });

  it('keeps the released runs posted while the settlement stands', async () => {
    const refused = await payroll.call('payroll.void', { id: september }, owner);
    expect(refused).toMatchObject({ code: 'conflict' });
    expect(refused.message).toContain(november.run.id);
    // Voiding November (its entry reversed) frees them.
    expect((await payroll.call('payroll.void', { id: november.run.id, reason: 'Corrección' }, owner)).output.run.status).toBe('void');
    expect((await payroll.call('payroll.void', { id: september }, owner)).output.run.status).toBe('void');
  });
});
