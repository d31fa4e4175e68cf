import { defineListTool, ID_SCHEMA } from '@cuadra/shared';
import { PAYMENT_VIEW_SCHEMA, payments, paymentView } from '../model.ts';

/** Lists payments received, newest first. */
export const list = defineListTool({
  name: 'payments.list',
  description: 'List payments received, newest first; filter by customer.',
  model: payments,
  view: paymentView,
  viewSchema: PAYMENT_VIEW_SCHEMA,
  filters: { customer_id: ID_SCHEMA },
  match: ({ customer_id }) => (customer_id ? (p) => p.customer_id === customer_id : undefined),
});
