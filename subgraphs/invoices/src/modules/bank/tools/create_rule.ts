import { createPositioned, CuadraError, defineTool, ID_SCHEMA, newId, recordOutput } from '@cuadra/shared';
import { PUC } from '../../../accounting/puc.ts';
import { bankAccounts, categorizationRules, RULE_VIEW_SCHEMA, ruleView, type RuleDoc, type RuleProposal } from '../model.ts';

const AMOUNT = { type: 'integer', minimum: 1, maximum: 1e15 } as const;

/** Creates a categorization rule. */
export const createRule = defineTool({
  name: 'bank.create_rule',
  description: 'Create a categorization rule for bank transactions: the tests (description contains a text, absolute amount in cents between amount_min and amount_max, credit or debit, one bank account; at least one) and what it proposes — the open invoice or bill the transaction pays (counterparty: by reference, else by amount) or a PUC account code. bank.suggest applies the rules.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'propose'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 120 },
      bank_id: ID_SCHEMA,
      description_contains: { type: 'string', minLength: 1, maxLength: 100 },
      amount_min: AMOUNT, amount_max: AMOUNT,
      sign: { enum: ['credit', 'debit'] },
      propose: {
        type: 'object', additionalProperties: false, required: ['kind'],
        properties: { kind: { enum: ['counterparty', 'account'] }, account_code: { type: 'string', pattern: '^[1-9][0-9]{3,9}$' } },
      },
    },
  },
  output: recordOutput('rule', RULE_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (input.description_contains === undefined && input.amount_min === undefined && input.amount_max === undefined && input.sign === undefined && input.bank_id === undefined) {
      throw new CuadraError('invalid_input', 'A rule needs at least one test: description_contains, amount_min, amount_max, sign or bank_id.', { field: '/description_contains' });
    }
    if (input.amount_min !== undefined && input.amount_max !== undefined && input.amount_min > input.amount_max) {
      throw new CuadraError('invalid_input', 'amount_min is above amount_max.', { field: '/amount_max' });
    }
    let propose: RuleProposal;
    if (input.propose.kind === 'account') {
      const code = input.propose.account_code;
      if (!code) throw new CuadraError('invalid_input', 'An account proposal names its PUC account code.', { field: '/propose/account_code' });
      if (!PUC[code]) throw new CuadraError('invalid_input', `${code} is not an account of the PUC chart.`, { field: '/propose/account_code' });
      if (code.startsWith('1110')) throw new CuadraError('invalid_input', 'The counter-account cannot be a bank account (1110): the transaction is already on it.', { field: '/propose/account_code' });
      propose = { kind: 'account', account_code: code };
    } else {
      if (input.propose.account_code) throw new CuadraError('invalid_input', 'A counterparty proposal names no account.', { field: '/propose/account_code' });
      propose = { kind: 'counterparty' };
    }
    if (input.bank_id && !(await bankAccounts(ctx.db).exists({ _id: input.bank_id, workspace: ctx.workspace }))) {
      throw new CuadraError('invalid_input', `No bank account ${input.bank_id} exists in this workspace.`, { field: '/bank_id' });
    }
    const contains = input.description_contains?.trim().toLowerCase() || null;
    const doc: RuleDoc = {
      _id: newId('brl'), workspace: ctx.workspace, name: input.name.trim(), bank_id: input.bank_id ?? null, description_contains: contains,
      amount_min: input.amount_min ?? null, amount_max: input.amount_max ?? null, sign: input.sign ?? null, propose,
      search_lc: `${input.name} ${contains ?? ''}`.toLowerCase(), created_at: ctx.now,
    };
    await createPositioned(categorizationRules(ctx.db), doc);
    return { rule: ruleView(doc) };
  },
});
