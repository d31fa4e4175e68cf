import { defineTool } from '@cuadra/shared';
import { nitCheckDigit } from '@cuadra/shared/dian';
import { EMPLOYER_VIEW_SCHEMA, epayrollSettings } from '../epayroll.ts';

/**
 * The employer's name and NIT, which every payslip carries. The same record electronic payroll
 * registers (payroll.epayroll_configure sets them too, with the rest of the habilitación), so the
 * payslip and the Nómina Individual name the same employer.
 */
export const employerConfigure = defineTool({
  name: 'payroll.employer_configure',
  description: 'Set the employer\'s legal name (razón social) and NIT (digits, without the check digit, which is computed) that payslips show. payroll.epayroll_configure sets the same two fields, with the rest of the electronic payroll registration; either is enough for payslips.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['company_name', 'nit'],
    properties: {
      company_name: { type: 'string', minLength: 1, maxLength: 450 },
      nit: { type: 'string', pattern: '^[0-9]{5,15}$' },
    },
  } as const,
  output: { type: 'object', additionalProperties: false, required: ['employer'], properties: { employer: EMPLOYER_VIEW_SCHEMA } } as const,
  async handler(input, ctx) {
    const company = input.company_name.trim();
    const s = await epayrollSettings(ctx.db).findOneAndUpdate(
      { _id: ctx.workspace },
      { $set: { company_name: company, nit: input.nit, dv: nitCheckDigit(input.nit), updated_at: ctx.now }, $setOnInsert: { next_number: 1, created_at: ctx.now } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    return { employer: { company_name: s!.company_name, nit: s!.nit, dv: s!.dv } };
  },
});
