import {
  containsText, countSeries, CuadraError, type ListAnswer, listNewestFirst, localDate, metricQueryValidator, previousWindow, queryWindow, type RecordsQuery, windowProblem, type WindowQuery,
} from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { CONTRACT_TYPES, employees, type EmployeeDoc } from '../models/employee.ts';

/** The records sources and metrics this subgraph answers for `records.list` and `metrics.query` (DOMAIN.md). */
export const PAYROLL_SOURCES = ['employees'] as const;
export const PAYROLL_METRICS = ['payroll_employees'] as const;

export { validateRecordsQuery } from '@cuadra/shared';
export type { RecordsQuery } from '@cuadra/shared';
/** Throws `invalid_input` with a JSON Pointer when a metric query (§2.3) does not fit. */
export const validateMetricQuery = metricQueryValidator(PAYROLL_METRICS);
export interface MetricQuery extends WindowQuery { metric: string; limit?: number; target?: number }

/** The compact row of an employee: salary and identity document stay behind employees.get, as in the graph. */
function employeeRow(e: EmployeeDoc) {
  return { id: e._id, name: e.name, position: e.position, email: e.email, hire_date: e.hire_date, contract_type: e.contract_type, status: e.status };
}

/**
 * `records.list` for employees: `{source, rows, total?, next_cursor?}`, newest first, by cursor
 * (CONTRACT §9: `total` only without filters). `status` active or
 * terminated; `search` a case-insensitive substring of the name, position or e-mail. Employees
 * take no kind and no ref (specification §2.5).
 */
export async function payrollRecords(db: Connection, workspace: string, q: RecordsQuery): Promise<{ source: string } & ListAnswer<Record<string, unknown>>> {
  if (!(PAYROLL_SOURCES as readonly string[]).includes(q.source)) {
    throw new CuadraError('invalid_input', `The payroll subgraph does not answer the source "${q.source}".`, { field: '/source' });
  }
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'Employees take no kind.', { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'Employees take no ref.', { field: '/ref' });
  if (q.status && q.status !== 'active' && q.status !== 'terminated') {
    throw new CuadraError('invalid_input', `"${q.status}" is not a status of employees (active, terminated).`, { field: '/status' });
  }
  const text = q.search?.toLowerCase();
  const match = q.status || text
    ? (e: EmployeeDoc) => (!q.status || e.status === q.status) && (!text || e.name_lc.includes(text) || containsText(e.position, text) || containsText(e.email, text))
    : undefined;
  return { source: q.source, ...(await listNewestFirst<EmployeeDoc, Record<string, unknown>>(employees(db), { workspace, cursor: q.cursor, limit: q.limit ?? 8, match }, employeeRow)) };
}

/**
 * `metrics.query` for payroll_employees (unit count): the summary is the number of active
 * employees now; the series counts the employees hired in each bucket of the window (by hire
 * date, whatever their status since), with the comparison window's hires as `previous`; rows
 * are the active employees by contract type.
 */
export async function payrollMetric(db: Connection, workspace: string, q: MetricQuery, now = new Date()) {
  if (!(PAYROLL_METRICS as readonly string[]).includes(q.metric)) {
    throw new CuadraError('invalid_input', `The payroll subgraph does not answer the metric "${q.metric}".`, { field: '/metric' });
  }
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const today = localDate(now);
  const w = queryWindow(q, today);
  const earliest = q.compare ? previousWindow(w, q.compare).from : w.from;
  const model = employees(db);
  const [hired, active, byType] = await Promise.all([
    // Indexed on {workspace, hire_date}; a window is at most two years of hires.
    model.find({ workspace, hire_date: { $gte: earliest, $lte: w.to } }, { _id: 0, hire_date: 1 }).lean(),
    model.countDocuments({ workspace, status: 'active' }),
    Promise.all(CONTRACT_TYPES.map(async (contract_type) => ({ contract_type, count: await model.countDocuments({ workspace, status: 'active', contract_type }) }))),
  ]);
  const { series } = countSeries(hired.map((e) => e.hire_date), q, today);
  const summary: { value: number; target?: number } = { value: active };
  if (q.target !== undefined) summary.target = q.target;
  return { metric: q.metric, unit: 'count' as const, series, summary, rows: byType };
}
