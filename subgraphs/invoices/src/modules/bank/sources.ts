import { defineSource } from '@cuadra/shared';
import { bankAccountMatches, bankAccounts, maskedNumber, type BankAccountDoc } from './model.ts';

/** records.list `banks`: status is ignored (specification §2.5), no kinds; search over name and bank name. */
export const banksSource = defineSource<BankAccountDoc>({
  model: bankAccounts,
  search: bankAccountMatches,
  row: (a) => ({ id: a._id, name: a.name, bank_name: a.bank_name, account_number: maskedNumber(a.account_number), currency: a.currency, puc_account: a.puc_account, opening_balance: a.opening_balance }),
});
