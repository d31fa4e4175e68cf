import { DATE_SCHEMA, defineTool, ID_SCHEMA, withLock } from '@cuadra/shared';
import { TRANSACTION_VIEW_SCHEMA, transactionView } from '../model.ts';
import { unreconcileTransaction } from '../reconcile.ts';

/** Undoes a reconciliation. */
export const unreconcile = defineTool({
  name: 'bank.unreconcile',
  description: 'Undo the reconciliation of a bank transaction: what it booked is reversed by reversing journal entries dated `date` (default the transaction\'s date), never deleted, and the transaction is unreconciled again. Refused (conflict) when the period of the transaction or of the reversal is closed.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['transaction_id'], properties: { transaction_id: ID_SCHEMA, date: DATE_SCHEMA } },
  output: { type: 'object', additionalProperties: false, required: ['transaction'], properties: { transaction: TRANSACTION_VIEW_SCHEMA } },
  async handler(input, ctx) {
    const t = await withLock(ctx.db, `bank:reconcile:${ctx.workspace}:${input.transaction_id}`, () => unreconcileTransaction(ctx, input.transaction_id, input.date));
    return { transaction: transactionView(t) };
  },
});
