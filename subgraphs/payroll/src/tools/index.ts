import { create as createEmployee } from './employees/create.ts';
import { get as getEmployee } from './employees/get.ts';
import { list as listEmployees } from './employees/list.ts';

/** Every tool the payroll subgraph owns. */
export const tools = [createEmployee, getEmployee, listEmployees];

/** Tool modules the payroll subgraph owns (DOMAIN.md). */
export const modules = ['employees', 'payroll'] as const;
