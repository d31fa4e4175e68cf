/**
 * Colombian payroll parameters by year (DOMAIN.md, Colombian payroll). Kept in code, one row a
 * year, until the `payroll_parameters` records exist; each row names its legal source so a
 * reviewer can check the figure against the decree.
 */

/** One year's legal minimum monthly wage (salario mínimo mensual legal vigente, SMMLV). */
export interface MinimumWage {
  year: number;
  /** First day the value applies (YYYY-MM-DD). */
  effective_from: string;
  /** Integer minor units (centavos) of `currency`. */
  amount: number;
  currency: 'COP';
  /** The decree that fixes it. */
  source: string;
}

/** Minimum monthly wages, oldest first. */
export const MINIMUM_WAGES: readonly MinimumWage[] = [
  { year: 2025, effective_from: '2025-01-01', amount: 142_350_000, currency: 'COP', source: 'Decreto 1572 de 2024' },
  {
    year: 2026,
    effective_from: '2026-01-01',
    amount: 175_090_500,
    currency: 'COP',
    // The first decree was provisionally suspended by the Consejo de Estado (13 Feb 2026); the
    // replacement kept the same value, so the amount has applied unchanged since 1 January.
    source: 'Decreto 1469 de 2025, value kept by Decreto 0159 de 2026',
  },
];

/**
 * The minimum wage of the year a date falls in (YYYY-MM-DD); for a year the table does not
 * hold, the latest one — the figure in force now is the safe floor for an unknown year.
 */
export function minimumWageFor(date: string): MinimumWage {
  const year = Number(date.slice(0, 4));
  return MINIMUM_WAGES.find((w) => w.year === year) ?? MINIMUM_WAGES[MINIMUM_WAGES.length - 1];
}
