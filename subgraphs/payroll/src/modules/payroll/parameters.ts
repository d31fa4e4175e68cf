import { MINIMUM_WAGES } from '../../parameters.ts';

/**
 * Colombian payroll parameters as data (DOMAIN.md, Colombian payroll; issue 18): every figure the
 * calculation engine uses, each step with the date it takes effect, its legal source, and whether
 * the figure was checked against a public text (`evidence`). A value that changes mid-year is a
 * second step of the same key; the engine asks for a key's value ON A DATE, so a period that spans
 * a change uses each value for its own days or hours.
 *
 * The table starts on 2025-01-01: a value already in force then (for instance the 75 % Sunday
 * surcharge of 2002) is given from 2025-01-01 with `in_force_since` naming the older law.
 * Figures not fixed yet (the 2027 minimum wage and transport allowance, decreed each December)
 * are absent, and the lookup refuses to guess them.
 */

/** How a parameter's value reads. */
export type ParameterUnit =
  /** Integer minor units (centavos) of COP. */
  | 'cop_minor'
  /** A rate in parts per million (CONTRACT §3: 4 % = 40000). */
  | 'ppm'
  /** A count of monthly minimum wages (a threshold or a bound). */
  | 'minimum_wages'
  | 'hours'
  /** An hour of the day, 0–23. */
  | 'hour_of_day'
  | 'days';

/** The parameters, by key. */
export const PARAMETER_KEYS = [
  'minimum_wage', 'transport_allowance', 'transport_allowance_cap',
  'health_employee', 'pension_employee',
  'solidarity_fund_from_4', 'solidarity_fund_from_16', 'solidarity_fund_from_17', 'solidarity_fund_from_18', 'solidarity_fund_from_19', 'solidarity_fund_above_20',
  'health_employer', 'pension_employer', 'arl_class_1', 'arl_class_2', 'arl_class_3', 'arl_class_4', 'arl_class_5',
  'family_fund', 'icbf', 'sena', 'exemption_114_1_below',
  'contribution_base_floor', 'contribution_base_ceiling', 'non_salary_cap', 'ibc_rounding', 'contribution_rounding',
  'severance_days_per_year', 'severance_interest', 'service_bonus_days_per_year', 'vacation_days_per_year',
  'dismissal_first_year_days', 'dismissal_further_year_days', 'dismissal_high_wage_from', 'dismissal_high_wage_first_year_days',
  'dismissal_high_wage_further_year_days', 'dismissal_fixed_term_minimum_days',
  'night_work_start', 'night_surcharge', 'sunday_holiday_surcharge', 'overtime_day', 'overtime_night',
  'max_weekly_hours', 'monthly_hour_divisor',
  'sick_leave_employer_days', 'sick_leave_employer_days_rate', 'sick_leave_rate', 'sick_leave_floor',
] as const;
export type ParameterKey = (typeof PARAMETER_KEYS)[number];

/** One value of one parameter from one date on. */
export interface ParameterStep {
  key: ParameterKey;
  value: number;
  unit: ParameterUnit;
  /** First day the value applies (YYYY-MM-DD). */
  effective_from: string;
  /** The legal text that fixes it. */
  source: string;
  /** Whether the figure was checked against a public text (official or reputable), named in `evidence`. */
  verified: boolean;
  /** Where it was checked, or why it could not be. */
  evidence: string;
  /** For a value in force before the table starts: the law and date it comes from. */
  in_force_since?: string;
  note?: string;
}

const LEY_2466 = 'Ley 2466 de 2025 (25 Jun 2025)';
const CST_64 = 'CST art. 64 as modified by Ley 789 de 2002 art. 28 (terminación unilateral del contrato sin justa causa)';
const CST_64_EVIDENCE = 'The article\'s text as modified by Ley 789 art. 28 (scribd copies of "Artículo 64 del Código Sustantivo del Trabajo"): "a) Para trabajadores que devenguen un salario inferior a diez (10) salarios mínimos mensuales legales: 1. Treinta (30) días de salario cuando el trabajador tuviere un tiempo de servicio no mayor de un (1) año. 2. ... veinte (20) días adicionales de salario sobre los treinta (30) básicos ... por cada uno de los años de servicio subsiguientes al primero y proporcionalmente por fracción; b) ... igual o superior a diez (10) ... 1. Veinte (20) días ... 2. ... quince (15) días adicionales"';
const DECRETO_1990 = 'Decreto 780 de 2016 art. 3.2.1.5 as modified by Decreto 1990 de 2016 art. 1 (aproximación de los valores de la planilla de autoliquidación de aportes, PILA)';
const DECRETO_1990_EVIDENCE = 'Decreto 1990 de 2016 (Diario Oficial 50.079, 6 Dec 2016) read on normograma.mincultura.gov.co: "Por medio del cual se modifica el artículo 3.2.1.5. ... del Decreto 780 de 2016 ... en relación con las reglas de aproximación de los valores contenidos en la planilla de autoliquidación de aportes", its recital: "se hace necesario modificar las reglas de aproximación de los valores del ingreso base de cotización" (the article\'s own body could not be read here). '
  + 'The rule as applied by PILA: PorkColombia\'s summary of the decree (IBC "PESO SUPERIOR" from 6 Mar 2017, before: the nearest 1.000); open-source payroll code quoting it as "el IBC deberá aproximarse al peso superior más cercano; el valor de la cotización deberá redondearse al múltiplo de 100 superior más cercano", one of them checked against a PILA on the 2026 minimum wage (1.750.905) that declares pensión 280.200 (16 % = 280.144,80) and salud 218.900 (12,5 % = 218.863,13)';
const CST_168_EVIDENCE = 'CST art. 168 text quoted in MinProtección conceptos 357565/71572 de 2008-2009 (accounter.co); el Pilón / El Colombiano on the 35 % night surcharge (Dec 2025)';
const SOLIDARITY_EVIDENCE = 'Ley 100 art. 27 as modified by Ley 797 de 2003 art. 8, brackets quoted by notaria19bogota.com (aportes del trabajador); Portafolio (1 % from 4 SMMLV, 2 % above 20); Ley 2381 de 2024 (which would change them) suspended by Corte Constitucional Auto 841 de 2025';
const ARL_EVIDENCE = 'MinProtección Concepto 237724 de 2010 (accounter.co): Decreto 1772 de 1994 art. 13 table, initial values by class';

/** The wage rows of src/parameters.ts (the single list of minimum wages), with how each was checked. */
const WAGE_EVIDENCE: Record<number, string> = {
  2025: 'barrerapalacio.com: Decretos 1572 y 1573 de 2024, SMMLV $1.423.500 from 1 Jan 2025',
  2026: 'El Colombiano (13 Feb 2026): Decreto 1469 de 2025 fixed $1.750.905; provisionally suspended by the Consejo de Estado without retroactive effect. The replacement decree keeping the value was not read here',
};

function step(key: ParameterKey, unit: ParameterUnit, value: number, effective_from: string, source: string, verified: boolean, evidence: string, extra: Partial<ParameterStep> = {}): ParameterStep {
  return { key, value, unit, effective_from, source, verified, evidence, ...extra };
}

const SINCE_2025 = '2025-01-01';

/** Every step, by key then date. */
export const PARAMETER_STEPS: readonly ParameterStep[] = [
  ...MINIMUM_WAGES.map((w) => step('minimum_wage', 'cop_minor', w.amount, w.effective_from, w.source, w.year in WAGE_EVIDENCE, WAGE_EVIDENCE[w.year] ?? 'not checked')),
  step('transport_allowance', 'cop_minor', 20_000_000, '2025-01-01', 'Decreto 1573 de 2024', true, 'barrerapalacio.com: Decretos 1572 y 1573 de 2024, auxilio de transporte $200.000'),
  step('transport_allowance', 'cop_minor', 24_909_500, '2026-01-01', 'Decreto 1470 de 2025', true, 'El Colombiano, La FM (Feb 2026): Decreto 1470 de 2025, $249.095, not affected by the suspension of Decreto 1469'),
  step('transport_allowance_cap', 'minimum_wages', 2, SINCE_2025, 'Ley 15 de 1959; Decreto 1470 de 2025 (for wages up to two minimum wages)', true, 'El Colombiano (Feb 2026): paid to those earning up to two minimum wages', { in_force_since: 'Ley 15 de 1959' }),

  step('health_employee', 'ppm', 40_000, SINCE_2025, 'Ley 1122 de 2007 art. 10 (12.5 %: 8.5 % employer, 4 % employee)', true, 'accolombianlawyers.com; notaria19bogota.com (citing Ley 1122 de 2007 art. 10)', { in_force_since: 'Ley 1122 de 2007' }),
  step('pension_employee', 'ppm', 40_000, SINCE_2025, 'Ley 100 de 1993 art. 20 as modified by Ley 797 de 2003 art. 7 (16 %: 12 % employer, 4 % employee)', true, 'accolombianlawyers.com; notaria19bogota.com', { in_force_since: 'Ley 797 de 2003 (16 % from 2008)' }),
  step('solidarity_fund_from_4', 'ppm', 10_000, SINCE_2025, 'Ley 100 de 1993 art. 27 num. 1, as modified by Ley 797 de 2003 art. 8 (IBC ≥ 4 SMMLV)', true, SOLIDARITY_EVIDENCE, { in_force_since: 'Ley 797 de 2003' }),
  step('solidarity_fund_from_16', 'ppm', 12_000, SINCE_2025, 'Ley 797 de 2003 art. 8 (16 to 17 SMMLV: +0.2 % subsistence)', true, SOLIDARITY_EVIDENCE, { in_force_since: 'Ley 797 de 2003' }),
  step('solidarity_fund_from_17', 'ppm', 14_000, SINCE_2025, 'Ley 797 de 2003 art. 8 (17 to 18 SMMLV: +0.4 %)', true, SOLIDARITY_EVIDENCE, { in_force_since: 'Ley 797 de 2003' }),
  step('solidarity_fund_from_18', 'ppm', 16_000, SINCE_2025, 'Ley 797 de 2003 art. 8 (18 to 19 SMMLV: +0.6 %)', true, SOLIDARITY_EVIDENCE, { in_force_since: 'Ley 797 de 2003' }),
  step('solidarity_fund_from_19', 'ppm', 18_000, SINCE_2025, 'Ley 797 de 2003 art. 8 (19 to 20 SMMLV: +0.8 %)', true, SOLIDARITY_EVIDENCE, { in_force_since: 'Ley 797 de 2003' }),
  step('solidarity_fund_above_20', 'ppm', 20_000, SINCE_2025, 'Ley 797 de 2003 art. 8 (above 20 SMMLV: +1 %)', true, SOLIDARITY_EVIDENCE, { in_force_since: 'Ley 797 de 2003' }),

  step('health_employer', 'ppm', 85_000, SINCE_2025, 'Ley 1122 de 2007 art. 10', true, 'accolombianlawyers.com; notaria19bogota.com', { in_force_since: 'Ley 1122 de 2007' }),
  step('pension_employer', 'ppm', 120_000, SINCE_2025, 'Ley 100 de 1993 art. 20 as modified by Ley 797 de 2003 art. 7', true, 'accolombianlawyers.com; notaria19bogota.com', { in_force_since: 'Ley 797 de 2003' }),
  step('arl_class_1', 'ppm', 5_220, SINCE_2025, 'Decreto 1772 de 1994 art. 13 (class I, initial value)', true, ARL_EVIDENCE, { in_force_since: 'Decreto 1772 de 1994' }),
  step('arl_class_2', 'ppm', 10_440, SINCE_2025, 'Decreto 1772 de 1994 art. 13 (class II)', true, ARL_EVIDENCE, { in_force_since: 'Decreto 1772 de 1994' }),
  step('arl_class_3', 'ppm', 24_360, SINCE_2025, 'Decreto 1772 de 1994 art. 13 (class III)', true, ARL_EVIDENCE, { in_force_since: 'Decreto 1772 de 1994' }),
  step('arl_class_4', 'ppm', 43_500, SINCE_2025, 'Decreto 1772 de 1994 art. 13 (class IV)', true, ARL_EVIDENCE, { in_force_since: 'Decreto 1772 de 1994' }),
  step('arl_class_5', 'ppm', 69_600, SINCE_2025, 'Decreto 1772 de 1994 art. 13 (class V)', true, ARL_EVIDENCE, { in_force_since: 'Decreto 1772 de 1994' }),
  step('family_fund', 'ppm', 40_000, SINCE_2025, 'Ley 21 de 1982 (caja de compensación familiar)', true, 'Percentage: notaria19bogota.com, elrincondelcaribe (4 % of salary payments). The article number was not read in the law itself', { in_force_since: 'Ley 21 de 1982' }),
  step('icbf', 'ppm', 30_000, SINCE_2025, 'Ley 89 de 1988 art. 1', true, 'Percentage: notaria19bogota.com, mindomo summary (3 %). The article was not read in the law itself', { in_force_since: 'Ley 89 de 1988' }),
  step('sena', 'ppm', 20_000, SINCE_2025, 'Ley 21 de 1982', true, 'Percentage: notaria19bogota.com, mindomo summary (2 %). The article was not read in the law itself', { in_force_since: 'Ley 21 de 1982' }),
  step('exemption_114_1_below', 'minimum_wages', 10, SINCE_2025, 'Estatuto Tributario art. 114-1 (Ley 1819 de 2016 art. 65): employer health, ICBF and SENA exempt for workers earning < 10 SMMLV, for income-tax-filing companies (and natural persons with two or more workers)', true,
    'ET art. 114-1 text (leyes.co; MinSalud Concepto 201811600968251 via cijuf.org.co); DIAN Concepto 007196 de 2025 (normograma.dian.gov.co): non-salary payments do not count towards the 10 SMMLV', { in_force_since: 'Ley 1819 de 2016' }),

  step('contribution_base_floor', 'minimum_wages', 1, SINCE_2025, 'Ley 100 de 1993 arts. 18, 19 and 204 as modified by Ley 797 de 2003 arts. 5-6', true, 'MinTrabajo Concepto 38594 de 2019 (accounter.co): IBC never below 1 nor above 25 SMMLV', { in_force_since: 'Ley 797 de 2003' }),
  step('contribution_base_ceiling', 'minimum_wages', 25, SINCE_2025, 'Ley 100 de 1993 art. 18 as modified by Ley 797 de 2003 art. 5', true, 'MinTrabajo Concepto 38594 de 2019 (accounter.co)', { in_force_since: 'Ley 797 de 2003' }),
  step('non_salary_cap', 'ppm', 400_000, SINCE_2025, 'Ley 1393 de 2010 art. 30: non-salary payments above 40 % of total remuneration enter the IBC of health, pension and ARL', true,
    'Ley 1393 art. 30 text (actuarasesoreslaborales.com, laboraldia.com on CSJ SL5159-2018); MinTrabajo Concepto 147921 de 2013 worked example; transport allowance left out of the total per Consejo de Estado 17 Sep 2020 (aleluya.com)', { in_force_since: 'Ley 1393 de 2010' }),
  step('ibc_rounding', 'cop_minor', 100, SINCE_2025, `${DECRETO_1990}: the contribution base (IBC) is approximated up to the next whole peso`, true, DECRETO_1990_EVIDENCE, { in_force_since: 'Decreto 1990 de 2016 (from 6 Mar 2017)' }),
  step('contribution_rounding', 'cop_minor', 10_000, SINCE_2025, `${DECRETO_1990}: each subsystem's contribution is approximated up to the next multiple of 100 pesos`, true, DECRETO_1990_EVIDENCE,
    { in_force_since: 'Decreto 1990 de 2016 (from 6 Mar 2017)', note: 'Applied per subsystem to the declared amount (employee and employer rates together); the employee\'s share is their rate half up to the peso and the employer bears the rest. The solidarity fund is one subsystem here (its two sub-accounts are not declared apart).' }),

  step('severance_days_per_year', 'days', 30, SINCE_2025, 'CST art. 249: one month of salary per year worked (8.33 % of the base)', true, 'derecholaboralcid.blogspot.com; aleluya.com provisioning (8.333 %)', { in_force_since: 'CST' }),
  step('severance_interest', 'ppm', 120_000, SINCE_2025, 'Ley 52 de 1975 art. 1: 12 % a year on severance (1 % a month of the base)', true, 'derecholaboralcid.blogspot.com; aleluya.com (12 % of the year\'s severance, provisioned monthly)', { in_force_since: 'Ley 52 de 1975' }),
  step('service_bonus_days_per_year', 'days', 30, SINCE_2025, 'CST art. 306 as modified by Ley 1788 de 2016: one month of salary a year, paid by halves', true, 'mcaccounting.com.co (one month a year, two payments)', { in_force_since: 'CST' }),
  step('vacation_days_per_year', 'days', 15, SINCE_2025, 'CST art. 186: 15 working days of paid rest a year (4.17 % of the salary)', false, 'Not found in the pages searched; figure as in DOMAIN.md (4.17 %)', { in_force_since: 'CST' }),

  step('dismissal_first_year_days', 'days', 30, SINCE_2025, `${CST_64}, lit. a num. 1: 30 days of salary for a year of service or less (salary under 10 SMMLV)`, true, CST_64_EVIDENCE, { in_force_since: 'Ley 789 de 2002 art. 28' }),
  step('dismissal_further_year_days', 'days', 20, SINCE_2025, `${CST_64}, lit. a num. 2: 20 more days for each further year, proportionally for a fraction`, true, CST_64_EVIDENCE, { in_force_since: 'Ley 789 de 2002 art. 28' }),
  step('dismissal_high_wage_from', 'minimum_wages', 10, SINCE_2025, `${CST_64}, lit. b: salaries of 10 SMMLV or more take the lower table`, true, CST_64_EVIDENCE, { in_force_since: 'Ley 789 de 2002 art. 28' }),
  step('dismissal_high_wage_first_year_days', 'days', 20, SINCE_2025, `${CST_64}, lit. b num. 1: 20 days for a year of service or less`, true, CST_64_EVIDENCE, { in_force_since: 'Ley 789 de 2002 art. 28' }),
  step('dismissal_high_wage_further_year_days', 'days', 15, SINCE_2025, `${CST_64}, lit. b num. 2: 15 more days for each further year, proportionally for a fraction`, true, CST_64_EVIDENCE, { in_force_since: 'Ley 789 de 2002 art. 28' }),
  step('dismissal_fixed_term_minimum_days', 'days', 15, SINCE_2025, `${CST_64}: fixed term, the salaries of the time left of the term; the indemnity "no será inferior a quince (15) días"`, true,
    `${CST_64_EVIDENCE}; the floor read as binding fixed-term contracts too by the Ministerio de la Protección Social (ambitojuridico.com, 2 Aug 2011: "en todo caso, no podrá ser inferior a 15 días")`,
    { in_force_since: 'Ley 789 de 2002 art. 28', note: 'The sentence ties the 15-day floor to contracts for a piece of work; the Ministry reads it for every fixed term, and so does this table (the reading that favours the worker, CST art. 21).' }),

  step('night_work_start', 'hour_of_day', 21, SINCE_2025, 'CST art. 160 as modified by Ley 1846 de 2017: night work from 9 p.m. to 6 a.m.', true, 'Ley 1846 de 2017 text (safetya.co)', { in_force_since: 'Ley 1846 de 2017' }),
  step('night_work_start', 'hour_of_day', 19, '2025-12-25', `${LEY_2466} art. 10 (CST art. 160): night work from 7 p.m. to 6 a.m., six months after the law`, true, 'El Colombiano (24-25 Dec 2025): art. 10 par. 2, in force 25 Dec 2025; Noticias RCN; El Espectador'),
  step('night_surcharge', 'ppm', 350_000, SINCE_2025, 'CST art. 168 num. 1', true, CST_168_EVIDENCE, { in_force_since: 'Ley 50 de 1990 art. 24' }),
  step('overtime_day', 'ppm', 250_000, SINCE_2025, 'CST art. 168 num. 2', true, CST_168_EVIDENCE, { in_force_since: 'Ley 50 de 1990 art. 24' }),
  step('overtime_night', 'ppm', 750_000, SINCE_2025, 'CST art. 168 num. 3', true, CST_168_EVIDENCE, { in_force_since: 'Ley 50 de 1990 art. 24' }),
  step('sunday_holiday_surcharge', 'ppm', 750_000, SINCE_2025, 'CST art. 179 as modified by Ley 789 de 2002 art. 26', true, 'El Espectador, Vive Huila (the surcharge rose from 75 % on 1 Jul 2025)', { in_force_since: 'Ley 789 de 2002' }),
  step('sunday_holiday_surcharge', 'ppm', 800_000, '2025-07-01', `${LEY_2466} art. 14 (CST art. 179), gradual step 1`, true, 'Noticias RCN (21 Oct 2025), Caracol (17 Sep 2025), grupoapr.co: 80 % from 1 Jul 2025, 90 % from 1 Jul 2026, 100 % from 1 Jul 2027'),
  step('sunday_holiday_surcharge', 'ppm', 900_000, '2026-07-01', `${LEY_2466} art. 14 (CST art. 179), gradual step 2`, true, 'Noticias RCN (21 Oct 2025), Caracol (17 Sep 2025), grupoapr.co'),
  step('sunday_holiday_surcharge', 'ppm', 1_000_000, '2027-07-01', `${LEY_2466} art. 14 (CST art. 179), full surcharge`, true, 'Noticias RCN (21 Oct 2025), Caracol (17 Sep 2025), grupoapr.co'),

  step('max_weekly_hours', 'hours', 46, SINCE_2025, 'Ley 2101 de 2021 art. 3 (CST art. 161): 46 h from 15 Jul 2024', true, 'Portafolio (Aug 2023), servilabor.com.co', { in_force_since: '2024-07-15' }),
  step('max_weekly_hours', 'hours', 44, '2025-07-15', 'Ley 2101 de 2021 art. 3: two hours less from the fourth year (44 h)', true, 'ifmnoticias.com ("a partir del 15 de julio de 2025 ... 44 horas"); Caracol (25 Jan 2026); Portafolio',
    { note: 'Ley 2101 took effect on its publication, 15 Jul 2021; MinTrabajo read "two years after" as 15 Jul 2023 (temporales.com.co). A few outlets give the 16th.' }),
  step('max_weekly_hours', 'hours', 42, '2026-07-15', 'Ley 2101 de 2021 art. 3: final step (42 h)', true, 'Caracol (25 Jan 2026: "Julio de 2026 ... 42 horas"); Noticias Hoy ("42 horas semanales a partir del 15 de julio de 2026")'),
  step('monthly_hour_divisor', 'hours', 230, SINCE_2025, 'Follows Ley 2101 de 2021: weekly hours ÷ 6 days × 30 days (46 h → 230)', true, 'gerencie.com (divisor = weekly hours / 6 × 30; 46 h → 230); dataico.com (230 in 2024)',
    { in_force_since: '2024-07-15', note: 'Doctrine, not a statutory figure: the law fixes weekly hours only.' }),
  step('monthly_hour_divisor', 'hours', 220, '2025-07-15', 'Follows Ley 2101 de 2021 (44 h → 220)', true, 'gerencie.com rule; El Colombiano (Dec 2025): minimum-wage night hour $8.355 at 230 h becomes $8.735 at 44 h (1.423.500 / 220 × 1.35)',
    { note: 'Doctrine, not a statutory figure.' }),
  step('monthly_hour_divisor', 'hours', 210, '2026-07-15', 'Follows Ley 2101 de 2021 (42 h → 210)', true, 'gerencie.com rule (42 / 6 × 30)', { note: 'Doctrine, not a statutory figure.' }),

  step('sick_leave_employer_days', 'days', 2, SINCE_2025, 'Decreto 780 de 2016 art. 3.2.1.10 par. 1 (Decreto 2943 de 2013 art. 1): the employer pays the first two days, the health fund (EPS) from the third', true, 'actualicese.com, gerencie.com, herreraasociados.co (text of the paragraph)', { in_force_since: 'Decreto 2943 de 2013' }),
  step('sick_leave_employer_days_rate', 'ppm', 1_000_000, SINCE_2025, 'Employer practice for the first two days (the brief of issue 18); CST art. 227 requires only two thirds', false,
    'Not a legal figure: symplifica.com says 100 %, actualicese.com and solucioneslegales.net.co say the employer may pay two thirds (with the minimum-wage floor). Kept at 100 % as the workspace default'),
  step('sick_leave_rate', 'ppm', 666_700, SINCE_2025, 'CST art. 227: two thirds of the salary for the first 90 days (66.67 %)', true, 'CST art. 227 text quoted by accolombianlawyers.com, gerencie.com',
    { in_force_since: 'CST', note: 'Two thirds written as 66.67 %, as DOMAIN.md and the health funds state it.' }),
  step('sick_leave_floor', 'minimum_wages', 1, SINCE_2025, 'CST art. 227 as read by the Corte Constitucional: the sick-leave pay is never below the minimum wage (per day)', true, 'herreraasociados.co; accolombianlawyers.com; actualicese.com ("regla del pago del smmlv")'),
];

/** The steps of one key, oldest first. */
function stepsOf(key: ParameterKey): ParameterStep[] {
  return PARAMETER_STEPS.filter((s) => s.key === key).sort((a, b) => a.effective_from.localeCompare(b.effective_from));
}

/** A parameter has no value fixed for the date asked (a future year's minimum wage, a date before the table). */
export class ParameterUnknown extends Error {
  readonly key: ParameterKey;
  readonly date: string;
  constructor(key: ParameterKey, date: string) {
    super(`No value of ${key} is fixed for ${date}.`);
    this.key = key;
    this.date = date;
  }
}

/**
 * The step of `key` in force on `date` (YYYY-MM-DD). A minimum wage or transport allowance is
 * fixed for one calendar year only, so a date in a year with no decree yet is refused rather
 * than answered with last year's figure.
 */
export function stepAt(key: ParameterKey, date: string): ParameterStep {
  const steps = stepsOf(key);
  let found: ParameterStep | undefined;
  for (const s of steps) if (s.effective_from <= date) found = s;
  if (!found) throw new ParameterUnknown(key, date);
  if (YEARLY.has(key) && found.effective_from.slice(0, 4) !== date.slice(0, 4)) throw new ParameterUnknown(key, date);
  return found;
}

/** The value of `key` on `date`. */
export function valueAt(key: ParameterKey, date: string): number {
  return stepAt(key, date).value;
}

/** Keys decreed afresh each year. */
const YEARLY: ReadonlySet<ParameterKey> = new Set(['minimum_wage', 'transport_allowance']);

/**
 * The steps that apply during a calendar year: for each key the value in force on 1 January
 * (when one is) and every change during the year, ordered by key as {@link PARAMETER_KEYS} lists
 * them, then by date.
 */
export function stepsForYear(year: number): ParameterStep[] {
  const first = `${year}-01-01`;
  const last = `${year}-12-31`;
  const out: ParameterStep[] = [];
  for (const key of PARAMETER_KEYS) {
    const steps = stepsOf(key);
    let opening: ParameterStep | undefined;
    for (const s of steps) if (s.effective_from <= first) opening = s;
    if (opening && YEARLY.has(key) && opening.effective_from.slice(0, 4) !== String(year)) opening = undefined;
    if (opening) out.push(opening);
    out.push(...steps.filter((s) => s.effective_from > first && s.effective_from <= last));
  }
  return out;
}

/** The first and last years the table answers for. */
export const PARAMETER_YEARS = { first: 2025, last: 2027 } as const;
