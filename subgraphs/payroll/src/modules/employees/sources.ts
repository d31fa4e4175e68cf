import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { employeeRowMatches, employees, type EmployeeDoc } from './model.ts';

/** The compact row of an employee: salary and identity document stay behind employees.get, as in the graph. */
function employeeRow(e: EmployeeDoc) {
  return { id: e._id, name: e.name, position: e.position, email: e.email, hire_date: e.hire_date, contract_type: e.contract_type, status: e.status };
}

const page = defineSource<EmployeeDoc>({
  model: employees,
  search: employeeRowMatches,
  statuses: ['active', 'terminated'],
  row: employeeRow,
});

/**
 * records.list `employees`: newest first, by cursor (CONTRACT §9: `total` only without filters);
 * status active or terminated; search a case-insensitive substring of the name, position or
 * e-mail. Employees take no kind and no ref (specification §2.5): both are refused rather than
 * ignored, so a canvas block asking for them learns it at once.
 */
export const employeesSource: SourceReader = (q, ctx) => {
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'Employees take no ref.', { field: '/ref' });
  return page(q, ctx);
};
