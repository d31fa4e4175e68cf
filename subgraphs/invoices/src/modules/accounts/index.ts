import { wakingPayrollPull } from '../../accounting/payroll_pull.ts';
import { defineModule } from '@cuadra/shared';
import { workspaceAccounts } from '../../accounting/chart.ts';
import { cashflowMetric } from './cashflow.ts';
import { statementMetrics } from './metrics.ts';
import { accountsSource } from './sources.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { exportStatement } from './tools/export_statement.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { printStatement } from './tools/print_statement.ts';
import { update } from './tools/update.ts';

/** The chart of accounts (the PUC and the workspace's sub-accounts) and the statements read from the ledger. */
export const accountsModule = defineModule({
  name: 'accounts',
  tools: [list, get, create, update, archive, exportStatement, printStatement],
  models: [workspaceAccounts],
  reads: {
    sources: { accounts: accountsSource },
    metrics: { ...statementMetrics, cashflow: wakingPayrollPull(cashflowMetric) },
  },
});
