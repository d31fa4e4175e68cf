import { defineListTool, searchTerm } from '@cuadra/shared';
import { EMPLOYEE_VIEW_SCHEMA, employees, employeeView, type EmployeeDoc } from '../../models/employee.ts';

/** Lists the workspace's employees, newest first. */
export const list = defineListTool<EmployeeDoc, { status?: EmployeeDoc['status']; search?: string; limit?: number; cursor?: string }>({
  name: 'employees.list',
  description: 'List employees of the workspace, newest first (most recently added); filter by status (active, terminated) or search by name or document number.',
  model: employees,
  view: employeeView,
  viewSchema: EMPLOYEE_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'terminated'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    // Document numbers are stored without separators, so they are searched the same way.
    const number = text?.replace(/[.\s-]/g, '').toUpperCase();
    return status || text ? (e) => (!status || e.status === status) && (!text || e.name_lc.includes(text) || (!!number && e.document.number.includes(number))) : undefined;
  },
});
