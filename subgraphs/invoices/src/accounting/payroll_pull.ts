import { CuadraError, onceInRead, type MetricReader, type PeerGraph, type ReadContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { openPostedAccounts } from './chart.ts';
import { balances, journalEntries, postEntry, settleJournalEntry, type JournalLine } from '../books/index.ts';

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
 * What a pull reads: only what is new. Payroll's `payroll_journal_since` feed answers entries in
 * the order they became final (a dense `seq` payroll sets once a run has moved, so an entry made
 * final later never takes a place below one already read, whatever order payroll's writers ran in;
 * payroll journal_feed.ts) after a cursor, plus any final entry a crash left without its place.
 * The workspace's mark (`payroll_pull_marks`) keeps that cursor and the entries waiting for a
 * closed month (their rows, tried again on every pull: a mark never moves past a waiting entry
 * without keeping it). The mark moves only after the entries read are written or kept waiting,
 * with one conditional update (two pulls at once: one moves it, the other's entries are the same,
 * written once by id); a crash before leaves it where it was and the next pull reads them again.
 * A pull with nothing new is one read of one short page (pages of 100, at most {@link MAX_PAGES}).
 * Payroll not configured or not answering leaves the journal as it is (the read goes on; a
 * warning is logged) — the next read pulls again.
 */

/** Pages of 100 entries read at most per pull (10,000 entries: some three centuries of semi-monthly payroll). */
export const MAX_PAGES = 100;

const QUERY = 'query($q: JSON!) { payrollRecords(query: $q) }';
const PAGE = 100;

interface FeedRow { id: string; run_id: string; kind: 'posting' | 'reversal'; date: string; currency: string; memo: string; lines: JournalLine[]; seq?: number | null }

/** A workspace's mark in payroll's feed: where the next pull starts, and the entries waiting for a closed month. */
interface MarkDoc { _id: string; cursor: string | null; waiting: FeedRow[]; version: number }

/** The marks (`_id` = workspace). */
export function payrollPullMarks(db: Connection) {
  return db.collection<MarkDoc>('payroll_pull_marks');
}

/** What one pull did: entries written, and entries left for a closed month. */
export interface PullResult { written: string[]; blocked: { id: string; date: string }[]; reachable: boolean }

function wellFormed(r: FeedRow): boolean {
  return typeof r.id === 'string' && /^je_[A-Za-z0-9_-]+$/.test(r.id) && typeof r.run_id === 'string' && (r.kind === 'posting' || r.kind === 'reversal')
    && typeof r.date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(r.date) && typeof r.currency === 'string' && typeof r.memo === 'string'
    && Array.isArray(r.lines) && r.lines.every((l) => typeof l.account === 'string' && /^\d{1,10}$/.test(l.account)) && balances(r.lines);
}

/**
 * Pulls payroll's final journal entries into the workspace's journal (see above). Never throws
 * for payroll's sake: an unreachable payroll is `reachable: false`.
 */
export async function pullPayrollEntries(db: Connection, workspace: string, graph: PeerGraph | undefined, now: Date, log?: { warn: (o: object, m: string) => void }): Promise<PullResult> {
  const result: PullResult = { written: [], blocked: [], reachable: false };
  if (!graph) return result;
  const marks = payrollPullMarks(db);
  const mark = await marks.findOne({ _id: workspace });
  const fresh: FeedRow[] = [];
  let cursor = mark?.cursor ?? undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const data = await graph('payroll', QUERY, { q: { source: 'payroll_journal_since', limit: PAGE, ...(cursor ? { cursor } : {}) } });
      const answer = data.payrollRecords as { rows: FeedRow[]; next_cursor?: string };
      fresh.push(...answer.rows);
      cursor = answer.next_cursor ?? cursor;
      // Fewer than a page of entries in their place: caught up.
      if (answer.rows.filter((r) => typeof r.seq === 'number').length < PAGE) break;
    }
  } catch (err) {
    // Not configured (no payroll URL), not answering, or refusing: the journal stays as it is.
    log?.warn({ err: (err as Error).message, workspace }, 'payroll journal entries could not be pulled');
    return result;
  }
  result.reachable = true;
  // The waiting ones first (read before), then the new ones in payroll's order; once each.
  const seen = new Set<string>();
  const rows = [...(mark?.waiting ?? []), ...fresh].filter((r) => (seen.has(r?.id) ? false : (seen.add(r?.id), true)));
  const model = journalEntries(db);
  const ids = rows.map((r) => r.id);
  const found = ids.length ? await model.find({ _id: { $in: ids }, workspace }, { _id: 1, pending_count: 1 }).lean<{ _id: string; pending_count?: number }[]>() : [];
  const held = new Set(found.map((e) => e._id));
  // An entry another pull is still counting (written, rollups in flight) is counted before this read goes on.
  for (const e of found) if (e.pending_count) await settleJournalEntry(db, e._id);
  // A posting before its reversal (payroll's order has it so, but not a pending posting a crash left without its place).
  const ordered = [...rows.filter((r) => r?.kind !== 'reversal'), ...rows.filter((r) => r?.kind === 'reversal')];
  for (const r of ordered) {
    if (held.has(r.id)) continue;
    if (!wellFormed(r)) {
      log?.warn({ id: r?.id, workspace }, 'a payroll journal entry is not well formed; left out');
      continue;
    }
    const lines = r.lines.map((l) => ({ account: l.account, name: String(l.name), debit: l.debit, credit: l.credit, party_id: null }));
    await openPostedAccounts(db, workspace, lines, now);
    try {
      await postEntry({ db, workspace, now }, { kind: r.kind === 'posting' ? 'payroll' : 'payroll_reversal', id: r.run_id }, lines, { id: r.id, date: r.date, currency: r.currency, memo: r.memo });
      result.written.push(r.id);
    } catch (err) {
      if (err instanceof CuadraError && err.code === 'conflict') {
        result.blocked.push({ id: r.id, date: r.date });
        log?.warn({ id: r.id, date: r.date, workspace }, 'a payroll journal entry is dated in a closed month; written once the month is reopened');
        continue;
      }
      throw err;
    }
  }
  // Moved only now, everything read written or kept waiting; a lost race leaves the other pull's mark (same entries).
  const waiting = rows.filter((r) => result.blocked.some((b) => b.id === r.id));
  const next = { cursor: cursor ?? null, waiting, version: (mark?.version ?? 0) + 1 };
  if (mark) await marks.updateOne({ _id: workspace, version: mark.version }, { $set: next });
  else await marks.insertOne({ _id: workspace, ...next }).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  return result;
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
