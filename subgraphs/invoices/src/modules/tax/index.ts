import { defineModule } from '@cuadra/shared';
import { taxLane } from './agenda.ts';
import { taxProfiles } from './model.ts';
import { configure } from './tools/configure.ts';

/**
 * The workspace's DIAN obligations: its tax profile and the agenda's `tax` lane — the national tax
 * calendar as data. The lane also carries e-invoicing's compliance warnings (certificate and
 * numbering resolutions lapsing, ranges running out), which are obligations towards DIAN too: the
 * einvoicing module adds them (its `agendaParts`), and the subgraph's agenda field merges both by date.
 */
export const taxModule = defineModule({
  name: 'tax',
  tools: [configure],
  models: [taxProfiles],
  reads: { agenda: { tax: taxLane } },
});
