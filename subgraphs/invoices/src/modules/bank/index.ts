import { defineModule } from '@cuadra/shared';
import { bankAccounts } from './model.ts';
import { banksSource } from './sources.ts';
import { createAccount } from './tools/create_account.ts';
import { getAccount } from './tools/get_account.ts';
import { listAccounts } from './tools/list_accounts.ts';

/** Bank accounts, their imported statements, categorization rules and reconciliation. */
export const bankModule = defineModule({
  name: 'bank',
  tools: [createAccount, listAccounts, getAccount],
  models: [bankAccounts],
  listed: [{ model: bankAccounts }],
  reads: { sources: { banks: banksSource } },
});
