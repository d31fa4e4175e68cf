import { beginOperation, CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, localDate, recordOutput, runOperation } from '@cuadra/shared';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRunView } from '../model.ts';
import { checkBillsPayable, confirmOperation, findRun, transitionRun } from '../ops.ts';

/**
 * Confirms that the bank paid an exported run, exactly once:
 * 1. checks every bill can still take its payment (nothing is paid if one cannot);
 * 2. begins the confirm's durable operation (ops.ts `confirmOperation`), then exported →
 *    confirming by one conditional update, fixing the payment date;
 * 3. runs the operation: each bill paid under the payment id chosen when the run was made,
 *    confirming → confirmed, the bills released. A confirm whose process died is finished by the
 *    maintenance sweep (its keyed retry answers the confirmed run); a run found `confirming` is
 *    resumed here (every step is idempotent: nothing is paid twice).
 */
export const confirm = defineTool({
  name: 'payment_runs.confirm',
  description: 'Confirm that the bank executed an exported payment run: every bill of the run is paid for the run\'s amount through the bills payment path (one payment and one journal entry per bill: Dr 220505 proveedores, Cr the run\'s bank account), dated paid_on (default the run\'s payment date). Exactly once: a confirmed run is refused.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, paid_on: { ...DATE_SCHEMA, description: 'The date the bank paid (default the run\'s payment date).' } },
  },
  output: recordOutput('payment_run', PAYMENT_RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    let run = await findRun(ctx, input.id);
    if (run.status === 'exported') {
      await checkBillsPayable(ctx, run);
      const paidOn = input.paid_on ?? run.payment_date;
      if (paidOn > localDate(ctx.now)) throw new CuadraError('invalid_input', `A payment cannot be confirmed before it happens (${paidOn}).`, { field: '/paid_on' });
      await beginOperation(ctx, confirmOperation, run._id);
      run = await transitionRun(ctx, run._id, ['exported'], 'confirming', { paid_on: paidOn });
    } else if (run.status === 'confirming') {
      // Begun already, or a run left confirming before confirms were operations (no marker yet).
      await beginOperation(ctx, confirmOperation, run._id);
    } else {
      throw new CuadraError('conflict', run.status === 'confirmed' ? `Payment run ${run._id} is already confirmed; its bills were paid once.` : `Payment run ${run._id} is ${run.status}; only an exported run is confirmed.`);
    }
    return { payment_run: paymentRunView(await runOperation(ctx, confirmOperation, run, run._id)) };
  },
});
