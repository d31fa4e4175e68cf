import { defineModule } from '@cuadra/shared';
import { employees } from '../models/employee.ts';
import { create } from '../tools/employees/create.ts';
import { get } from '../tools/employees/get.ts';
import { list } from '../tools/employees/list.ts';

/** The people on the payroll. */
export const employeesModule = defineModule({
  name: 'employees',
  tools: [create, get, list],
  models: [employees],
  listed: [{ model: employees }],
  reads: {
    sources: { employees: { field: 'payrollRecords', module: 'employees' } },
    metrics: { payroll_employees: { field: 'payrollMetric', module: 'employees' } },
  },
  readGuards: { 'Query.employee': 'employees', 'Query.employees': 'employees', 'Query.payrollRecords': 'employees', 'Query.payrollMetric': 'employees', Employee: 'employees' },
});
