import { defineModule, searchTextsOf } from '@cuadra/shared';
import { paymentsMaintenance } from './maintenance.ts';
import { payments } from './model.ts';
import { paymentsSource } from './sources.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { register } from './tools/register.ts';

/** Payments received from customers. */
export const paymentsModule = defineModule({
  name: 'payments',
  maintenance: paymentsMaintenance,
  journalSources: ['payment'],
  tools: [register, get, list],
  models: [payments],
  listed: [{ model: payments, searchable: searchTextsOf }],
  reads: { sources: { payments: paymentsSource } },
});
