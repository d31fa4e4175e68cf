import { CuadraError, defineTool, ID_SCHEMA, recordOutput, withLock, type ToolContext } from '@cuadra/shared';
import { publish, recordReversal, reversalOf } from '../journal_feed.ts';
import { loadRun, payrollRuns, RUN_VIEW_SCHEMA, runLock, runView, settlementLock, transition, transitionRefused, type RunDoc, type RunStatus } from '../runs.ts';

/**
 * Voids a run; its period can then be run again. A computed or approved run just becomes void. A
 * posted run becomes void with a reversing entry (`je_<run id>_void`, every line of its entry
 * swapped, dated the day of the void) that the finance journal pulls like the posting.
 */
export const voidRun = defineTool({
  name: 'payroll.void',
  description: 'Void a payroll run. A computed or approved run is simply voided; a posted run is voided with a reversing journal entry (every debit and credit of its entry swapped, dated today, never before the original) that the finance journal takes in as `je_<run id>_void`. The period can then be run again and its novelties change again. A posted run whose provisions a live run\'s final settlement releases, or a first half whose second half is live, is refused until that run is voided. Electronic payroll documents already submitted are not withdrawn by this: that is an adjustment note.',
  risk: 'destructive',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, reason: { type: 'string', minLength: 1, maxLength: 500 } },
  } as const,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const current = await loadRun(ctx, input.id);
    // Under the month's run lock: a second half being computed reads the first half's payslips.
    return withLock(ctx.db, runLock(ctx.workspace, current.month), async () => {
      await assertNoLiveSecondHalf(ctx, current);
      const set = { status: 'void' as const, voided_at: ctx.now, void_reason: input.reason ?? null, slot: `void:${input.id}` };
      if (current.status !== 'posted') return { run: runView(await transition(ctx, input.id, ['computed', 'approved'], set)) };
      // Under the lock payroll.run holds while a final settlement releases posted runs' provisions.
      return withLock(ctx.db, settlementLock(ctx.workspace), async () => {
        await assertNotReleased(ctx, input.id);
        await recordReversal(ctx.db, current, ctx.now);
        const voided = await transition(ctx, input.id, ['posted'], set);
        // Final now: its place in the order finance reads (journal_feed.ts).
        await publish(ctx.db, ctx.workspace, `${voided.journal_entry.id}_void`, ctx.graph);
        return { run: runView(voided) };
      });
    });
  },
  // Its dry run, and what a held void shows the person deciding: the same refusals, the run's change
  // and — for a posted run — the reversing entry (reversalOf, the lines the void hands to finance).
  async preview(input, ctx) {
    const run = await loadRun(ctx, input.id);
    if (!VOIDABLE.includes(run.status)) throw transitionRefused(run, VOIDABLE, 'void');
    await assertNoLiveSecondHalf(ctx, run);
    const change = { source: 'payroll_runs', id: run._id, op: 'update' as const, before: { status: run.status }, after: { status: 'void', void_reason: input.reason ?? null } };
    if (run.status !== 'posted') return { changes: [change], journal_lines: [] };
    await assertNotReleased(ctx, run._id);
    const reversal = reversalOf(run, ctx.now);
    return {
      changes: [change, { source: 'payroll_journal', id: reversal._id, op: 'insert', after: { kind: 'reversal', date: reversal.date, currency: reversal.currency, memo: reversal.memo, lines: reversal.lines } }],
      journal_lines: reversal.lines,
    };
  },
});

/** The statuses a run is voided from. */
const VOIDABLE: readonly RunStatus[] = ['computed', 'approved', 'posted'];

/** A first half is voided only once its month's second half is void: the second half completes the month's contributions from it. */
async function assertNoLiveSecondHalf(ctx: ToolContext, run: RunDoc): Promise<void> {
  if (run.frequency !== 'first_half') return;
  const second = await payrollRuns(ctx.db).findOne({ workspace: ctx.workspace, month: run.month, frequency: 'second_half', status: { $ne: 'void' } }, { _id: 1, status: 1 }).lean();
  if (second) throw new CuadraError('conflict', `The ${second.status} second half of ${run.month} (run ${second._id}) completes the month's contributions from this half's; void it first.`);
}

/** A posted run whose provisions a live run's final settlement releases stays until that run is voided. */
async function assertNotReleased(ctx: ToolContext, id: string): Promise<void> {
  const holder = await payrollRuns(ctx.db).findOne({ workspace: ctx.workspace, status: { $ne: 'void' }, released_runs: id }, { _id: 1, period: 1, status: 1 }).lean();
  if (holder) {
    throw new CuadraError('conflict', `The ${holder.status} run ${holder._id} of ${holder.period.from}–${holder.period.to} carries a final settlement that releases this run's provisions; void that run first.`);
  }
}
