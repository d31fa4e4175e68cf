import { defineGetTool } from '@cuadra/shared';
import { BANK_ACCOUNT_VIEW_SCHEMA, bankAccounts, bankAccountView, type BankAccountDoc } from '../model.ts';

/** Reads one bank account. */
export const getAccount = defineGetTool<BankAccountDoc>({
  name: 'bank.get_account',
  description: 'Get one bank account by id: name, bank, masked number (last 4), currency, PUC account, opening balance.',
  model: bankAccounts,
  view: bankAccountView,
  viewSchema: BANK_ACCOUNT_VIEW_SCHEMA,
  key: 'account',
  what: 'bank account',
});
