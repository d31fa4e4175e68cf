import { defineListTool, searchTerm } from '@cuadra/shared';
import { ITEM_VIEW_SCHEMA, itemMatches, items, itemView } from '../model.ts';

/** Lists the catalog, newest first. */
export const list = defineListTool({
  name: 'items.list',
  description: 'List catalog items (products and services), newest first; filter by kind, status or a case-insensitive name search.',
  model: items,
  view: itemView,
  viewSchema: ITEM_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 }, kind: { enum: ['product', 'service'] }, status: { enum: ['active', 'archived'] } },
  match: ({ search, kind, status }) => {
    const text = searchTerm(search);
    return kind || status || text ? (i) => (!kind || i.kind === kind) && (!status || i.status === status) && (!text || itemMatches(i, text)) : undefined;
  },
});
