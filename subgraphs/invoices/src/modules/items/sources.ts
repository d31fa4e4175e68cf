import { defineSource } from '@cuadra/shared';
import { itemMatches, items, type ItemDoc } from './model.ts';

/** records.list `items`: kind product or service, status active or archived, search the name (as items.list). */
export const itemsSource = defineSource<ItemDoc>({
  model: items,
  search: itemMatches,
  kinds: { product: { kind: 'product' }, service: { kind: 'service' } },
  statuses: ['active', 'archived'],
  row: (i) => ({ id: i._id, kind: i.kind, name: i.name, sku: i.sku, unit: i.unit, price: i.price, currency: i.currency, tax_rate_ppm: i.tax_rate_ppm, status: i.status }),
});
