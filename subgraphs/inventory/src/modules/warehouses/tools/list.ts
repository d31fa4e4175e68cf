import { defineListTool } from '@cuadra/shared';
import { WAREHOUSE_VIEW_SCHEMA, warehouses, warehouseView } from '../model.ts';

/** Lists warehouses, newest first. */
export const list = defineListTool({
  name: 'warehouses.list',
  description: 'List the workspace\'s warehouses, newest first; search their codes and names.',
  model: warehouses,
  view: warehouseView,
  viewSchema: WAREHOUSE_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ search }) => (search ? (w) => w.name_lc.includes(search.toLowerCase()) || w.code.toLowerCase().includes(search.toLowerCase()) : undefined),
});
