import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { documentToday } from '../../../lib/document-dates.ts';
import { findRental, RENTAL_VIEW_SCHEMA, rentalView } from '../model.ts';
import { invoicePeriod, localDateOf } from '../ops.ts';

/**
 * Invoices a rental's periods that have begun (billed in advance: a period is invoiced from its
 * first day), each once, through the invoices' own path.
 */
export const invoice = defineTool({
  name: 'rentals.invoice',
  description: 'Invoice the periods of a rental that have begun and are not invoiced yet (a monthly rental: one invoice per month, on its first day; hours and days: one invoice for the whole rental). Each period is invoiced once; the invoices are ordinary invoices (drafts unless the rental posts them).',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['rental', 'invoiced'],
    properties: { rental: RENTAL_VIEW_SCHEMA, invoiced: { type: 'array', items: { type: 'string' } } },
  },
  async handler(input, ctx) {
    const r = await findRental(ctx, input.id);
    if (r.status === 'cancelled') throw new CuadraError('conflict', `Rental ${r._id} is cancelled.`);
    const today = documentToday(ctx);
    const invoiced: string[] = [];
    for (const p of r.periods) {
      if (p.invoice_id || localDateOf(ctx, p.from) > today) continue;
      invoiced.push(await invoicePeriod(ctx, r, p));
    }
    return { rental: rentalView(await findRental(ctx, input.id)), invoiced };
  },
});
