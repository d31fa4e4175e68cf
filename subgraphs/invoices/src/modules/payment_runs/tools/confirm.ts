import { CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, localDate, recordOutput } from '@cuadra/shared';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRunView } from '../model.ts';
import { checkBillsPayable, findRun, payRunBills, releaseClaims, transitionRun } from '../ops.ts';

/**
 * Confirms that the bank paid an exported run, exactly once:
 * 1. checks every bill can still take its payment (nothing is paid if one cannot);
 * 2. exported → confirming by one conditional update, fixing the payment date;
 * 3. pays each bill through the bills module (`payBills`) under the payment id chosen when the
 *    run was made — a retry, or a resume of a confirm that died in step 3, finds those payments
 *    and pays nothing twice;
 * 4. confirming → confirmed, and the bills are released.
 * A run found `confirming` is resumed from step 3 (every step there is idempotent).
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
      run = await transitionRun(ctx, run._id, ['exported'], 'confirming', { paid_on: paidOn });
    } else if (run.status !== 'confirming') {
      throw new CuadraError('conflict', run.status === 'confirmed' ? `Payment run ${run._id} is already confirmed; its bills were paid once.` : `Payment run ${run._id} is ${run.status}; only an exported run is confirmed.`);
    }
    await payRunBills(ctx, run);
    const done = await paymentRunsConfirmed(ctx, run._id);
    await releaseClaims(ctx, done);
    return { payment_run: paymentRunView(done) };
  },
});

/** confirming → confirmed; a concurrent resume that got there first is fine (same outcome). */
async function paymentRunsConfirmed(ctx: Parameters<typeof transitionRun>[0], id: string) {
  try {
    return await transitionRun(ctx, id, ['confirming'], 'confirmed', { confirmed_at: ctx.now });
  } catch (err) {
    const run = await findRun(ctx, id);
    if (run.status === 'confirmed') return run;
    throw err;
  }
}
