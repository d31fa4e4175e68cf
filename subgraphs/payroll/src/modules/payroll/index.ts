import { defineModule } from '@cuadra/shared';
import { parametersSource } from './sources.ts';
import { parameters } from './tools/parameters.ts';

/**
 * Payroll proper (DOMAIN.md, Colombian payroll): the parameters by year and the calculation
 * engine (calc.ts) that runs, payslips and the electronic payroll document will build on.
 */
export const payrollModule = defineModule({
  name: 'payroll',
  tools: [parameters],
  reads: { sources: { payroll_parameters: parametersSource } },
});
