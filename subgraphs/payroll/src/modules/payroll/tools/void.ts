import { defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { publish, recordReversal } from '../journal_feed.ts';
import { loadRun, RUN_VIEW_SCHEMA, runView, transition } from '../runs.ts';

/**
 * Voids a run; its period can then be run again. A computed or approved run just becomes void. A
 * posted run becomes void with a reversing entry (`je_<run id>_void`, every line of its entry
 * swapped, dated the day of the void) that the finance journal pulls like the posting.
 */
export const voidRun = defineTool({
  name: 'payroll.void',
  description: 'Void a payroll run. A computed or approved run is simply voided; a posted run is voided with a reversing journal entry (every debit and credit of its entry swapped, dated today, never before the original) that the finance journal takes in as `je_<run id>_void`. The period can then be run again and its novelties change again. Electronic payroll documents already submitted are not withdrawn by this: that is an adjustment note.',
  risk: 'destructive',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, reason: { type: 'string', minLength: 1, maxLength: 500 } },
  } as const,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const current = await loadRun(ctx, input.id);
    const set = { status: 'void' as const, voided_at: ctx.now, void_reason: input.reason ?? null, slot: `void:${input.id}` };
    if (current.status === 'posted') {
      await recordReversal(ctx.db, current, ctx.now);
      const voided = await transition(ctx, input.id, ['posted'], set);
      // Final now: its place in the order finance reads (journal_feed.ts).
      await publish(ctx.db, ctx.workspace, `${voided.journal_entry.id}_void`);
      return { run: runView(voided) };
    }
    return { run: runView(await transition(ctx, input.id, ['computed', 'approved'], set)) };
  },
});
