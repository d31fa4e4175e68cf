import { defineModule } from '@cuadra/shared';
import { decide } from '../tools/approvals/decide.ts';
import { get } from '../tools/approvals/get.ts';
import { list } from '../tools/approvals/list.ts';

/** The approval inbox (governance database). */
export const approvalsModule = defineModule({
  name: 'approvals',
  tools: [list, get, decide],
  reads: { metrics: { approvals_pending: { field: 'agentsMetric', module: 'approvals' } } },
});
