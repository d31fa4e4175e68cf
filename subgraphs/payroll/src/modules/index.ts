import { fromModules } from '@cuadra/shared';
import { employeesModule } from './employees/index.ts';
import { payrollModule } from './payroll/index.ts';

/** The payroll subgraph: its built modules, then the modules DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('payroll', [employeesModule, payrollModule]);
