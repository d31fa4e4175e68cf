import { defineModule } from '@cuadra/shared';
import { salesDocuments, salesSeries } from '../../lib/sales-document.ts';
import { salesOrdersSource } from './sources.ts';
import { convert } from './tools/convert.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';

/** Sales orders (their own series in the sales documents collection). */
export const salesOrdersModule = defineModule({
  name: 'sales_orders',
  tools: [create, convert, get, list],
  models: [salesDocuments],
  listed: [{ model: salesDocuments, ...salesSeries('sales_order') }],
  reads: { sources: { sales_orders: salesOrdersSource } },
});
