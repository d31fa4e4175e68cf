import { defineGetTool } from '@cuadra/shared';
import { EMPLOYEE_VIEW_SCHEMA, employees, employeeView, type EmployeeDoc } from '../model.ts';

/** Reads one employee of the caller's workspace. */
export const get = defineGetTool<EmployeeDoc>({
  name: 'employees.get',
  description: 'Get one employee by id, with identity document, position, hire date, salary, contract type and ARL class.',
  model: employees,
  view: employeeView,
  viewSchema: EMPLOYEE_VIEW_SCHEMA,
  key: 'employee',
  what: 'employee',
});
