import { defineListTool, searchTerm } from '@cuadra/shared';
import { EMPLOYEE_VIEW_SCHEMA, employeeMatches, employees, employeeView } from '../model.ts';

/** Lists the workspace's employees, newest first. */
export const list = defineListTool({
  name: 'employees.list',
  description: 'List employees of the workspace, newest first (most recently added); filter by status (active, terminated) or search by name or document number.',
  model: employees,
  view: employeeView,
  viewSchema: EMPLOYEE_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'terminated'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    return status || text ? (e) => (!status || e.status === status) && (!text || employeeMatches(e, text)) : undefined;
  },
});
