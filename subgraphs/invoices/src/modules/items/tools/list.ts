import { defineListTool, searchTerm } from '@cuadra/shared';
import { ITEM_VIEW_SCHEMA, items, itemView, type ItemDoc } from '../model.ts';

/** Lists the catalog, newest first. */
export const list = defineListTool<ItemDoc, { search?: string; kind?: ItemDoc['kind']; status?: ItemDoc['status']; limit?: number; cursor?: string }>({
  name: 'items.list',
  description: 'List catalog items (products and services), newest first; filter by kind, status or a case-insensitive name search.',
  model: items,
  view: itemView,
  viewSchema: ITEM_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 }, kind: { enum: ['product', 'service'] }, status: { enum: ['active', 'archived'] } },
  match: ({ search, kind, status }) => {
    const text = searchTerm(search);
    return kind || status || text ? (i) => (!kind || i.kind === kind) && (!status || i.status === status) && (!text || i.name_lc.includes(text)) : undefined;
  },
});
