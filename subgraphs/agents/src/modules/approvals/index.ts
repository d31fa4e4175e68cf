import { defineModule } from '@cuadra/shared';
import { approvalsPendingMetric } from './metrics.ts';
import { decide } from './tools/decide.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { withdraw } from './tools/withdraw.ts';

/** The approval inbox (governance database). */
export const approvalsModule = defineModule({
  name: 'approvals',
  tools: [list, get, decide, withdraw],
  reads: { metrics: { approvals_pending: approvalsPendingMetric } },
});
