import { defineTool, ID_SCHEMA, withLock } from '@cuadra/shared';
import { TRANSACTION_VIEW_SCHEMA, transactionView } from '../model.ts';
import { reconcileTransaction } from '../reconcile.ts';

const AMOUNT = { type: 'integer', minimum: 1, maximum: 1e15 } as const;

/** Reconciles a bank transaction against invoices, bills, payments or accounts. */
export const reconcile = defineTool({
  name: 'bank.reconcile',
  description: 'Reconcile an unreconciled bank transaction: split it (amounts in cents, summing to the transaction\'s absolute amount) over open invoices (money in: a customer payment is registered for each), posted bills (money out: a vendor payment is recorded from the account\'s PUC bank account), payments already recorded, or PUC accounts (a journal entry bank against that account). One-to-many, partial amounts allowed. Undo with bank.unreconcile.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['transaction_id', 'matches'],
    properties: {
      transaction_id: ID_SCHEMA,
      matches: {
        type: 'array', minItems: 1, maxItems: 50,
        items: {
          type: 'object', additionalProperties: false, required: ['amount'],
          properties: { invoice_id: ID_SCHEMA, bill_id: ID_SCHEMA, payment_id: ID_SCHEMA, account: { type: 'string', pattern: '^[1-9][0-9]{3,9}$' }, amount: AMOUNT },
        },
      },
    },
  },
  output: { type: 'object', additionalProperties: false, required: ['transaction'], properties: { transaction: TRANSACTION_VIEW_SCHEMA } },
  async handler(input, ctx) {
    const t = await withLock(ctx.db, `bank:reconcile:${ctx.workspace}:${input.transaction_id}`, () => reconcileTransaction(ctx, input.transaction_id, input.matches));
    return { transaction: transactionView(t) };
  },
});
