import { defineModule } from '@cuadra/shared';
import { items } from './model.ts';
import { itemsSource } from './sources.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';

/** The catalog of products and services. */
export const itemsModule = defineModule({
  name: 'items',
  tools: [create, get, list, update, archive],
  models: [items],
  listed: [{ model: items }],
  reads: { sources: { items: itemsSource } },
  readGuards: { 'Query.items': 'items', Item: 'items' },
});
