import { defineGetTool } from '@cuadra/shared';
import { RENTAL_VIEW_SCHEMA, rentals, rentalView, type RentalDoc } from '../model.ts';

/** Reads one rental. */
export const get = defineGetTool<RentalDoc>({
  name: 'rentals.get',
  description: 'Get one rental by id: what is rented, to whom, when, its periods and their invoices, deposit, delivery and return.',
  model: rentals, view: rentalView, key: 'rental', what: 'rental', viewSchema: RENTAL_VIEW_SCHEMA,
});
