import type { Connection } from 'mongoose';
import type { Logger } from './logger.ts';
import type { BackgroundJob } from './module.ts';
import { peerGraph, type PeerConfig, type PeerGraph } from './peers.ts';

/**
 * How a subgraph takes in another's ordered feed (shared ordered-feed.ts) when what it makes of a
 * row is its own records rather than journal entries (crm and finance reading the bookings'
 * changes; the finance journal's own pull is accounting/feed_pull.ts): read only what is new after
 * the workspace's mark, apply it, then move the mark.
 *
 * The mark (`_id` = workspace, one collection per reader) keeps the cursor and the rows the reader
 * could not apply yet (it said so: they wait and are tried again first on every pull). It moves
 * only after the rows read are applied or kept waiting, by one conditional update on its version
 * (two pulls at once: one moves it; the other's rows are the same, and applying a row twice must
 * write nothing twice — the reader's records are keyed by the row). A crash before leaves it where
 * it was and the next pull reads the rows again. A publisher not configured or not answering
 * leaves everything as it is (a warning is logged).
 */
export interface FeedReader<R extends { id: string; seq?: number | null }> {
  /** The publishing subgraph (its `<subgraph>Records` field). */
  subgraph: string;
  /** Its feed source. */
  source: string;
  /** This reader's marks collection. */
  marks: string;
  /**
   * Applies rows in order; answers the ids of those that must wait (something they need is not
   * there yet). Must be idempotent per row.
   */
  apply(db: Connection, workspace: string, rows: R[], graph: PeerGraph, now: Date, log?: Logger): Promise<string[]>;
}

interface FeedMark<R> { _id: string; cursor: string | null; waiting: R[]; version: number }

/** Rows asked per page. */
const PAGE = 100;

/**
 * Reads a feed's rows after `cursor` through the graph, page after page until a page holds fewer
 * than {@link PAGE} rows in their place (caught up) or `maxPages` were read. Answers the rows and
 * where the next read starts; throws what the graph throws (the publisher not answering).
 */
export async function readFeedSince<R extends { seq?: number | null }>(graph: PeerGraph, subgraph: string, source: string, cursor: string | undefined, maxPages = 50): Promise<{ rows: R[]; cursor: string | undefined }> {
  const rows: R[] = [];
  let next = cursor;
  for (let page = 0; page < maxPages; page += 1) {
    const data = await graph(subgraph, `query($q: JSON!) { ${subgraph}Records(query: $q) }`, { q: { source, limit: PAGE, ...(next ? { cursor: next } : {}) } });
    const answer = data[`${subgraph}Records`] as { rows: R[]; next_cursor?: string };
    rows.push(...answer.rows);
    next = answer.next_cursor ?? next;
    if (answer.rows.filter((r) => typeof r.seq === 'number').length < PAGE) break;
  }
  return { rows, cursor: next };
}

/** What one pull did. */
export interface FeedPullResult { applied: number; waiting: number; reachable: boolean }

/** Pulls one workspace's new rows of a feed through the graph and applies them (see {@link FeedReader}). Never throws for the publisher's sake. */
export async function pullFeed<R extends { id: string; seq?: number | null }>(reader: FeedReader<R>, db: Connection, workspace: string, graph: PeerGraph, now: Date, log?: Logger): Promise<FeedPullResult> {
  const marks = db.collection<FeedMark<R>>(reader.marks);
  const mark = await marks.findOne({ _id: workspace });
  let fresh: R[];
  let cursor: string | undefined;
  try {
    ({ rows: fresh, cursor } = await readFeedSince<R>(graph, reader.subgraph, reader.source, mark?.cursor ?? undefined));
  } catch (err) {
    log?.warn({ err: (err as Error).message, workspace, feed: reader.source }, 'a feed could not be pulled');
    return { applied: 0, waiting: mark?.waiting.length ?? 0, reachable: false };
  }
  const seen = new Set<string>();
  const rows = [...(mark?.waiting ?? []), ...fresh].filter((r) => typeof r?.id === 'string' && !seen.has(r.id) && (seen.add(r.id), true));
  if (mark && rows.length === 0 && (cursor ?? null) === mark.cursor) return { applied: 0, waiting: 0, reachable: true };
  const waitingIds = new Set(rows.length ? await reader.apply(db, workspace, rows, graph, now, log) : []);
  const waiting = rows.filter((r) => waitingIds.has(r.id));
  const next = { cursor: cursor ?? null, waiting, version: (mark?.version ?? 0) + 1 };
  // A lost race leaves the other pull's mark: the same rows, applied once by their keys.
  if (mark) await marks.updateOne({ _id: workspace, version: mark.version }, { $set: next });
  else await marks.insertOne({ _id: workspace, ...next }).catch((err: { code?: number }) => { if (err.code !== 11000) throw err; });
  return { applied: rows.length - waiting.length, waiting: waiting.length, reachable: true };
}

/**
 * When each workspace's feed is pulled by a background job: on every pass while the publisher has
 * hinted that it grew ({@link PullSchedule.wake}, this process's memory), otherwise less often the
 * longer a pull finds nothing (from `everyMs` doubling up to `maxIdleMs`). Hints are never the
 * record: a workspace the reader has a mark for is pulled without them.
 */
export class PullSchedule {
  readonly #woken = new Map<string, number>();
  readonly #due = new Map<string, { at: number; wait: number }>();
  readonly #times: { everyMs: number; maxIdleMs: number; wokenMs: number };

  constructor(everyMs: number, maxIdleMs: number, wokenMs = 10_000) {
    this.#times = { everyMs, maxIdleMs, wokenMs };
  }

  /** The publisher said the workspace's feed grew: pull it on every pass for a while. */
  wake(workspace: string, now = Date.now()): void {
    if (this.#woken.size >= 10_000) this.#woken.clear();
    this.#woken.set(workspace, now + this.#times.wokenMs);
    this.#due.delete(workspace);
  }

  /** The workspaces due now, of the woken ones and `known` (those with a mark). */
  due(known: Iterable<string>, now: number): string[] {
    for (const [ws, until] of this.#woken) if (until < now) this.#woken.delete(ws);
    return [...new Set([...this.#woken.keys(), ...known])].filter((ws) => this.#woken.has(ws) || (this.#due.get(ws)?.at ?? 0) <= now);
  }

  /** Notes a pull: found something (or first pull) → soon again; nothing → wait twice as long. */
  pulled(workspace: string, foundSomething: boolean, now: number): void {
    const state = this.#due.get(workspace);
    const wait = foundSomething || !state ? this.#times.everyMs : Math.min(this.#times.maxIdleMs, state.wait * 2);
    if (this.#due.size > 100_000) this.#due.clear();
    this.#due.set(workspace, { at: now + wait, wait });
  }
}

/** The workspaces a reader holds a mark for (its background job pulls them without hints). */
export async function markedWorkspaces(db: Connection, reader: Pick<FeedReader<never>, 'marks'>): Promise<string[]> {
  return (await db.collection(reader.marks).distinct('_id')) as unknown as string[];
}

/** A feed reader's background pull: the job a module declares, and the hint its graph field gives. */
export interface FeedPullJob {
  job: BackgroundJob;
  /** The publisher said the workspace's feed grew (see {@link PullSchedule.wake}). */
  wake(workspace: string): void;
  /** One pass (what the job runs): every woken or marked workspace that is due. Answers how many rows it applied. */
  pass(db: Connection, peers: PeerConfig | undefined, log: Logger, now: Date): Promise<number>;
}

/** How a feed's background pull runs. */
export interface FeedPullOptions {
  /** The job's name. */
  name: string;
  /** The reading subgraph (the service assertion the feed is read with). */
  service: string;
  /** How often a pass runs (and how soon a workspace that found something is pulled again). */
  everyMs: number;
  /** The longest a workspace with nothing new waits between two pulls (default 5 minutes). */
  maxIdleMs?: number;
  /**
   * The workspaces pulled without a hint (default: those holding a mark). A reader whose own
   * records say which workspaces take the feed names them here (inventory: those with a
   * warehouse), so their first row is pulled though nothing woke them.
   */
  known?: (db: Connection) => Promise<string[]>;
}

/** What one workspace's pull answers a {@link workspacePullJob}: how much it took in, and whether it found anything (sooner again). */
export interface WorkspacePull { count: number; foundSomething: boolean }

/**
 * A background pull by `service` of one publisher (`subgraph`), one workspace at a time: every
 * `everyMs`, each workspace woken or `known` that is due ({@link PullSchedule}), pulled by `pull`
 * with a graph under `service`'s assertion. What both {@link feedPullJob} and finance's journal
 * feeds run. Never in a read (reads never write).
 */
export function workspacePullJob(opts: Omit<FeedPullOptions, 'known'> & {
  subgraph: string;
  known: (db: Connection) => Promise<string[]>;
  pull(db: Connection, workspace: string, graph: PeerGraph, now: Date, log: Logger): Promise<WorkspacePull>;
}): FeedPullJob {
  const schedule = new PullSchedule(opts.everyMs, opts.maxIdleMs ?? 5 * 60_000);
  const pass = async (db: Connection, peers: PeerConfig | undefined, log: Logger, now: Date): Promise<number> => {
    if (!peers?.urls[opts.subgraph]) return 0;
    let count = 0;
    for (const workspace of schedule.due(await opts.known(db), now.getTime())) {
      const r = await opts.pull(db, workspace, peerGraph(opts.service, peers, workspace), now, log);
      count += r.count;
      schedule.pulled(workspace, r.foundSomething, now.getTime());
    }
    return count;
  };
  return {
    job: { name: opts.name, everyMs: opts.everyMs, run: async (db, now, log, peers) => { await pass(db, peers, log, now); } },
    wake: (workspace) => schedule.wake(workspace),
    pass,
  };
}

/**
 * The background pull of one feed by `service` (its service assertion): every `everyMs`, each
 * workspace woken or known (default: holding a mark) that is due; rows left waiting bring the workspace back as soon
 * as new ones would. Never in a read (reads never write).
 */
export function feedPullJob<R extends { id: string; seq?: number | null }>(reader: FeedReader<R>, opts: FeedPullOptions): FeedPullJob {
  return workspacePullJob({
    ...opts,
    subgraph: reader.subgraph,
    known: opts.known ?? ((db: Connection) => markedWorkspaces(db, reader)),
    pull: async (db, workspace, graph, now, log) => {
      const r = await pullFeed(reader, db, workspace, graph, now, log);
      return { count: r.applied, foundSomething: r.applied > 0 || r.waiting > 0 };
    },
  });
}
