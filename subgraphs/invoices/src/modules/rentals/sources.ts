import { defineSource } from '@cuadra/shared';
import { RENTAL_STATUSES, rentalMatches, rentals, type RentalDoc } from './model.ts';

/** records.list `rentals`: status reserved, delivered, returned or cancelled; kind item or asset. */
export const rentalsSource = defineSource<RentalDoc>({
  model: rentals,
  search: rentalMatches,
  statuses: RENTAL_STATUSES,
  kinds: { item: (r: RentalDoc) => r.resource.kind === 'item', asset: (r: RentalDoc) => r.resource.kind === 'asset' },
  row: (r) => ({
    id: r._id, status: r.status, resource_kind: r.resource.kind, resource_id: r.resource.id, resource_name: r.resource.name, customer_id: r.customer_id, customer_name: r.customer.name,
    currency: r.currency, unit: r.unit, rate: r.rate, start: r.start, end: r.end, total: r.periods.reduce((s, p) => s + p.amount, 0),
    invoiced: r.periods.filter((p) => p.invoice_id).reduce((s, p) => s + p.amount, 0), deposit: r.deposit,
  }),
});
