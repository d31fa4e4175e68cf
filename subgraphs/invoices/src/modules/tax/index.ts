import { defineModule } from '@cuadra/shared';
import { taxLane } from './agenda.ts';
import { taxProfiles } from './model.ts';
import { configure } from './tools/configure.ts';
import { withholdings } from './tools/withholdings.ts';

/**
 * The workspace's DIAN obligations: its tax profile, the month's withholdings by concept and their
 * Formulario 350 figures (`tax.withholdings`), and the agenda's `tax` lane — the national tax
 * calendar as data, each monthly withholding deadline carrying its month's figures. The lane also carries e-invoicing's compliance warnings (certificate and
 * numbering resolutions lapsing, ranges running out), which are obligations towards DIAN too: the
 * einvoicing module adds them (its `agendaParts`), and the subgraph's agenda field merges both by date.
 */
export const taxModule = defineModule({
  name: 'tax',
  tools: [configure, withholdings],
  models: [taxProfiles],
  reads: { agenda: { tax: taxLane } },
});
