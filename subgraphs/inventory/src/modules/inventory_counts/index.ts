import { defineModule, defineSource } from '@cuadra/shared';
import { inventoryCounts, type CountDoc } from './model.ts';
import { create } from './tools/create.ts';
import { exportSheet } from './tools/export.ts';
import { importSheet } from './tools/import.ts';
import { post } from './tools/post.ts';

/** Count sheets per warehouse (stock reconciliation): XLSX out and back, differences posted as movements. */
export const inventoryCountsModule = defineModule({
  name: 'inventory_counts',
  tools: [create, exportSheet, importSheet, post],
  models: [inventoryCounts],
  listed: [{ model: inventoryCounts }],
  journalSources: [],
  reads: {
    sources: {
      inventory_counts: defineSource<CountDoc>({
        model: inventoryCounts,
        statuses: ['open', 'posted'],
        search: (c, needle) => c.warehouse_code.toLowerCase().includes(needle),
        row: (c) => ({ id: c._id, warehouse_id: c.warehouse_id, warehouse: c.warehouse_code, date: c.date, status: c.status, lines: c.lines.length, counted: c.lines.filter((l) => l.counted !== null).length, differences: c.lines.filter((l) => l.counted !== null && l.counted !== l.expected).length }),
      }),
    },
  },
});
