import { defineTool } from '@cuadra/shared';
import { workspaceCurrency } from '../../../lib/settings.ts';
import { MONTH_WITHHOLDINGS_SCHEMA, monthWithholdings } from '../withholdings.ts';

/** The month's withholdings by concept and its Formulario 350 figures. */
export const withholdings = defineTool({
  name: 'tax.withholdings',
  description: 'The withholdings of a month (YYYY-MM) by type and concept: practiced on vendors\' bills (retención en la fuente by concept — honorarios, servicios, arrendamientos, compras… —, ReteIVA, ReteICA) and suffered on sales, each with its base, amount and account; and the figures of that month\'s Formulario 350: per renta row (Honorarios, Comisiones, Servicios, Arrendamientos, Compras) the base and the amount withheld, exact and as declared (nearest thousand pesos), ReteIVA practiced and the totals, beside what the journal booked to each row\'s 2365 accounts. Amounts in cents of the workspace\'s currency.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['month'],
    properties: { month: { type: 'string', pattern: '^20[0-9]{2}-(0[1-9]|1[0-2])$', description: 'The month declared, YYYY-MM.' } },
  },
  output: MONTH_WITHHOLDINGS_SCHEMA,
  async handler(input, ctx) {
    return monthWithholdings(ctx.db, ctx.workspace, await workspaceCurrency(ctx.db, ctx.workspace), input.month);
  },
});
