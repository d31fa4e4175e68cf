import { defineModule, defineSource } from '@cuadra/shared';
import { warehouses, type WarehouseDoc } from './model.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';

/** Warehouses: the places stock is kept. */
export const warehousesModule = defineModule({
  name: 'warehouses',
  tools: [create, list],
  models: [warehouses],
  listed: [{ model: warehouses }],
  reads: {
    sources: {
      warehouses: defineSource<WarehouseDoc>({
        model: warehouses,
        search: (w, needle) => w.name_lc.includes(needle) || w.code.toLowerCase().includes(needle),
        row: (w) => ({ id: w._id, code: w.code, name: w.name, address: w.address }),
      }),
    },
  },
  readGuards: { 'Query.warehouse': 'warehouses', Warehouse: 'warehouses' },
});
