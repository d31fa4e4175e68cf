import { CuadraError, defineTool, ID_SCHEMA, recordOutput, withLock } from '@cuadra/shared';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRunView } from '../model.ts';
import { findRun, holdRunBills, releaseRunHolds, transitionRun } from '../ops.ts';

/**
 * Approves a draft run for payment: the step that lets money leave the workspace, so it is
 * `external` and the natural target of a `hold` policy. The caller states the run's total
 * (`amount`), which is what `amount_over` policies compare; a total that is not the run's is
 * refused, so a policy can never be passed by understating it.
 *
 * Before the run becomes approved, each of its bills is held for it (ops.ts holdRunBills): from
 * then on its bank file is the only way the bills are paid. A bill paid or credited since the run
 * was made refuses the approval (409, naming it) and nothing stays held; of an approval and a
 * payment of one bill at once, exactly one wins.
 */
export const approve = defineTool({
  name: 'payment_runs.approve',
  description: 'Approve a draft payment run for payment. Give its id and its total (amount, in cents) exactly as the run states it: policies with amount_over compare that total. Sending money is external: a workspace may hold this for a person\'s approval.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'amount'],
    properties: { id: ID_SCHEMA, amount: { type: 'integer', minimum: 1, maximum: 1e15, description: 'The run\'s total in cents, as payment_runs.create or get answered it.' } },
  },
  output: recordOutput('payment_run', PAYMENT_RUN_VIEW_SCHEMA),
  amount: (input) => input.amount,
  async handler(input, ctx) {
    const run = await findRun(ctx, input.id);
    if (run.status === 'draft' && run.total !== input.amount) {
      throw new CuadraError('invalid_input', `The run's total is ${run.total}, not ${input.amount}; approve the total the run states.`, { field: '/amount' });
    }
    // One approval of a run at a time: a second waits, then finds it approved (conflict).
    const approved = await withLock(ctx.db, `payment_runs:approve:${ctx.workspace}:${run._id}`, async () => {
      if (run.status === 'draft') await holdRunBills(ctx, run);
      try {
        return await transitionRun(ctx, input.id, ['draft'], 'approved', { approved_by: ctx.principal.actor.id, approved_at: ctx.now }, { total: input.amount });
      } catch (err) {
        // Not approved (cancelled meanwhile, or not a draft): whatever this call held is released.
        const now = await findRun(ctx, run._id);
        if (now.status === 'draft' || now.status === 'cancelled') await releaseRunHolds(ctx, run);
        throw err;
      }
    });
    return { payment_run: paymentRunView(approved) };
  },
});
