import { defineModule } from '@cuadra/shared';
import { activityMetric } from './metrics.ts';
import { list } from './tools/list.ts';
import { verify } from './tools/verify.ts';

/** The action ledger (governance database). */
export const ledgerModule = defineModule({
  name: 'ledger',
  tools: [list, verify],
  reads: { metrics: { activity: activityMetric } },
});
