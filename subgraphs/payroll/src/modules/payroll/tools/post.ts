import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { RUN_VIEW_SCHEMA, runView, transition } from '../runs.ts';

/**
 * Posts an approved run: its balanced journal entry becomes final with it, in the same
 * conditional update (the entry is part of the run document, so there is no posted run without
 * its entry nor an entry without its run).
 */
export const post = defineTool({
  name: 'payroll.post',
  description: 'Post an approved payroll run: its balanced journal entry (PUC 5105xx expenses; 2370xx contributions and withholdings payable, 238030 pension funds, 250505 salaries payable, 2610xx provisions) becomes final. A posted run is never changed or voided; posting twice is refused.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { run: runView(await transition(ctx, input.id, ['approved'], { status: 'posted', posted_at: ctx.now })) };
  },
});
