import { defineModule } from '@cuadra/shared';
import { bankAccounts, bankImports, bankMarkers, bankTransactions } from './model.ts';
import { bankTransactionsSource, banksSource } from './sources.ts';
import { createAccount } from './tools/create_account.ts';
import { getAccount } from './tools/get_account.ts';
import { importStatementTool } from './tools/import_statement.ts';
import { listAccounts } from './tools/list_accounts.ts';

/** Bank accounts, their imported statements, categorization rules and reconciliation. */
export const bankModule = defineModule({
  name: 'bank',
  tools: [createAccount, listAccounts, getAccount, importStatementTool],
  models: [bankAccounts, bankTransactions, bankImports, bankMarkers],
  listed: [{ model: bankAccounts }, { model: bankTransactions }],
  reads: { sources: { banks: banksSource, bank_transactions: bankTransactionsSource } },
});
