import { defineGetTool } from '@cuadra/shared';
import { ITEM_VIEW_SCHEMA, items, itemView, type ItemDoc } from '../model.ts';

/** Reads one catalog item. */
export const get = defineGetTool<ItemDoc>({
  name: 'items.get',
  description: 'Get one catalog item (product or service) by id: price, VAT rate, unit, status.',
  model: items,
  view: itemView,
  viewSchema: ITEM_VIEW_SCHEMA,
  key: 'item',
  what: 'item',
});
