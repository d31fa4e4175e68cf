import { defineGetTool } from '@cuadra/shared';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRuns, paymentRunView, type PaymentRunDoc } from '../model.ts';

/** Reads one payment run of the caller's workspace. */
export const get = defineGetTool<PaymentRunDoc>({
  name: 'payment_runs.get',
  description: 'Get one payment run by id: status, currency, bank account, the bills it pays with amounts and payment ids, total, and when it was approved, exported and confirmed.',
  model: paymentRuns, view: paymentRunView, key: 'payment_run', what: 'payment run', viewSchema: PAYMENT_RUN_VIEW_SCHEMA,
});
