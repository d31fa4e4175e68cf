import { defineModule } from '@cuadra/shared';
import { items } from '../models/item.ts';
import { archive } from '../tools/items/archive.ts';
import { create } from '../tools/items/create.ts';
import { get } from '../tools/items/get.ts';
import { list } from '../tools/items/list.ts';
import { update } from '../tools/items/update.ts';

/** The catalog of products and services. */
export const itemsModule = defineModule({
  name: 'items',
  tools: [create, get, list, update, archive],
  models: [items],
  listed: [{ model: items }],
  reads: { sources: { items: { field: 'invoicesRecords', module: 'items' } } },
  readGuards: { 'Query.items': 'items', Item: 'items' },
});
