import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { PAYROLL_TOTAL_SCHEMA } from '../../../money.ts';
import { loadRun, RUN_VIEW_SCHEMA, runView, transition } from '../runs.ts';

/**
 * Approves a computed run. The caller states the run's total net pay (`amount`): autonomy
 * policies with `amount_over` select on it (approving payroll is a natural `hold`), and the run
 * is approved only if it is still the run whose net pay the approver saw.
 */
export const approve = defineTool({
  name: 'payroll.approve',
  description: 'Approve a computed payroll run. `amount` is the run\'s total net pay in cents, as payroll.run answered it (totals.net): policies with amount_over apply to it, and a run whose net pay differs is refused. An approved run can be posted or voided; its period\'s novelties are closed.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'amount'],
    properties: { id: ID_SCHEMA, amount: PAYROLL_TOTAL_SCHEMA },
  } as const,
  amount: (input) => input.amount,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const seen = await loadRun(ctx, input.id);
    if (seen.status === 'computed' && seen.totals.net !== input.amount) {
      throw new CuadraError('invalid_input', `The run's total net pay is ${seen.totals.net}, not ${input.amount}; approve the amount the run shows.`, { field: '/amount' });
    }
    const run = await transition(ctx, input.id, ['computed'], { status: 'approved', approved_at: ctx.now }, { 'totals.net': input.amount });
    return { run: runView(run) };
  },
});
