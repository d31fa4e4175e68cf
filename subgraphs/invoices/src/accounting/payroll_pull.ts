import type { MetricReader, PeerGraph } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { feedMarks, journalFeedPullJob, pullJournalFeed, type JournalFeed, type PullResult } from './feed_pull.ts';

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
 * When it runs: in the background (journal module's `payroll journal pull`, never in a read:
 * reads never write), over every workspace holding a mark in the feed, and before a month is
 * closed or after it is reopened. What wakes a workspace (pulled on every pass for a while):
 * payroll's hint after it publishes an entry (`payrollJournalGrew`, payroll's service assertion
 * only: at most a wake, so a lost hint only delays), and a read of finance's journal or statements
 * (the `journal_entries` source, journal.list/get, the statement, cash-flow, forecast and
 * profitability metrics, accounts.export_statement) — the next passes pull it, and the reads after
 * them show the postings. A workspace holding a mark is still pulled unwoken, less often the
 * longer it has nothing new.
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
  // Pulled before a month is closed: what the close counts must hold every entry.
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

/** How often the pull runs (`INVOICES_PAYROLL_PULL_INTERVAL_MS`, default 2 s). */
const EVERY_MS = Number(process.env.INVOICES_PAYROLL_PULL_INTERVAL_MS) > 0 ? Number(process.env.INVOICES_PAYROLL_PULL_INTERVAL_MS) : 2_000;

/** The background pull of payroll's journal entries (see above). */
export const payrollPull = journalFeedPullJob(PAYROLL_FEED, { name: 'payroll journal pull', everyMs: EVERY_MS });

/** A metric read from the journal's rollups that wakes the workspace's payroll pull (memory only: the read writes nothing). */
export function wakingPayrollPull(reader: MetricReader): MetricReader {
  return (q, ctx) => {
    payrollPull.wake(ctx.workspace);
    return reader(q, ctx);
  };
}
