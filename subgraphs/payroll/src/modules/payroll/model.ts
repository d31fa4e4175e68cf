import { CuadraError, localDate } from '@cuadra/shared';
import { PARAMETER_KEYS, PARAMETER_YEARS, stepsForYear, type ParameterKey, type ParameterStep } from './parameters.ts';

/** Groups of parameters: the `kind` of a `payroll_parameters` row. */
export const PARAMETER_GROUPS = ['wages', 'employee', 'employer', 'bases', 'provisions', 'termination', 'hours', 'sick_leave'] as const;
export type ParameterGroup = (typeof PARAMETER_GROUPS)[number];

/** Whether a figure was checked against a public text: the `status` of a row. */
export const PARAMETER_STATUSES = ['verified', 'unverified'] as const;

function groupOf(key: ParameterKey): ParameterGroup {
  if (key === 'minimum_wage' || key.startsWith('transport_')) return 'wages';
  if (key.endsWith('_employee') || key.startsWith('solidarity_')) return 'employee';
  if (key.endsWith('_employer') || key.startsWith('arl_') || key === 'family_fund' || key === 'icbf' || key === 'sena' || key === 'exemption_114_1_below') return 'employer';
  if (key.startsWith('contribution_') || key === 'non_salary_cap' || key === 'ibc_rounding') return 'bases';
  if (key.startsWith('sick_leave')) return 'sick_leave';
  if (key.startsWith('dismissal_')) return 'termination';
  if (key.startsWith('severance') || key.endsWith('_days_per_year')) return 'provisions';
  return 'hours';
}

/** One parameter step as `payroll_parameters` and `payroll.parameters` show it. */
export function parameterRow(s: ParameterStep) {
  return {
    id: `${s.key}@${s.effective_from}`,
    key: s.key,
    kind: groupOf(s.key),
    value: s.value,
    unit: s.unit,
    effective_from: s.effective_from,
    source: s.source,
    status: s.verified ? 'verified' as const : 'unverified' as const,
    evidence: s.evidence,
    in_force_since: s.in_force_since ?? null,
    note: s.note ?? null,
  };
}
export type ParameterRow = ReturnType<typeof parameterRow>;

/** The JSON Schema of a row (the tool's output). */
export const PARAMETER_ROW_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'key', 'kind', 'value', 'unit', 'effective_from', 'source', 'status', 'evidence', 'in_force_since', 'note'],
  properties: {
    id: { type: 'string' },
    key: { type: 'string', enum: PARAMETER_KEYS },
    kind: { type: 'string', enum: PARAMETER_GROUPS },
    value: { type: 'number' },
    unit: { type: 'string' },
    effective_from: { type: 'string' },
    source: { type: 'string' },
    status: { type: 'string', enum: PARAMETER_STATUSES },
    evidence: { type: 'string' },
    in_force_since: { type: ['string', 'null'] },
    note: { type: ['string', 'null'] },
  },
} as const;

/** The year a `ref` names, or the current year; `invalid_input` at `field` outside the table. */
export function parameterYear(ref: string | number | undefined, now: Date, field: string): number {
  const year = ref === undefined ? Number(localDate(now).slice(0, 4)) : typeof ref === 'number' ? ref : /^\d{4}$/.test(ref) ? Number(ref) : NaN;
  if (!Number.isInteger(year) || year < PARAMETER_YEARS.first || year > PARAMETER_YEARS.last) {
    throw new CuadraError('invalid_input', `Payroll parameters are kept for the years ${PARAMETER_YEARS.first}–${PARAMETER_YEARS.last}${ref === undefined ? ` (the current year is ${year}; name one with ref)` : ''}.`, { field });
  }
  return year;
}

/** The filters shared by the records source and the tool. */
export interface ParameterFilter { kind?: string; status?: string; search?: string }

/** The rows of a year that pass the filters; an unknown kind or status is `invalid_input` at /kind or /status. */
export function parameterRows(year: number, filter: ParameterFilter): ParameterRow[] {
  if (filter.kind !== undefined && !(PARAMETER_GROUPS as readonly string[]).includes(filter.kind)) {
    throw new CuadraError('invalid_input', `"${filter.kind}" is not a kind of payroll_parameters (${PARAMETER_GROUPS.join(', ')}).`, { field: '/kind' });
  }
  if (filter.status !== undefined && !(PARAMETER_STATUSES as readonly string[]).includes(filter.status)) {
    throw new CuadraError('invalid_input', `"${filter.status}" is not a status of payroll_parameters (${PARAMETER_STATUSES.join(', ')}).`, { field: '/status' });
  }
  const needle = filter.search?.toLowerCase();
  return stepsForYear(year).map(parameterRow).filter((r) =>
    (!filter.kind || r.kind === filter.kind)
    && (!filter.status || r.status === filter.status)
    && (!needle || r.key.includes(needle) || r.source.toLowerCase().includes(needle)));
}
