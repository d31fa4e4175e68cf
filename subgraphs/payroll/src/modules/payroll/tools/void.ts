import { defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { RUN_VIEW_SCHEMA, runView, transition } from '../runs.ts';

/** Voids a run before it is posted; its period can then be run again. */
export const voidRun = defineTool({
  name: 'payroll.void',
  description: 'Void a computed or approved payroll run (never a posted one). The period can then be run again and its novelties change again.',
  risk: 'destructive',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: { id: ID_SCHEMA, reason: { type: 'string', minLength: 1, maxLength: 500 } },
  } as const,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const run = await transition(ctx, input.id, ['computed', 'approved'], { status: 'void', voided_at: ctx.now, void_reason: input.reason ?? null, slot: `void:${input.id}` });
    return { run: runView(run) };
  },
});
