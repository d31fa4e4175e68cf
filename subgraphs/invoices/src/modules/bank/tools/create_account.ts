import { AMOUNT_SCHEMA, createPositioned, CuadraError, DATE_SCHEMA, defineTool, localDate, newId, recordOutput } from '@cuadra/shared';
import { BANK_ACCOUNT_VIEW_SCHEMA, BANK_PUC_CODES, bankAccounts, bankAccountView, normalAccountNumber, type BankAccountDoc } from '../model.ts';

/** Registers a bank account of the workspace. */
export const createAccount = defineTool({
  name: 'bank.create_account',
  description: 'Register a bank account: its name, bank, account number (shown masked to the last 4 characters), currency, the PUC account it posts to (111005 national currency, 111010 foreign currency) and its opening balance in cents at a date.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'bank_name', 'account_number', 'currency'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 120 },
      bank_name: { type: 'string', minLength: 1, maxLength: 120 },
      account_number: { type: 'string', pattern: '^[0-9A-Za-z][0-9A-Za-z -]{3,40}$', description: 'Account number or IBAN: letters, digits, spaces and dashes.' },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      puc_account: { enum: BANK_PUC_CODES, description: 'PUC 1110 auxiliary: 111005 (national currency, default) or 111010 (foreign currency).' },
      opening_balance: { ...AMOUNT_SCHEMA, description: 'Balance in cents at opening_date (default 0).' },
      opening_date: DATE_SCHEMA,
    },
  },
  output: recordOutput('account', BANK_ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const number = normalAccountNumber(input.account_number);
    if (number.length < 4) throw new CuadraError('invalid_input', 'The account number needs at least 4 letters or digits.', { field: '/account_number' });
    const doc: BankAccountDoc = {
      _id: newId('bnk'), workspace: ctx.workspace, name: input.name.trim(), bank_name: input.bank_name.trim(), account_number: number,
      number_key: `${ctx.workspace}|${number}`, search_lc: `${input.name} ${input.bank_name}`.toLowerCase(), currency: input.currency,
      puc_account: input.puc_account ?? '111005', opening_balance: input.opening_balance ?? 0, opening_date: input.opening_date ?? localDate(ctx.now),
      created_at: ctx.now, updated_at: ctx.now,
    };
    try {
      await createPositioned(bankAccounts(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', 'A bank account with this number is already registered in this workspace.');
      throw err;
    }
    return { account: bankAccountView(doc) };
  },
});
