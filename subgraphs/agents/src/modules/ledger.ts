import { defineModule } from '@cuadra/shared';
import { list } from '../tools/ledger/list.ts';
import { verify } from '../tools/ledger/verify.ts';

/** The action ledger (governance database). */
export const ledgerModule = defineModule({
  name: 'ledger',
  tools: [list, verify],
  reads: { metrics: { activity: { field: 'agentsMetric', module: 'ledger' } } },
});
