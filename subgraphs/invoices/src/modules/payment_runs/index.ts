import { defineModule, operationsMaintenance } from '@cuadra/shared';
import { paymentRunClaims, paymentRuns } from './model.ts';
import { confirmOperation } from './ops.ts';
import { paymentFormatsSource, paymentRunsSource } from './sources.ts';
import { approve } from './tools/approve.ts';
import { cancel } from './tools/cancel.ts';
import { confirm } from './tools/confirm.ts';
import { create } from './tools/create.ts';
import { exportRun } from './tools/export.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';

/** Runs of vendor payments: picked from due bills, approved, exported as a bank file, confirmed into bill payments. */
export const paymentRunsModule = defineModule({
  name: 'payment_runs',
  tools: [create, approve, exportRun, confirm, cancel, get, list],
  models: [paymentRuns, paymentRunClaims],
  listed: [{ model: paymentRuns }],
  reads: { sources: { payment_runs: paymentRunsSource, payment_formats: paymentFormatsSource } },
  readGuards: {},
  // Confirms a dead process left half done (the durable-operation runner).
  maintenance: operationsMaintenance([confirmOperation]),
});
