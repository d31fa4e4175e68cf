import { defineModule } from '@cuadra/shared';
import { payments } from '../models/payment.ts';
import { get } from '../tools/payments/get.ts';
import { list } from '../tools/payments/list.ts';
import { register } from '../tools/payments/register.ts';

/** Payments received from customers. */
export const paymentsModule = defineModule({
  name: 'payments',
  tools: [register, get, list],
  models: [payments],
  listed: [{ model: payments }],
  reads: { sources: { payments: { field: 'invoicesRecords', module: 'payments' } } },
});
