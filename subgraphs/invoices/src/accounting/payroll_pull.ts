import { onceInRead, type MetricReader, type PeerGraph, type ReadContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { feedMarks, pullJournalFeed, type JournalFeed, type PullResult } from './feed_pull.ts';

export type { PullResult } from './feed_pull.ts';

/**
 * The finance journal takes in payroll's postings (ARCHITECTURE.md, "Payroll postings"): it reads
 * the payroll subgraph's `payroll_journal` source through the graph with the read-only service
 * assertion (shared peers.ts) and writes each entry it does not hold yet through
 * postEntry, under the id payroll gave it (`je_<run id>`, `je_<run id>_void`). Payroll
 * never writes here; the pull is idempotent by id, so a retry, two pulls at once or a pull
 * restarted after a crash write nothing twice (postEntry's own once-only write and its
 * rollup intent do the rest).
 *
 * When it runs: before every read of the journal and the statements (the `journal_entries`
 * source, the statement metrics, accounts.export_statement) and before a month is closed, in
 * the caller's workspace. There is no background pull: the service holds no list of workspaces
 * to pull for, and reading is the moment the entries must be there.
 *
 * A month finance has closed: the period guard is never bypassed. An entry dated in it is not
 * written; it waits in the workspace's mark (below) and is written by the first pull after the
 * month is reopened (periods.reopen). `periods.close` pulls first, so closing a month takes in the
 * payroll already posted into it.
 *
 * What a pull reads and how it moves its mark (`payroll_pull_marks`): the one mechanism of every
 * ordered journal feed finance takes in (feed_pull.ts).
 * Payroll not configured or not answering leaves the journal as it is (the read goes on; a
 * warning is logged) — the next read pulls again.
 */

/** Payroll's feed (payroll journal_feed.ts): its postings and their reversals, a posting before its reversal. */
export const PAYROLL_FEED: JournalFeed = {
  subgraph: 'payroll',
  source: 'payroll_journal_since',
  marks: 'payroll_pull_marks',
  accepts: (r) => typeof r.run_id === 'string' && (r.kind === 'posting' || r.kind === 'reversal'),
  entrySource: (r) => ({ kind: r.kind === 'posting' ? 'payroll' : 'payroll_reversal', id: r.run_id as string }),
  // Payroll's order has it so, but not a pending posting a crash left without its place.
  order: (rows) => [...rows.filter((r) => r?.kind !== 'reversal'), ...rows.filter((r) => r?.kind === 'reversal')],
  // Pulled before the journal's reads: what they show must count every entry.
  waitForCounting: true,
};

/** The marks (`_id` = workspace). */
export function payrollPullMarks(db: Connection) {
  return feedMarks(db, PAYROLL_FEED);
}

/**
 * Pulls payroll's final journal entries into the workspace's journal (see above). Never throws
 * for payroll's sake: an unreachable payroll is `reachable: false`.
 */
export function pullPayrollEntries(db: Connection, workspace: string, graph: PeerGraph | undefined, now: Date, log?: { warn: (o: object, m: string) => void }): Promise<PullResult> {
  return pullJournalFeed(PAYROLL_FEED, db, workspace, graph, now, log);
}

/** A metric read from the journal's rollups, with payroll's postings pulled in first (see {@link pullPayrollEntries}). */
export function afterPayrollPull(reader: MetricReader): MetricReader {
  return async (q, ctx) => {
    await pullPayrollOnce(ctx);
    return reader(q, ctx);
  };
}

/** {@link pullPayrollEntries} once per GraphQL operation: a dashboard's statement, cash-flow, forecast and journal reads share one pull. */
export function pullPayrollOnce(ctx: ReadContext): Promise<PullResult> {
  return onceInRead(ctx, 'payroll-pull', () => pullPayrollEntries(ctx.db, ctx.workspace, ctx.graph, ctx.now));
}
