import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { publish, recordPosting } from '../journal_feed.ts';
import { loadRun, RUN_VIEW_SCHEMA, runView, transition, transitionRefused } from '../runs.ts';

/**
 * Posts an approved run: its balanced journal entry becomes final with it, in the same
 * conditional update (the entry is part of the run document, so there is no posted run without
 * its entry nor an entry without its run). The entry's feed document (journal_feed.ts) is written
 * just before, and shows in the `payroll_journal` source only once the run is posted: the finance
 * journal pulls it from there.
 */
export const post = defineTool({
  name: 'payroll.post',
  description: 'Post an approved payroll run: its balanced journal entry (PUC 5105xx expenses; 2370xx contributions and withholdings payable and 238030 pension funds, each at what PILA declares; 250505 salaries payable; 2610xx provisions; for a final settlement, the 2610xx provisions released and 251010, 251505, 252005, 252505, 254005 payable) becomes final, and the finance journal takes it in (once, as `je_<run id>`, dated the period\'s last day) through the `payroll_journal` source. Posting twice is refused; a posted run is undone with payroll.void, which reverses the entry.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('run', RUN_VIEW_SCHEMA),
  // Its dry run, and what a held post shows the person deciding: the run's own entry — the lines the
  // post hands to the finance journal unchanged — and the records the post would change.
  async preview(input, ctx) {
    const run = await loadRun(ctx, input.id);
    if (run.status !== 'approved') throw transitionRefused(run, ['approved'], 'posted');
    const e = run.journal_entry;
    return {
      changes: [
        { source: 'payroll_runs', id: run._id, op: 'update', before: { status: 'approved', posted_at: null }, after: { status: 'posted', posted_at: ctx.now.toISOString() } },
        { source: 'payroll_journal', id: e.id, op: 'insert', after: { kind: 'posting', date: e.date, currency: e.currency, memo: e.memo, lines: e.lines } },
      ],
      journal_lines: e.lines,
    };
  },
  async handler(input, ctx) {
    const run = await loadRun(ctx, input.id);
    if (run.status === 'approved') await recordPosting(ctx.db, run, ctx.now);
    const posted = await transition(ctx, input.id, ['approved'], { status: 'posted', posted_at: ctx.now });
    // Final now: its place in the order finance reads (journal_feed.ts).
    await publish(ctx.db, ctx.workspace, posted.journal_entry.id, ctx.graph);
    return { run: runView(posted) };
  },
});
