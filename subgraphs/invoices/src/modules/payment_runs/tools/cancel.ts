import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRunView } from '../model.ts';
import { releaseClaims, transitionRun } from '../ops.ts';

/** Cancels a run before it is confirmed; its bills are released for another run. Nothing is paid. */
export const cancel = defineTool({
  name: 'payment_runs.cancel',
  description: 'Cancel a payment run that is draft, approved or exported (before it is confirmed): no bill is paid and its bills may go into another run. If its file was already uploaded, withdraw it at the bank too.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('payment_run', PAYMENT_RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const run = await transitionRun(ctx, input.id, ['draft', 'approved', 'exported'], 'cancelled', { cancelled_at: ctx.now });
    await releaseClaims(ctx, run);
    return { payment_run: paymentRunView(run) };
  },
});
