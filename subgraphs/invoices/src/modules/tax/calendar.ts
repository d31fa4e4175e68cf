import { colombianHolidays } from '@cuadra/shared';

/**
 * The DIAN national tax calendar as data (issue 17, the agenda's `tax` lane).
 *
 * Legal source: Decreto 2229 de 2023 (22 December 2023, Ministerio de Hacienda y Crédito Público),
 * which substitutes articles of Libro 1, Parte 6, Título 1, Capítulo 13, Sección 2 of the Decreto
 * 1625 de 2016 (Decreto Único Reglamentario en materia tributaria) "para establecer los calendarios
 * de plazos … a partir del año 2024 y siguientes". The decree sets every deadline as a business day
 * (día hábil) of the due month chosen by the last digit of the NIT (without the check digit): 1 →
 * the 7th business day, 2 → the 8th, …, 9 → the 15th, 0 → the 16th ({@link DUE_BUSINESS_DAY}).
 * DIAN's calendar of each year applies that rule; no later decree changing these obligations'
 * deadlines was found.
 *
 * What was verified, and how (see `VERIFIED`): the rule reproduces every date of DIAN's published
 * 2026 calendar that was checked (press reports of DIAN's publication of 25–27 December 2025): VAT
 * bimonthly January–February due 10–24 March 2026; legal persons' income tax 12–26 May and 9–23
 * July 2026; large taxpayers' 10–23 February, 13–24 April and 10–24 June 2026; withholding of
 * November 2025 due 10–23 December 2025. The article numbers below were matched to their subject
 * in earlier versions of the same section (Decretos 1680 de 2020, 2487 de 2022, 0219 de 2023);
 * 1.6.1.13.2.34 (VAT) was not seen in a source here and is marked so. The decree's own text was not
 * read here (only its title and recital). 2027 is computed from the same rule: DIAN's 2027
 * calendar was not found published, so its entries say `verified: false`.
 *
 * Business days: Monday to Friday except the national holidays and DIAN's civic day
 * ({@link nonBusinessDays}). DIAN published its 2026 calendar in December 2025, before Ley 2578 de
 * 2026 (1 June 2026) made 13 July 2026 a holiday and before it announced (3 March 2026) that 17 April
 * 2026, the civic day, moves the deadlines: the dates below are those the rule gives with both days.
 */

export const LEGAL_SOURCE = 'Decreto 2229 de 2023 (Decreto 1625 de 2016, Libro 1, Parte 6, Título 1, Capítulo 13, Sección 2)';

/** Business day of the due month on which an obligation falls due, by the NIT's last digit. */
export const DUE_BUSINESS_DAY: Record<string, number> = { 1: 7, 2: 8, 3: 9, 4: 10, 5: 11, 6: 12, 7: 13, 8: 14, 9: 15, 0: 16 };

/** The years the lane answers, and whether their dates were checked against DIAN's own publication. */
export const CALENDAR_YEARS: Record<number, { verified: boolean; note: string }> = {
  2026: { verified: true, note: 'Checked against DIAN\'s published calendar for 2026 (dates listed in calendar.ts), with the deadlines DIAN moved from 17 April (civic day); from 13 July (Ley 2578 de 2026) the rule moves them a day — DIAN\'s own amended July table was not found.' },
  2027: { verified: false, note: 'Computed from the rule of Decreto 2229 de 2023; DIAN\'s calendar for 2027 was not found published.' },
};

/** Art. 600 Estatuto Tributario: bimonthly VAT for large taxpayers and whoever had gross income ≥ 92,000 UVT the year before; else four-monthly. */
export const VAT_BIMONTHLY_UVT = 92_000;

export type Obligation = 'vat_bimonthly' | 'vat_four_monthly' | 'withholding' | 'income_tax_legal_person' | 'income_tax_large_taxpayer';

/** One deadline of an obligation in a year: its due month (1–12, of `year` or the next), the period it covers and what is due. */
export interface Deadline {
  obligation: Obligation;
  form: string;
  article: string;
  articleVerified: boolean;
  /** The period declared (YYYY-MM to YYYY-MM), or the taxable year. */
  period: string;
  dueYear: number;
  dueMonth: number;
  title: string;
}

const MONTHS_ES = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'];
const ym = (y: number, m: number) => `${y}-${String(m).padStart(2, '0')}`;

/** The deadlines falling due in `year` for the obligations asked for. */
export function deadlinesDueIn(year: number, obligations: ReadonlySet<Obligation>): Deadline[] {
  const out: Deadline[] = [];
  if (obligations.has('withholding')) {
    // Monthly: the month before, declared (form 350) in the following month.
    for (let due = 1; due <= 12; due++) {
      const [py, pm] = due === 1 ? [year - 1, 12] : [year, due - 1];
      out.push({ obligation: 'withholding', form: '350', article: '1.6.1.13.2.33', articleVerified: true, period: `${ym(py, pm)}/${ym(py, pm)}`, dueYear: year, dueMonth: due, title: `Retención en la fuente ${MONTHS_ES[pm - 1]} ${py} — declarar y pagar (formulario 350)` });
    }
  }
  if (obligations.has('vat_bimonthly')) {
    // January–February due in March … September–October in November; November–December of the year before due in January.
    for (const due of [1, 3, 5, 7, 9, 11]) {
      const [py, from] = due === 1 ? [year - 1, 11] : [year, due - 2];
      out.push({ obligation: 'vat_bimonthly', form: '300', article: '1.6.1.13.2.34', articleVerified: false, period: `${ym(py, from)}/${ym(py, from + 1)}`, dueYear: year, dueMonth: due, title: `IVA bimestral ${MONTHS_ES[from - 1]}–${MONTHS_ES[from]} ${py} — declarar y pagar (formulario 300)` });
    }
  }
  if (obligations.has('vat_four_monthly')) {
    // January–April due in May, May–August in September; September–December of the year before in January.
    for (const [due, from] of [[1, 9], [5, 1], [9, 5]] as const) {
      const py = due === 1 ? year - 1 : year;
      out.push({ obligation: 'vat_four_monthly', form: '300', article: '1.6.1.13.2.34', articleVerified: false, period: `${ym(py, from)}/${ym(py, from + 3)}`, dueYear: year, dueMonth: due, title: `IVA cuatrimestral ${MONTHS_ES[from - 1]}–${MONTHS_ES[from + 2]} ${py} — declarar y pagar (formulario 300)` });
    }
  }
  const taxable = `${year - 1}-01/${year - 1}-12`;
  if (obligations.has('income_tax_legal_person')) {
    out.push(
      { obligation: 'income_tax_legal_person', form: '110', article: '1.6.1.13.2.12', articleVerified: true, period: taxable, dueYear: year, dueMonth: 5, title: `Renta ${year - 1} personas jurídicas — declarar y pagar la primera cuota (formulario 110)` },
      { obligation: 'income_tax_legal_person', form: '110', article: '1.6.1.13.2.12', articleVerified: true, period: taxable, dueYear: year, dueMonth: 7, title: `Renta ${year - 1} personas jurídicas — pagar la segunda cuota` },
    );
  }
  if (obligations.has('income_tax_large_taxpayer')) {
    out.push(
      { obligation: 'income_tax_large_taxpayer', form: '110', article: '1.6.1.13.2.11', articleVerified: true, period: taxable, dueYear: year, dueMonth: 2, title: `Renta ${year - 1} grandes contribuyentes — pagar la primera cuota` },
      { obligation: 'income_tax_large_taxpayer', form: '110', article: '1.6.1.13.2.11', articleVerified: true, period: taxable, dueYear: year, dueMonth: 4, title: `Renta ${year - 1} grandes contribuyentes — declarar y pagar la segunda cuota (formulario 110)` },
      { obligation: 'income_tax_large_taxpayer', form: '110', article: '1.6.1.13.2.11', articleVerified: true, period: taxable, dueYear: year, dueMonth: 6, title: `Renta ${year - 1} grandes contribuyentes — pagar la tercera cuota` },
    );
  }
  return out;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
const utc = (y: number, m: number, d: number) => new Date(Date.UTC(y, m - 1, d));
const plusDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

/**
 * The days of a year on which no term of the tax calendar runs (YYYY-MM-DD, sorted): the national
 * holidays (the shared list: Ley 51 de 1983, Ley 37 de 1905, and Ley 2578 de 2026's 9 July, moved to
 * Monday — 13 July 2026) and the third Friday of April, "Día Cívico de la Paz con la Naturaleza" for
 * the national entities, DIAN among them (Decreto 500 de 2024). DIAN counts the terms of Decreto 2229
 * de 2023 in business days, so a day that stops being one moves that deadline and every later one of
 * the month (DIAN's communiqué of 3 March 2026 on 17 April 2026, as reported by Semana, El Heraldo and
 * Valora Analitik).
 */
export function nonBusinessDays(year: number): string[] {
  return [...colombianHolidays(year).map((h) => h.date), civicDay(year)].sort();
}

/** The third Friday of April (Decreto 500 de 2024). */
function civicDay(year: number): string {
  const first = utc(year, 4, 1);
  return iso(plusDays(first, ((5 - first.getUTCDay() + 7) % 7) + 14));
}

const holidayCache = new Map<number, Set<string>>();

/** The `n`th business day (Monday–Friday, not in {@link nonBusinessDays}) of a month. */
export function nthBusinessDay(year: number, month: number, n: number): string {
  let holidays = holidayCache.get(year);
  if (!holidays) holidayCache.set(year, (holidays = new Set(nonBusinessDays(year))));
  let count = 0;
  for (let d = utc(year, month, 1); d.getUTCMonth() === month - 1; d = plusDays(d, 1)) {
    const dow = d.getUTCDay();
    if (dow === 0 || dow === 6 || holidays.has(iso(d))) continue;
    if (++count === n) return iso(d);
  }
  throw new Error(`${year}-${month} has fewer than ${n} business days.`);
}

/** The due date of a deadline for a NIT (digits only, without the check digit). */
export function dueDate(deadline: Pick<Deadline, 'dueYear' | 'dueMonth'>, nit: string): string {
  return nthBusinessDay(deadline.dueYear, deadline.dueMonth, DUE_BUSINESS_DAY[nit[nit.length - 1]]);
}
