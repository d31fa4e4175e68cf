import { CuadraError } from '@cuadra/shared';
import { ASSET_CLASS_KEYS } from './classes.ts';
import { DEPRECIATION_METHODS } from './depreciation.ts';

/** The depreciation terms every way of recording an asset takes (assets.create, assets.capitalize). */
export const TERMS_FIELDS = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  useful_life_months: { type: 'integer', minimum: 1, maximum: 1200, description: 'Useful life in the NIIF book, in months (NIIF para pymes §17.21). The fiscal book uses the same life unless Estatuto Tributario art. 137 caps its rate lower.' },
  residual_value: { type: 'integer', minimum: 0, maximum: 1e15, description: 'Residual value in cents (default 0): never depreciated in either book.' },
  method: { enum: DEPRECIATION_METHODS, description: 'NIIF method (default straight_line). declining_balance takes declining_rate_bps (default twice the straight-line rate); units_of_production takes total_units and the usage recorded per month (assets.record_usage).' },
  declining_rate_bps: { type: 'integer', minimum: 1, maximum: 10000, description: 'Annual rate of the declining-balance method, in basis points of the book value.' },
  total_units: { type: 'integer', minimum: 1, maximum: 1e12, description: 'Units the asset is expected to produce over its life (units of production).' },
  in_service_date: { type: 'string', format: 'date', description: 'When it became available for use (default the acquisition date). Depreciation starts that month when it is the 1st, else the next month: whole months only.' },
} as const;

/** The class field. */
export const CLASS_FIELD = { enum: ASSET_CLASS_KEYS, description: 'buildings (1516, fiscal cap 2.22 %/year), machinery (1520, 10 %), office_equipment (1524 — muebles y enseres, 10 %), computers (1528, 20 %), vehicles (1540, 10 %): Estatuto Tributario art. 137.' } as const;

/** The terms as stored, with their defaults, refusing a method without what it needs. */
export function termsOf(input: { useful_life_months: number; residual_value?: number; method?: (typeof DEPRECIATION_METHODS)[number]; declining_rate_bps?: number; total_units?: number }, cost: number) {
  const method = input.method ?? 'straight_line';
  const residual = input.residual_value ?? 0;
  if (residual > cost) throw new CuadraError('invalid_input', `The residual value (${residual}) exceeds the cost (${cost}).`, { field: '/residual_value' });
  if (method === 'units_of_production' && input.total_units === undefined) throw new CuadraError('invalid_input', 'Units of production needs total_units.', { field: '/total_units' });
  // Double-declining by default: twice the straight-line annual rate (24 / life months), at most 100 %.
  const rate = method === 'declining_balance' ? input.declining_rate_bps ?? Math.min(10000, Math.round(240000 / input.useful_life_months)) : null;
  return { residual_value: residual, useful_life_months: input.useful_life_months, method, declining_rate_bps: rate, total_units: method === 'units_of_production' ? input.total_units! : null };
}
