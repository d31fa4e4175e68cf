import { defineListTool, searchTerm } from '@cuadra/shared';
import { BANK_ACCOUNT_VIEW_SCHEMA, bankAccountMatches, bankAccounts, bankAccountView } from '../model.ts';

/** Lists the bank accounts, newest first. */
export const listAccounts = defineListTool({
  name: 'bank.list_accounts',
  description: 'List the bank accounts, newest first; search a case-insensitive part of the name or bank name. Numbers are masked to the last 4 characters.',
  model: bankAccounts,
  view: bankAccountView,
  viewSchema: BANK_ACCOUNT_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ search }) => {
    const text = searchTerm(search);
    return text ? (a) => bankAccountMatches(a, text) : undefined;
  },
});
