import { defineTool } from '@cuadra/shared';
import { PARAMETER_GROUPS, PARAMETER_ROW_SCHEMA, PARAMETER_STATUSES, parameterRows, parameterYear } from '../model.ts';
import { PARAMETER_YEARS } from '../parameters.ts';

/** The payroll parameters of a year, as the `payroll_parameters` records source answers them. */
export const parameters = defineTool({
  name: 'payroll.parameters',
  description: 'Colombian payroll parameters of a year (default the current one): minimum wage, transport allowance, contribution and provision rates, surcharges, weekly hours and the monthly hour divisor — one row per value with its effective date, legal source and whether it was verified against a public text. A value that changes during the year (the Sunday surcharge on 1 July, the weekly hours on 15 July) has one row per step.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      year: { type: 'integer', minimum: PARAMETER_YEARS.first, maximum: PARAMETER_YEARS.last },
      kind: { type: 'string', enum: PARAMETER_GROUPS },
      status: { type: 'string', enum: PARAMETER_STATUSES },
      search: { type: 'string', minLength: 1, maxLength: 200 },
    },
  } as const,
  output: {
    type: 'object',
    additionalProperties: false,
    required: ['year', 'parameters'],
    properties: { year: { type: 'integer' }, parameters: { type: 'array', items: PARAMETER_ROW_SCHEMA } },
  },
  async handler(input, ctx) {
    const year = parameterYear(input.year, ctx.now, '/year');
    return { year, parameters: parameterRows(year, input) };
  },
});
