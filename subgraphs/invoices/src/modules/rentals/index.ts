import { defineModule } from '@cuadra/shared';
import { rentalsMaintenance } from './maintenance.ts';
import { rentalCalendars, rentals, rentalWithdrawals } from './model.ts';
import { RENTAL_SOURCES } from './ops.ts';
import { rentalsSource } from './sources.ts';
import { availability } from './tools/availability.ts';
import { cancel } from './tools/cancel.ts';
import { create } from './tools/create.ts';
import { deliver } from './tools/deliver.ts';
import { get } from './tools/get.ts';
import { invoice } from './tools/invoice.ts';
import { list } from './tools/list.ts';
import { returnRental } from './tools/return.ts';

/**
 * Rentals (issue 38): an item or a fixed asset rented by the hour, day or month, never to two
 * customers at once; deposit received on delivery and refunded on return; damages and each
 * period invoiced through the invoices' own path.
 */
export const rentalsModule = defineModule({
  name: 'rentals',
  tools: [create, availability, deliver, returnRental, cancel, invoice, get, list],
  models: [rentals, rentalCalendars, rentalWithdrawals],
  listed: [{ model: rentals }],
  reads: { sources: { rentals: rentalsSource } },
  journalSources: Object.values(RENTAL_SOURCES),
  maintenance: rentalsMaintenance,
});
