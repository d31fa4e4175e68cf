import { CuadraError, readFeedSince, workspacePullJob, type FeedPullJob, type PeerGraph } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { openPostedAccounts } from './chart.ts';
import { balances, journalEntries, postEntry, settleJournalEntry, type EntrySource, type JournalLine } from '../books/index.ts';

/**
 * How the finance journal takes in the entries another subgraph publishes in an ordered feed
 * (shared ordered-feed.ts): payroll's (`payroll_journal_since`, payroll_pull.ts) and inventory's
 * (`inventory_journal_since`, inventory_pull.ts) — one mechanism. The publisher never writes
 * here; finance reads the feed through the graph with the read-only service assertion and writes
 * each entry it does not hold yet through postEntry under the id the publisher gave it, so a
 * retry, two pulls at once or a pull restarted after a crash write nothing twice (postEntry's own
 * once-only write and its rollup intent do the rest).
 *
 * What a pull reads: only what is new — the entries after the workspace's mark, in the order they
 * became final (so an entry made final later never takes a place below one already read), plus any
 * final entry a crash left without its place. The mark (one collection per feed) keeps that cursor
 * and the entries waiting for a month finance has closed (their rows, tried again on every pull:
 * the period guard is never bypassed, and a mark never moves past a waiting entry without keeping
 * it). The mark moves only after the entries read are written or kept waiting, with one
 * conditional update (two pulls at once: one moves it, the other's entries are the same, written
 * once by id); a crash before leaves it where it was and the next pull reads them again. A pull
 * with nothing new is one read of one short page (pages of 100, at most {@link MAX_PAGES}). A
 * publisher not configured or not answering leaves the journal as it is (a warning is logged).
 */

/** Pages of 100 entries read at most per pull. */
export const MAX_PAGES = 100;

/** A row of an ordered journal feed, as both publishers answer it. */
export interface FeedRow { id: string; kind: string; date: string; currency: string; memo: string; lines: JournalLine[]; seq?: number | null; [extra: string]: unknown }

/** A workspace's mark in a feed: where the next pull starts, and the entries waiting for a closed month. */
export interface MarkDoc { _id: string; cursor: string | null; waiting: FeedRow[]; version: number }

/** One feed finance pulls. */
export interface JournalFeed {
  /** The publishing subgraph (the graph's `<subgraph>Records` field). */
  subgraph: string;
  /** Its records feed. */
  source: string;
  /** The marks collection (`_id` = workspace). */
  marks: string;
  /** Whether a row is one this feed may write (its id, kind and fields; the lines are checked to balance here). */
  accepts(row: FeedRow): boolean;
  /** The journal source a row's entry is written under (a kind declared in a manifest's `journalSources`). */
  entrySource(row: FeedRow): EntrySource;
  /** The order a page's rows are written in (default: the feed's). */
  order?(rows: FeedRow[]): FeedRow[];
  /**
   * Whether a pull waits for an entry another writer holds and is still counting (a pull before a
   * read, whose statements must count it; payroll's). A background pull does not: the entry is
   * written, and one whose writer died is counted by the books' repair — waiting would stop the
   * pull, and every entry after it, until then.
   */
  waitForCounting?: boolean;
}

/** What one pull did: entries written, and entries left for a closed month. */
export interface PullResult { written: string[]; blocked: { id: string; date: string }[]; reachable: boolean }

/** A feed's marks. */
export function feedMarks(db: Connection, feed: Pick<JournalFeed, 'marks'>) {
  return db.collection<MarkDoc>(feed.marks);
}

function wellFormed(feed: JournalFeed, r: FeedRow): boolean {
  return typeof r?.id === 'string' && /^je_[A-Za-z0-9_-]+$/.test(r.id) && typeof r.kind === 'string'
    && typeof r.date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(r.date) && typeof r.currency === 'string' && typeof r.memo === 'string'
    && Array.isArray(r.lines) && r.lines.every((l) => typeof l.account === 'string' && /^\d{1,10}$/.test(l.account) && Number.isSafeInteger(l.debit) && Number.isSafeInteger(l.credit) && l.debit >= 0 && l.credit >= 0)
    && balances(r.lines) && feed.accepts(r);
}

/**
 * Pulls a feed's final journal entries into the workspace's journal (see above). Never throws for
 * the publisher's sake: an unreachable one is `reachable: false`.
 */
export async function pullJournalFeed(feed: JournalFeed, db: Connection, workspace: string, graph: PeerGraph | undefined, now: Date, log?: { warn: (o: object, m: string) => void }): Promise<PullResult> {
  const result: PullResult = { written: [], blocked: [], reachable: false };
  if (!graph) return result;
  const marks = feedMarks(db, feed);
  const mark = await marks.findOne({ _id: workspace });
  let fresh: FeedRow[];
  let cursor: string | undefined;
  try {
    ({ rows: fresh, cursor } = await readFeedSince<FeedRow>(graph, feed.subgraph, feed.source, mark?.cursor ?? undefined, MAX_PAGES));
  } catch (err) {
    // Not configured (no URL), not answering, or refusing: the journal stays as it is.
    log?.warn({ err: (err as Error).message, workspace, feed: feed.source }, 'journal entries could not be pulled');
    return result;
  }
  result.reachable = true;
  // The waiting ones first (read before), then the new ones in the feed's order; once each.
  const seen = new Set<string>();
  const rows = [...(mark?.waiting ?? []), ...fresh].filter((r) => (seen.has(r?.id) ? false : (seen.add(r?.id), true)));
  const model = journalEntries(db);
  const ids = rows.map((r) => r?.id).filter((id): id is string => typeof id === 'string');
  const found = ids.length ? await model.find({ _id: { $in: ids }, workspace }, { _id: 1, pending_count: 1 }).lean<{ _id: string; pending_count?: number }[]>() : [];
  const held = new Set(found.map((e) => e._id));
  // An entry another pull is still counting (written, rollups in flight) is counted before this read goes on.
  if (feed.waitForCounting) for (const e of found) if (e.pending_count) await settleJournalEntry(db, e._id);
  for (const r of feed.order ? feed.order(rows) : rows) {
    if (held.has(r?.id)) continue;
    if (!wellFormed(feed, r)) {
      log?.warn({ id: r?.id, workspace, feed: feed.source }, 'a journal entry of a feed is not well formed; left out');
      continue;
    }
    const lines = r.lines.map((l) => ({ account: l.account, name: String(l.name), debit: l.debit, credit: l.credit, party_id: null }));
    await openPostedAccounts(db, workspace, lines, now);
    try {
      await postEntry({ db, workspace, now }, feed.entrySource(r), lines, { id: r.id, date: r.date, currency: r.currency, memo: r.memo });
      result.written.push(r.id);
    } catch (err) {
      if (err instanceof CuadraError && err.code === 'conflict') {
        result.blocked.push({ id: r.id, date: r.date });
        log?.warn({ id: r.id, date: r.date, workspace, feed: feed.source }, 'a journal entry of a feed is dated in a closed month; written once the month is reopened');
        continue;
      }
      throw err;
    }
  }
  // Moved only now, everything read written or kept waiting; a lost race leaves the other pull's mark (same entries).
  const waiting = rows.filter((r) => result.blocked.some((b) => b.id === r.id));
  // Nothing new and nothing waiting: the mark stays as it is (a pull that finds nothing writes nothing).
  if (mark && rows.length === 0 && (cursor ?? null) === mark.cursor) return result;
  const next = { cursor: cursor ?? null, waiting, version: (mark?.version ?? 0) + 1 };
  if (mark) await marks.updateOne({ _id: workspace, version: mark.version }, { $set: next });
  else await marks.insertOne({ _id: workspace, ...next }).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  return result;
}

/** A journal feed's background pull: the job the journal module declares, and the hint that wakes a workspace. */
export type JournalFeedPullJob = FeedPullJob;

/**
 * The background pull of one journal feed (never in a read: reads never write), on the shared
 * {@link workspacePullJob}: every `everyMs`, each workspace woken or known (default: those holding
 * a mark in the feed) that is due — woken ones on every pass, the others less often the longer
 * they have nothing new (up to 5 minutes). An entry kept waiting for a closed month does not count
 * as news (it waits for the reopen, which wakes the pull).
 */
export function journalFeedPullJob(feed: JournalFeed, opts: { name: string; everyMs: number; known?: (db: Connection) => Promise<string[]> }): JournalFeedPullJob {
  return workspacePullJob({
    name: opts.name, everyMs: opts.everyMs, service: 'invoices', subgraph: feed.subgraph,
    known: opts.known ?? (async (db: Connection) => (await feedMarks(db, feed).distinct('_id')) as string[]),
    pull: async (db, workspace, graph, now, log) => {
      const r = await pullJournalFeed(feed, db, workspace, graph, now, log);
      return { count: r.written.length, foundSomething: r.written.length > 0 };
    },
  });
}
