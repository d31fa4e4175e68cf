import { UVT } from './uvt.ts';

/**
 * Retención en la fuente a título de renta by concept (issue 30, item 12): what each concept
 * withholds, from which base, to which account it is owed (2365, the buyer's liability) or carried
 * (135515, the seller's tax credit), and the row of DIAN's Formulario 350 it is declared in.
 *
 * Legal sources, and what was read here (2026-11):
 * - UVT 2026 = COP 52,374: DIAN Resolución 000238 of 15 December 2025 (art. 868 E.T.; accounting/uvt.ts).
 *   A value in UVT becomes pesos multiplied by the year's UVT and "aproximado" by art. 868 inciso 6 E.T.,
 *   as each UVT resolution says: to the nearest thousand above $10,000 ({@link uvtToPesos}).
 * - Decreto 0572 of 28 May 2025 (Ministerio de Hacienda; in force for payments from 1 June 2025; the
 *   Consejo de Estado refused to suspend it provisionally on 22 August 2025, exp. 30229). Its art. 2
 *   substitutes art. 1.2.4.4.1 of Decreto 1625 de 2016 (DUR): «No se hará retención en la fuente sobre
 *   los pagos o abonos en cuenta por prestación de servicios cuya cuantía individual sea inferior a dos
 *   (2) UVT» (was 4 UVT). Its art. 6 substitutes literal i) of art. 1.2.4.9.1 DUR, lowering the minimum of
 *   "otros ingresos" — purchases, and the rent of real estate, which takes that article's exceptions
 *   (art. 1.2.4.10.6) — from 27 to 10 UVT. Rates were not changed by the decree for these concepts.
 * - Rates: purchases 2.5 % (art. 1.2.4.9.1 DUR, from Decreto 1512 de 1985: «dos punto cinco por ciento
 *   (2.5%) sobre el valor total del pago o abono en cuenta»), 3.5 % to sellers not obliged to file;
 *   services 4 % / 6 % (declarantes / no declarantes); honorarios and comisiones 11 % (art. 392 E.T.,
 *   art. 1.2.4.3.1 DUR), 10 % to natural persons with contracts under 3,300 UVT a year; rent of real
 *   estate 3.5 % (art. 1.2.4.10.6 DUR), of movables 4 % (art. 1.2.4.4.10 DUR); freight transport 1 %
 *   (art. 1.2.4.4.8 DUR). The rates are those of the 2025 and 2026 withholding tables published after the
 *   decree (gerencie.com, itscontable.com): the DUR articles themselves were not read here, so each
 *   concept says `verified: false` for its rate where only those tables were seen.
 * - Below the minimum a buyer may still withhold (art. 1.2.4.6 DUR, Decreto 2509 de 1985 art. 2: «los
 *   retenedores podrán optar por efectuar retenciones sobre pagos o abonos cuyas cuantías sean
 *   inferiores a las cuantías mínimas establecidas en los artículos 1.2.4.4.1 y 1.2.4.9.1»): a rate the
 *   caller states is applied whatever the base; only the table's own rate waits for the minimum.
 * - Formulario 350 (DIAN Resolución 000031 of 29 February 2024, periods from August 2024): its renta
 *   section has a row per concept (Honorarios, Comisiones, Servicios, Arrendamientos (muebles e
 *   inmuebles), Compras, …), each with the base subject to withholding and the amount withheld; since
 *   2024 each split between payments to legal and to natural persons — a split this product cannot
 *   make yet, because a party does not say which it is.
 * - Accounts: PUC 2365 sub-accounts (Decreto 2650 de 1993): 236515 Honorarios, 236520 Comisiones,
 *   236525 Servicios, 236530 Arrendamientos, 236540 Compras. The seller's 135515 (Retención en la
 *   fuente) has no legal sub-accounts: its auxiliaries here carry the 2365 suffix of the concept
 *   (13551525 servicios), as charts commonly open them.
 */

/** A row of the renta section of Formulario 350. */
export type Form350Row = 'honorarios' | 'comisiones' | 'servicios' | 'arrendamientos' | 'compras';

/** The Formulario 350 rows this product fills, in the form's order, with the form's labels. */
export const FORM_350_ROWS: readonly { row: Form350Row; label: string }[] = [
  { row: 'honorarios', label: 'Honorarios' },
  { row: 'comisiones', label: 'Comisiones' },
  { row: 'servicios', label: 'Servicios' },
  { row: 'arrendamientos', label: 'Arrendamientos (muebles e inmuebles)' },
  { row: 'compras', label: 'Compras' },
];

/** A minimum base in UVT from a date on (the newest first applies). */
interface BaseFrom { from: string; uvt: number }

/** One concept of retención en la fuente a título de renta. */
export interface WithholdingConcept {
  name: string;
  form_350: Form350Row;
  rate_ppm: number;
  /** Minimum base (cuantía mínima) in UVT by date: below it the table's rate is not applied. */
  bases: readonly BaseFrom[];
  /** The buyer's liability (PUC 2365 sub-account). */
  payable: { code: string; name: string };
  /** The seller's tax credit (auxiliary of PUC 135515). */
  receivable: { code: string; name: string };
  source: string;
  /** Whether the rate was read in the legal text itself (false: from published withholding tables). */
  verified: boolean;
}

// Decreto 0572 de 2025 applies to payments from 1 June 2025, the date every analysis read gives (Función
// Pública lists 28 May, its issue, as the date it entered into force; the decree's own closing article was not read).
const DECREE_572 = '2025-06-01';
const PAYABLE = (suffix: string, what: string) => ({ code: `2365${suffix}`, name: `Retención en la fuente por pagar — ${what}` });
const RECEIVABLE = (suffix: string, what: string) => ({ code: `135515${suffix}`, name: `Retención en la fuente por cobrar — ${what}` });
const SERVICES_BASE: readonly BaseFrom[] = [{ from: DECREE_572, uvt: 2 }, { from: '0000-01-01', uvt: 4 }];
const OTHER_INCOME_BASE: readonly BaseFrom[] = [{ from: DECREE_572, uvt: 10 }, { from: '0000-01-01', uvt: 27 }];
const NO_BASE: readonly BaseFrom[] = [{ from: '0000-01-01', uvt: 0 }];

/** The concepts, by key. */
export const WITHHOLDING_CONCEPTS = {
  honorarios: {
    name: 'Honorarios (personas jurídicas; personas naturales declarantes o con contratos de más de 3.300 UVT)', form_350: 'honorarios', rate_ppm: 110_000, bases: NO_BASE,
    payable: PAYABLE('15', 'honorarios'), receivable: RECEIVABLE('15', 'honorarios'), source: 'Art. 392 E.T.; art. 1.2.4.3.1 DUR 1625 de 2016', verified: false,
  },
  honorarios_10: {
    name: 'Honorarios (personas naturales con contratos de hasta 3.300 UVT en el año)', form_350: 'honorarios', rate_ppm: 100_000, bases: NO_BASE,
    payable: PAYABLE('15', 'honorarios'), receivable: RECEIVABLE('15', 'honorarios'), source: 'Art. 392 E.T.; art. 1.2.4.3.1 DUR 1625 de 2016', verified: false,
  },
  comisiones: {
    name: 'Comisiones (personas jurídicas; personas naturales declarantes o con contratos de más de 3.300 UVT)', form_350: 'comisiones', rate_ppm: 110_000, bases: NO_BASE,
    payable: PAYABLE('20', 'comisiones'), receivable: RECEIVABLE('20', 'comisiones'), source: 'Art. 392 E.T.; art. 1.2.4.3.1 DUR 1625 de 2016', verified: false,
  },
  servicios: {
    name: 'Servicios generales (declarantes)', form_350: 'servicios', rate_ppm: 40_000, bases: SERVICES_BASE,
    payable: PAYABLE('25', 'servicios'), receivable: RECEIVABLE('25', 'servicios'), source: 'Base: art. 1.2.4.4.1 DUR, sustituido por el art. 2 del Decreto 0572 de 2025 (2 UVT)', verified: false,
  },
  servicios_no_declarantes: {
    name: 'Servicios generales (no declarantes)', form_350: 'servicios', rate_ppm: 60_000, bases: SERVICES_BASE,
    payable: PAYABLE('25', 'servicios'), receivable: RECEIVABLE('25', 'servicios'), source: 'Base: art. 1.2.4.4.1 DUR, sustituido por el art. 2 del Decreto 0572 de 2025 (2 UVT)', verified: false,
  },
  transporte_carga: {
    name: 'Servicios de transporte nacional de carga', form_350: 'servicios', rate_ppm: 10_000, bases: SERVICES_BASE,
    payable: PAYABLE('25', 'servicios'), receivable: RECEIVABLE('25', 'servicios'), source: 'Tarifa: art. 1.2.4.4.8 DUR; base: art. 1.2.4.4.1 DUR (Decreto 0572 de 2025, art. 2)', verified: false,
  },
  arrendamiento_inmuebles: {
    name: 'Arrendamiento de bienes inmuebles', form_350: 'arrendamientos', rate_ppm: 35_000, bases: OTHER_INCOME_BASE,
    payable: PAYABLE('30', 'arrendamientos'), receivable: RECEIVABLE('30', 'arrendamientos'), source: 'Tarifa: art. 1.2.4.10.6 DUR; base: art. 1.2.4.9.1 lit. i) DUR (Decreto 0572 de 2025, art. 6)', verified: false,
  },
  arrendamiento_muebles: {
    name: 'Arrendamiento de bienes muebles', form_350: 'arrendamientos', rate_ppm: 40_000, bases: NO_BASE,
    payable: PAYABLE('30', 'arrendamientos'), receivable: RECEIVABLE('30', 'arrendamientos'), source: 'Art. 1.2.4.4.10 DUR', verified: false,
  },
  compras: {
    name: 'Compras generales (declarantes)', form_350: 'compras', rate_ppm: 25_000, bases: OTHER_INCOME_BASE,
    payable: PAYABLE('40', 'compras'), receivable: RECEIVABLE('40', 'compras'), source: 'Tarifa: art. 1.2.4.9.1 DUR (Decreto 1512 de 1985); base: su literal i), sustituido por el art. 6 del Decreto 0572 de 2025 (10 UVT)', verified: true,
  },
  compras_no_declarantes: {
    name: 'Compras generales (no declarantes)', form_350: 'compras', rate_ppm: 35_000, bases: OTHER_INCOME_BASE,
    payable: PAYABLE('40', 'compras'), receivable: RECEIVABLE('40', 'compras'), source: 'Base: art. 1.2.4.9.1 lit. i) DUR (Decreto 0572 de 2025, art. 6)', verified: false,
  },
} as const satisfies Record<string, WithholdingConcept>;

export type WithholdingConceptKey = keyof typeof WITHHOLDING_CONCEPTS;
export const WITHHOLDING_CONCEPT_KEYS = Object.keys(WITHHOLDING_CONCEPTS) as WithholdingConceptKey[];

/** JSON Schema of a concept key. */
export const WITHHOLDING_CONCEPT_SCHEMA = {
  enum: WITHHOLDING_CONCEPT_KEYS as unknown as readonly ['honorarios', 'honorarios_10', 'comisiones', 'servicios', 'servicios_no_declarantes', 'transporte_carga', 'arrendamiento_inmuebles', 'arrendamiento_muebles', 'compras', 'compras_no_declarantes'],
  description: 'Concept of retención en la fuente (decides its account, 2365xx or 135515xx, its Formulario 350 row and, when no rate is given, its 2026 rate and minimum base in UVT).',
} as const;

/** A concept by key; undefined for a key this table does not hold (a withholding stored before concepts). */
export function withholdingConcept(key: string | undefined | null): WithholdingConcept | undefined {
  return key && Object.hasOwn(WITHHOLDING_CONCEPTS, key) ? WITHHOLDING_CONCEPTS[key as WithholdingConceptKey] : undefined;
}

/**
 * Pesos of a value in UVT (art. 868 E.T. inciso 6, as every UVT resolution applies it): the product
 * rounded to the nearest thousand when above $10,000 (the published withholding tables do so: 10 UVT
 * of 2025 = $497,990 → $498,000). Smaller amounts (to the hundred above $100) are from memory of the
 * article, not re-read here; no minimum base of the table is that small.
 */
export function uvtToPesos(uvt: number, uvtValue: number): number {
  const pesos = uvt * uvtValue;
  if (pesos > 10_000) return Math.round(pesos / 1000) * 1000;
  if (pesos > 100) return Math.round(pesos / 100) * 100;
  return pesos;
}

/**
 * The UVT value of a date's year. A year DIAN has not fixed yet takes the newest one known: the
 * minimum comes out a little low, and withholding under the minimum is allowed (art. 1.2.4.6 DUR).
 */
export function uvtOf(date: string): { year: number; value: number } {
  const year = Number(date.slice(0, 4));
  if (UVT[year]) return { year, value: UVT[year].value };
  const known = Object.keys(UVT).map(Number).sort((a, b) => a - b);
  const use = known.filter((y) => y <= year).pop() ?? known[0];
  return { year: use, value: UVT[use].value };
}

/** The minimum base of a concept on a date, in minor units (centavos), and how it was reached. */
export function minimumBase(concept: WithholdingConcept, date: string): { uvt: number; uvt_value: number; amount: number } {
  const base = concept.bases.find((b) => date >= b.from)!;
  const { value } = uvtOf(date);
  return { uvt: base.uvt, uvt_value: value, amount: uvtToPesos(base.uvt, value) * 100 };
}

/** The withholding concept a bill line charged to a PUC account takes when it names none. */
export const BILL_ACCOUNT_CONCEPTS: Readonly<Record<string, WithholdingConceptKey>> = {
  5110: 'honorarios', 5120: 'arrendamiento_inmuebles', 5135: 'servicios', 5145: 'servicios', 5195: 'compras', 1435: 'compras', 1524: 'compras', 1528: 'compras',
};

/** Where a withholding of retención en la fuente is booked: its concept's account, or the one used before concepts existed. */
export function retefuenteAccount(concept: string | undefined, side: 'payable' | 'receivable', legacy: { code: string; name: string }): { code: string; name: string } {
  return withholdingConcept(concept)?.[side] ?? legacy;
}

/** Rollup counter names of withholdings: practiced on bills (`p`) or suffered on sales (`s`), by type and concept, base (`b`) and amount (`a`). */
export function withholdingCounter(side: 'p' | 's', type: string, concept: string | undefined, what: 'b' | 'a'): string {
  return `${side}|${type}|${concept ?? '-'}|${what}`;
}

/** The withholdings rollup namespace of a currency (one month document holds the month's Formulario 350 figures). */
export function withholdingCurrency(currency: string): string {
  return `wh:${currency}`;
}

/** The rollup increments of a document's withholdings, signed (a credit note takes them back). */
export function withholdingIncrements(side: 'p' | 's', withholdings: readonly { type: string; concept?: string; base: number; amount: number }[], sign: number): Record<string, number> {
  const inc: Record<string, number> = {};
  for (const w of withholdings) {
    for (const [what, v] of [['b', w.base], ['a', w.amount]] as const) {
      const key = withholdingCounter(side, w.type, w.concept, what);
      inc[key] = (inc[key] ?? 0) + sign * v;
    }
  }
  return inc;
}
