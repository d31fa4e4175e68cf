import { defineModule } from '@cuadra/shared';
import { payrollEmployeesMetric } from './metrics.ts';
import { employees } from './model.ts';
import { employeesSource } from './sources.ts';
import { changeSalary } from './tools/change_salary.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { terminate } from './tools/terminate.ts';
import { update } from './tools/update.ts';

/** The people on the payroll. */
export const employeesModule = defineModule({
  name: 'employees',
  tools: [create, get, list, update, changeSalary, terminate],
  models: [employees],
  listed: [{ model: employees }],
  reads: {
    sources: { employees: employeesSource },
    metrics: { payroll_employees: payrollEmployeesMetric },
  },
  readGuards: { 'Query.employee': 'employees', 'Query.employees': 'employees', Employee: 'employees' },
});
