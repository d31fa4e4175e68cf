import { countSeries, CuadraError, localDate, type MetricReader, previousWindow, queryWindow, windowProblem } from '@cuadra/shared';
import { CONTRACT_TYPES, employees } from './model.ts';

/**
 * `metrics.query` for payroll_employees (unit count): the summary is the number of active
 * employees now; the series counts the employees hired in each bucket of the window (by hire
 * date, whatever their status since), with the comparison window's hires as `previous`; rows
 * are the active employees by contract type.
 */
export const payrollEmployeesMetric: MetricReader = async (q, { db, workspace, now }) => {
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
};
