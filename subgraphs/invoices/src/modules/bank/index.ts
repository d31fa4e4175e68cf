import { defineModule } from '@cuadra/shared';
import { bankMaintenance } from './maintenance.ts';
import { BANK_METRICS } from './metrics.ts';
import { bankAccounts, bankImports, bankMarkers, bankTransactions, categorizationRules } from './model.ts';
import { bankTransactionsSource, banksSource, categorizationRulesSource } from './sources.ts';
import { createAccount } from './tools/create_account.ts';
import { createRule } from './tools/create_rule.ts';
import { deleteRule } from './tools/delete_rule.ts';
import { getAccount } from './tools/get_account.ts';
import { importStatementTool } from './tools/import_statement.ts';
import { listAccounts } from './tools/list_accounts.ts';
import { listRules } from './tools/list_rules.ts';
import { reconcile } from './tools/reconcile.ts';
import { suggest } from './tools/suggest.ts';
import { unreconcile } from './tools/unreconcile.ts';

/** Bank accounts, their imported statements, categorization rules and reconciliation. */
export const bankModule = defineModule({
  name: 'bank',
  maintenance: bankMaintenance,
  journalSources: ['bank_transaction'],
  tools: [createAccount, listAccounts, getAccount, importStatementTool, createRule, listRules, deleteRule, suggest, reconcile, unreconcile],
  models: [bankAccounts, bankTransactions, bankImports, bankMarkers, categorizationRules],
  listed: [{ model: bankAccounts }, { model: bankTransactions }, { model: categorizationRules }],
  reads: {
    sources: { banks: banksSource, bank_transactions: bankTransactionsSource, categorization_rules: categorizationRulesSource },
    metrics: BANK_METRICS,
  },
});
