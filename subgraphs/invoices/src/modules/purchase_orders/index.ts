import { defineModule } from '@cuadra/shared';
import { purchaseOrders } from './model.ts';
import { purchaseOrdersSource } from './sources.ts';
import { close } from './tools/close.ts';
import { convert } from './tools/convert.ts';
import { create } from './tools/create.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { receive } from './tools/receive.ts';
import { send } from './tools/send.ts';

/** Purchase orders to vendors: sent, received (in part), converted into a draft bill of what arrived. */
export const purchaseOrdersModule = defineModule({
  name: 'purchase_orders',
  tools: [create, send, receive, convert, close, get, list],
  models: [purchaseOrders],
  listed: [{ model: purchaseOrders }],
  reads: { sources: { purchase_orders: purchaseOrdersSource } },
  readGuards: {},
});
