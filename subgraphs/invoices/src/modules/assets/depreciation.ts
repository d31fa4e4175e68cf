import { ASSET_CLASSES, type AssetClass } from './classes.ts';

/** How the NIIF book spreads an asset's depreciable amount (NIIF para pymes §17.22). */
export const DEPRECIATION_METHODS = ['straight_line', 'declining_balance', 'units_of_production'] as const;
export type DepreciationMethod = (typeof DEPRECIATION_METHODS)[number];

/** What the depreciation of a month depends on: the asset's terms and where its books stand. */
export interface DepreciationTerms {
  class: AssetClass;
  cost: number;
  residual_value: number;
  useful_life_months: number;
  method: DepreciationMethod;
  /** Declining balance: the annual rate in basis points. */
  declining_rate_bps: number | null;
  /** Units of production: the units the asset is expected to produce over its life. */
  total_units: number | null;
}

/** The first month an asset depreciates: its in-service month when in service on the 1st, else the next (whole months only). */
export function firstDepreciationMonth(inServiceDate: string): string {
  return inServiceDate.endsWith('-01') ? inServiceDate.slice(0, 7) : nextMonth(inServiceDate.slice(0, 7));
}

/** `YYYY-MM` one month later. */
export function nextMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

/** The last day of a `YYYY-MM` month. */
export function monthEnd(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return `${month}-${String(new Date(Date.UTC(y, m, 0)).getUTCDate()).padStart(2, '0')}`;
}

/** The depreciable amount (cost − residual value), the most either book takes. */
export function depreciableBase(t: Pick<DepreciationTerms, 'cost' | 'residual_value'>): number {
  return t.cost - t.residual_value;
}

function floorDiv(a: bigint, b: bigint): number {
  return Number(a / b);
}

/**
 * The NIIF depreciation of month `k` (1 = the first month of service), given what the book holds
 * before it (`accumulated`) and, for units of production, the units produced up to and including the month.
 * Exact in integer cents:
 * - straight line: the accumulated amount after month k is ⌊base × k / life⌋, so rounding never
 *   drifts and the last month of the life completes the base;
 * - declining balance: (cost − accumulated) × rate / 12, rounded half up, never below the residual
 *   value; the last month of the life takes what is left down to the residual value;
 * - units of production: accumulated = ⌊base × units to date / total units⌋, at most the base.
 */
export function niifMonth(t: DepreciationTerms, k: number, accumulated: number, unitsToDate = 0): number {
  const base = depreciableBase(t);
  const left = base - accumulated;
  if (left <= 0) return 0;
  if (t.method === 'straight_line') {
    return Math.min(left, floorDiv(BigInt(base) * BigInt(Math.min(k, t.useful_life_months)), BigInt(t.useful_life_months)) - accumulated);
  }
  if (t.method === 'units_of_production') {
    const total = BigInt(t.total_units!);
    const units = BigInt(Math.min(unitsToDate, t.total_units!));
    return Math.max(0, Math.min(left, floorDiv(BigInt(base) * units, total) - accumulated));
  }
  if (k >= t.useful_life_months) return left;
  const bookValue = BigInt(t.cost - accumulated);
  const month = floorDiv(bookValue * BigInt(t.declining_rate_bps!) + 60_000n, 120_000n);
  return Math.min(left, month);
}

/**
 * The fiscal depreciation of month `k`: straight line at the annual rate the NIIF life implies
 * (12 / life months), capped at the class's ET art. 137 rate; the accumulated amount after month
 * k is ⌊base × k × min(cap × life, 120000) / (120000 × life)⌋, at most the base.
 */
export function fiscalMonth(t: DepreciationTerms, k: number, accumulated: number): number {
  const base = BigInt(depreciableBase(t));
  const life = BigInt(t.useful_life_months);
  const rate = BigInt(Math.min(ASSET_CLASSES[t.class].fiscal_cap_bps * t.useful_life_months, 120_000));
  const target = Math.min(Number(base), floorDiv(base * BigInt(k) * rate, 120_000n * life));
  return Math.max(0, target - accumulated);
}
