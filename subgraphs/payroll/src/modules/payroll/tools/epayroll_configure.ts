import { CuadraError, defineTool } from '@cuadra/shared';
import { nitCheckDigit } from '@cuadra/shared/dian';
import { epayrollSettings, requireEpayrollSealer, sealSoftwarePin } from '../epayroll.ts';

const VIEW = {
  type: 'object', additionalProperties: false,
  required: ['nit', 'dv', 'company_name', 'department', 'municipality', 'address', 'software_id', 'prefix', 'environment', 'payment_method', 'next_number', 'software_pin_set'],
  properties: {
    nit: { type: 'string' }, dv: { type: 'integer' }, company_name: { type: 'string' }, department: { type: 'string' }, municipality: { type: 'string' },
    address: { type: 'string' }, software_id: { type: 'string' }, prefix: { type: 'string' }, environment: { enum: ['1', '2'] },
    payment_method: { type: 'string' }, next_number: { type: 'integer' }, software_pin_set: { type: 'boolean' },
  },
} as const;

/**
 * The employer's registration for electronic payroll: what every Nómina Individual carries
 * (NIT, name, address) and the software's id and PIN that make its SoftwareSC and CUNE. The PIN
 * is never shown back.
 */
export const epayrollConfigure = defineTool({
  name: 'payroll.epayroll_configure',
  description: 'Set the employer\'s electronic payroll registration (DIAN Resolución 000013 de 2021): NIT (without check digit; the digit is computed), company name, DIVIPOLA department (2 digits) and municipality (5 digits) codes, address, the software id and PIN DIAN assigned, the numbering prefix, environment 2 (habilitación, the default) or 1 (producción), and the payment method code (default 42, consignación bancaria). The PIN is never returned.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false,
    required: ['nit', 'company_name', 'department', 'municipality', 'address', 'software_id', 'software_pin', 'prefix'],
    properties: {
      nit: { type: 'string', pattern: '^[0-9]{5,15}$' },
      company_name: { type: 'string', minLength: 1, maxLength: 450 },
      department: { type: 'string', pattern: '^[0-9]{2}$' },
      municipality: { type: 'string', pattern: '^[0-9]{5}$' },
      address: { type: 'string', minLength: 1, maxLength: 200 },
      software_id: { type: 'string', minLength: 1, maxLength: 100 },
      // A secret (CONTRACT §10): sealed in a held approval, never shown.
      software_pin: { type: 'string', minLength: 1, maxLength: 100, writeOnly: true },
      prefix: { type: 'string', pattern: '^[A-Z0-9]{1,10}$' },
      environment: { enum: ['1', '2'], default: '2' },
      payment_method: { type: 'string', pattern: '^[0-9A-Z]{1,3}$', default: '42' },
    },
  } as const,
  output: { type: 'object', additionalProperties: false, required: ['settings'], properties: { settings: VIEW } } as const,
  async handler(input, ctx) {
    if (!input.municipality.startsWith(input.department)) {
      throw new CuadraError('invalid_input', `The municipality code ${input.municipality} is not in department ${input.department} (DIVIPOLA codes begin with their department's).`, { field: '/municipality' });
    }
    // The PIN is kept only sealed (CONTRACT §9): without a sealing key nothing is stored.
    const sealer = requireEpayrollSealer();
    const s = await epayrollSettings(ctx.db).findOneAndUpdate(
      { _id: ctx.workspace },
      {
        $set: {
          nit: input.nit, dv: nitCheckDigit(input.nit), company_name: input.company_name.trim(), department: input.department, municipality: input.municipality,
          address: input.address.trim(), software_id: input.software_id, software_pin_sealed: sealSoftwarePin(ctx.workspace, input.software_pin, sealer), prefix: input.prefix,
          environment: input.environment ?? '2', payment_method: input.payment_method ?? '42', updated_at: ctx.now,
        },
        $unset: { software_pin: '' },
        $setOnInsert: { next_number: 1, created_at: ctx.now },
      },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    return {
      settings: {
        nit: s!.nit, dv: s!.dv, company_name: s!.company_name, department: s!.department, municipality: s!.municipality, address: s!.address,
        software_id: s!.software_id, prefix: s!.prefix, environment: s!.environment, payment_method: s!.payment_method, next_number: s!.next_number, software_pin_set: true,
      },
    };
  },
});
