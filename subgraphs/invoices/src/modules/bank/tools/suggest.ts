import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { bankAccounts, bankTransactions, transactionKind, type BankTransactionDoc } from '../model.ts';
import { proposalsFor, suggestionContext } from '../suggest.ts';

const PROPOSAL = {
  type: 'object', additionalProperties: false, required: ['kind', 'id', 'label', 'amount', 'reason', 'rule_id'],
  properties: {
    kind: { enum: ['invoice', 'bill', 'account'] }, id: { type: 'string' }, label: { type: 'string' }, amount: { type: 'integer', minimum: 1 },
    reason: { enum: ['reference', 'amount', 'rule'] }, rule_id: { type: ['string', 'null'] },
  },
} as const;

/** Proposes matches for unreconciled transactions. */
export const suggest = defineTool({
  name: 'bank.suggest',
  description: 'Propose matches for unreconciled bank transactions (one, or up to `limit` of an account, newest first): an open invoice (money in) or posted bill (money out) whose number appears in the reference or description, and what the first applicable categorization rule proposes (an account code, or the open document whose balance equals the amount). Writes nothing; pass a proposal to bank.reconcile.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: { transaction_id: ID_SCHEMA, bank_id: ID_SCHEMA, limit: { type: 'integer', minimum: 1, maximum: 50 } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['suggestions'],
    properties: {
      suggestions: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['transaction_id', 'kind', 'amount', 'date', 'description', 'proposals'],
          properties: {
            transaction_id: { type: 'string' }, kind: { enum: ['credit', 'debit'] }, amount: { type: 'integer' }, date: { type: 'string', format: 'date' },
            description: { type: 'string' }, proposals: { type: 'array', items: PROPOSAL },
          },
        },
      },
    },
  },
  async handler(input, ctx) {
    let txs: BankTransactionDoc[];
    if (input.transaction_id) {
      const t = await bankTransactions(ctx.db).findOne({ _id: input.transaction_id, workspace: ctx.workspace }).lean();
      if (!t) throw new CuadraError('not_found', `No bank transaction ${input.transaction_id} exists in this workspace.`);
      if (t.status !== 'unreconciled') throw new CuadraError('conflict', `Bank transaction ${t._id} is ${t.status}.`);
      txs = [t];
    } else {
      if (input.bank_id && !(await bankAccounts(ctx.db).exists({ _id: input.bank_id, workspace: ctx.workspace }))) {
        throw new CuadraError('invalid_input', `No bank account ${input.bank_id} exists in this workspace.`, { field: '/bank_id' });
      }
      // Bounded: the newest 1,000 positions of the workspace's transactions are read, the unreconciled kept.
      txs = (await bankTransactions(ctx.db).find({ workspace: ctx.workspace, ...(input.bank_id ? { bank_id: input.bank_id } : {}) }).sort({ pos: -1 }).limit(1000).lean())
        .filter((t) => t.status === 'unreconciled').slice(0, input.limit ?? 20);
    }
    const c = await suggestionContext(ctx);
    return {
      suggestions: txs.map((t) => ({ transaction_id: t._id, kind: transactionKind(t), amount: t.amount, date: t.date, description: t.description, proposals: proposalsFor(t, c) })),
    };
  },
});
