import { addDays, readByKeys } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { daysOf, monthsBetween } from './calendar.ts';
import { partyTotals, rangePeriods } from './rollup-reads.ts';
import { Grain, PARTY_SHARDS, partyShard, partyShardId, pendingChanges, rollupId, rollups } from './rollup-store.ts';

/**
 * The leaders of a day's or month's per-party counter (issue 33): what a top-N read
 * (top_customers, top_vendors) needs, kept at write time, so a read costs what it returns and
 * stays exact.
 *
 * One document per (workspace, namespace, grain, period, counter) in `party_leaders`:
 * - `top`: up to {@link LEADERS.kept} parties with their **exact** total of the counter in that
 *   day or month (once every write in flight is done), and `names` their last known names;
 * - `bound`: every party not in `top` has a total ≤ `bound` in that day or month (≥ 0: a party
 *   with nothing there has 0);
 * - `low`: every party's total there is ≥ `low` (≤ 0; below 0 only after decreases: credit notes);
 * - `ver`: bumped by every write, which is conditional on the `ver` it read (compare-and-set).
 *
 * The store gives one document's atomicity only (INFRA.md), so after its counters are in the
 * party's shard, a writer reads this document, THEN the party's exact total from the shard (and
 * the day or month document, where parties were kept before the shards), and writes the result
 * conditionally on the version it read, trying again if another writer came first. It writes when
 * the party is listed (its exact total), when its total passes `bound` (it enters; the smallest
 * listed one leaves, raising `bound` to that one's total), and whenever its change was a decrease
 * (even if nothing in the list changes: the version moves, so a writer that read the party's total
 * before the decrease cannot list that older, higher total afterwards). A party that is not listed,
 * whose total grew and stays ≤ `bound`, writes nothing. Whatever order concurrent writers land in,
 * once they are all done every listed total is exact and every unlisted party is ≤ `bound` and
 * ≥ `low` (ARCHITECTURE.md "Top parties"). Rewriting a writer's step (a repair after a crash) is
 * harmless: it reads the totals afresh.
 */
export interface LeadersDoc {
  _id: string;
  workspace: string;
  currency: string;
  grain: Grain;
  period: string;
  key: string;
  ver: number;
  top: Record<string, number>;
  names: Record<string, string>;
  bound: number;
  low: number;
}

/**
 * How many parties a leaders document keeps: a few times the largest N a top-N read answers (100).
 * (`kept` is a setting only so tests can make lists overflow with a few dozen parties.)
 */
export const LEADERS = { kept: 300 };

/** The counters top-N reads rank by: receivables' revenue (top_customers), payables' spend (top_vendors). */
export const LEADER_KEYS: readonly string[] = ['revenue', 'spend'];

/** The collection of leaders documents. */
export function partyLeaders(db: Connection) {
  return db.collection<LeadersDoc>('party_leaders');
}

/** Id of the leaders of `key` in a day or month: `<rollup id>|L|<key>`. */
export function leadersId(workspace: string, currency: string, grain: Grain, period: string, key: string): string {
  return `${rollupId(workspace, currency, grain, period)}|L|${key}`;
}

/** The marker (in `migrations`) of a database whose days and months all have their leaders. */
export const LEADERS_MARKER = 'party-leaders-v1';

const ready = new WeakMap<Connection, boolean>();

/** Whether every day and month of this database has its leaders (the start-up backfill is done). Cached once true. */
export async function leadersReady(db: Connection): Promise<boolean> {
  if (ready.get(db)) return true;
  const done = (await db.collection<{ _id: string }>('migrations').findOne({ _id: LEADERS_MARKER })) !== null;
  if (done) ready.set(db, true);
  return done;
}

/** A party's exact total of `key` in a day or month: its shard plus the day or month document itself (parties kept there before the shards). */
async function partyValue(db: Connection, workspace: string, currency: string, grain: Grain, period: string, party: string, key: string): Promise<number> {
  const ids = [rollupId(workspace, currency, grain, period), partyShardId(workspace, currency, grain, period, partyShard(grain, party))];
  const docs = await rollups(db).collection.find({ _id: { $in: ids } } as never, { projection: { [`c.${party}.${key}`]: 1 } }).toArray();
  return docs.reduce((s, d) => s + (((d as { c?: Record<string, Record<string, number>> }).c?.[party]?.[key]) ?? 0), 0);
}

const EMPTY: Pick<LeadersDoc, 'ver' | 'top' | 'names' | 'bound' | 'low'> = { ver: 0, top: {}, names: {}, bound: 0, low: 0 };

/** The listed party that ranks last (smallest total; of equal totals, the largest id). */
function lastOf(top: Record<string, number>): string {
  let worst = '';
  let worstValue = Infinity;
  for (const [p, v] of Object.entries(top)) {
    if (v < worstValue || (v === worstValue && p > worst)) {
      worst = p;
      worstValue = v;
    }
  }
  return worst;
}

/** Writes a new state of a leaders document if it is still at `ver` (inserting it when `ver` is 0 and it is absent). */
async function compareAndSet(db: Connection, id: string, ver: number, state: Omit<LeadersDoc, '_id' | 'ver'>): Promise<boolean> {
  const coll = partyLeaders(db);
  if (ver === 0) {
    try {
      await coll.insertOne({ _id: id, ...state, ver: 1 });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return false;
      throw err;
    }
  }
  const r = await coll.updateOne({ _id: id, ver }, { $set: { top: state.top, names: state.names, bound: state.bound, low: state.low }, $inc: { ver: 1 } });
  return r.modifiedCount === 1;
}

/** One party's change of one ranked counter in a day or month: what {@link updateLeaders} takes. */
export interface LeaderChange {
  workspace: string;
  currency: string;
  grain: Grain;
  period: string;
  key: string;
  party: string;
  name: string;
  /** The sign of the change (a decrease always writes: see {@link LeadersDoc}). */
  delta: number;
}

/** The leaders a party's change of counters lands in: its day's and month's, for each ranked counter it changes. */
export function leaderChangesOf(workspace: string, currency: string, day: string, party: { id: string; name: string; inc: Record<string, number> } | null | undefined): LeaderChange[] {
  if (!party) return [];
  const out: LeaderChange[] = [];
  for (const key of LEADER_KEYS) {
    const delta = party.inc[key];
    if (!delta) continue;
    for (const [grain, period] of [[Grain.Day, day], [Grain.Month, day.slice(0, 7)]] as const) {
      out.push({ workspace, currency, grain, period, key, party: party.id, name: party.name, delta });
    }
  }
  return out;
}

/**
 * Brings a leaders document up to date with one party's change, after the change is in the
 * party's shard (see {@link LeadersDoc} for why this order and these rules keep it exact).
 */
export async function updateLeaders(db: Connection, change: LeaderChange): Promise<void> {
  const { workspace, currency, grain, period, key, party, name, delta } = change;
  const id = leadersId(workspace, currency, grain, period, key);
  for (let attempt = 0; ; attempt++) {
    const found = await partyLeaders(db).findOne({ _id: id });
    const cur: Pick<LeadersDoc, 'ver' | 'top' | 'names' | 'bound' | 'low'> = found ?? { ...EMPTY, top: {}, names: {} };
    // The total is read after the leaders document: see LeadersDoc.
    const total = await partyValue(db, workspace, currency, grain, period, party, key);
    const top = { ...cur.top };
    const names = { ...cur.names };
    let bound = cur.bound;
    const low = Math.min(cur.low, total);
    if (party in top) {
      if (total <= bound) {
        // Back under the bound: it may leave without raising it.
        delete top[party];
        delete names[party];
      } else {
        top[party] = total;
        names[party] = name;
      }
    } else if (total > bound) {
      top[party] = total;
      names[party] = name;
      if (Object.keys(top).length > LEADERS.kept) {
        const out = lastOf(top);
        bound = Math.max(bound, top[out]);
        delete top[out];
        delete names[out];
      }
    } else if (delta > 0 && low === cur.low) {
      return; // Not listed, grown, still ≤ bound: nothing to change.
    }
    const state = { workspace, currency, grain, period, key, top, names, bound, low };
    if (await compareAndSet(db, id, found ? found.ver : 0, state)) return;
    if (attempt > 1_000) throw new Error(`leaders ${id}: no write landed after 1,000 attempts`);
  }
}

/**
 * Rebuilds a day's or month's leaders of `key` from its per-party counters (a start-up backfill,
 * a bulk load): every party's exact total is read, and the result written conditionally on the
 * version read first, with the same rules as {@link updateLeaders} (a party not listed enters only
 * above the bound it read; the bound never falls), so writers at the same time keep it exact.
 */
export async function rebuildLeaders(db: Connection, workspace: string, currency: string, grain: Grain, period: string, key: string): Promise<void> {
  const id = leadersId(workspace, currency, grain, period, key);
  const ids = [rollupId(workspace, currency, grain, period), ...Array.from({ length: PARTY_SHARDS[grain] ?? 0 }, (_, i) => partyShardId(workspace, currency, grain, period, i))];
  for (;;) {
    const found = await partyLeaders(db).findOne({ _id: id });
    const cur: Pick<LeadersDoc, 'ver' | 'top' | 'names' | 'bound' | 'low'> = found ?? { ...EMPTY, top: {}, names: {} };
    const totals = new Map<string, number>();
    const latestNames = new Map<string, string>();
    for (const d of await rollups(db).collection.find({ _id: { $in: ids } } as never, { projection: { c: 1, n: 1 } }).toArray()) {
      const doc = d as { c?: Record<string, Record<string, number>>; n?: Record<string, string> };
      for (const [p, counters] of Object.entries(doc.c ?? {})) {
        if (counters?.[key] === undefined) continue;
        totals.set(p, (totals.get(p) ?? 0) + counters[key]);
        if (doc.n?.[p]) latestNames.set(p, doc.n[p]);
      }
    }
    const top: Record<string, number> = {};
    const names: Record<string, string> = {};
    let bound = cur.bound;
    let low = cur.low;
    for (const [p, v] of totals) {
      low = Math.min(low, v);
      if (v > bound) {
        top[p] = v;
        names[p] = latestNames.get(p) ?? cur.names[p] ?? p;
      }
    }
    const ranked = Object.keys(top).sort((a, b) => top[b] - top[a] || a.localeCompare(b));
    for (const out of ranked.slice(LEADERS.kept)) {
      bound = Math.max(bound, top[out]);
      delete top[out];
      delete names[out];
    }
    if (await compareAndSet(db, id, found ? found.ver : 0, { workspace, currency, grain, period, key, top, names, bound, low })) return;
  }
}

/**
 * The changes of the ranked counters of a namespace (collection `party_writes`), what lets a top-N
 * answer kept for a window ({@link topParties}) be brought up to date by the few parties changed
 * since, instead of being found again:
 * - one document per workspace and namespace, `_id` `<workspace>|<namespace>`: `seq`, the number of
 *   changes so far, and by counter and month the number of changes there
 *   (`{ seq: 52, revenue: { '2026-11': 41, … }, spend: { … } }`), both moved by one `$inc`;
 * - {@link LOG_SLOTS} log documents, `_id` `<workspace>|<namespace>|<seq mod LOG_SLOTS>`: the change
 *   numbered `s` (its party, its name, its day and counters), overwritten by the change
 *   {@link LOG_SLOTS} later.
 * A post counts its change after the party's shard and leaders have it ({@link countPartyWrite}):
 * whoever reads a count has every counted change in the shards.
 */
export function partyWrites(db: Connection) {
  return db.collection<PartyWritesDoc>('party_writes');
}

/** A namespace's counts of changes, or one slot of its log (see {@link partyWrites}). */
export interface PartyWritesDoc {
  _id: string;
  seq?: number;
  s?: number;
  p?: string;
  n?: string;
  d?: string;
  k?: string[];
  [counter: string]: unknown;
}

/** Id of a namespace's counts of changes: `<workspace>|<namespace>`. */
export function partyWritesId(workspace: string, currency: string): string {
  return `${workspace}|${currency}`;
}

/** How many changes the log keeps (a ring); a kept answer more than {@link CATCH_UP.changes} behind is found again. */
const LOG_SLOTS = 64;

/** Id of the log slot of change `seq`. */
function logSlotId(workspace: string, currency: string, seq: number): string {
  return `${partyWritesId(workspace, currency)}|${seq % LOG_SLOTS}`;
}

/**
 * Counts a party's change of ranked counters and logs it: the last step of a post's party change,
 * after its shard and leaders. One `$inc` (the change's number and its month's count), then its log
 * slot. A repair that runs the step again counts and logs it again (harmless: a kept answer only
 * reads that party's totals once more). A process that dies between the two leaves a slot that does
 * not hold its number: a kept answer that needs it is found again.
 */
export async function countPartyWrite(db: Connection, workspace: string, currency: string, day: string, party: { id: string; name: string; inc: Record<string, number> } | null | undefined): Promise<void> {
  const keys = LEADER_KEYS.filter((k) => party?.inc[k]);
  if (!party || keys.length === 0) return;
  const inc: Record<string, number> = { seq: 1 };
  for (const key of keys) inc[`${key}.${day.slice(0, 7)}`] = 1;
  const counted = await partyWrites(db).findOneAndUpdate({ _id: partyWritesId(workspace, currency) }, { $inc: inc } as never, { upsert: true, returnDocument: 'after', projection: { seq: 1 } });
  const seq = counted?.seq;
  if (typeof seq !== 'number') throw new Error(`party_writes ${partyWritesId(workspace, currency)}: no count after $inc`);
  await partyWrites(db).replaceOne({ _id: logSlotId(workspace, currency, seq) }, { s: seq, p: party.id, n: party.name, d: day, k: keys }, { upsert: true });
}

/**
 * Builds the leaders of every day and month of `workspace` (or of the whole database) that has
 * per-party counters: once at start-up for the data written before leaders were kept (marked done
 * in `migrations`), and by a bulk load (bench/scale-books.ts) after it writes the rollups.
 * @returns how many leaders documents it wrote
 */
export async function backfillLeaders(db: Connection, workspace?: string): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (!workspace && await migrations.findOne({ _id: LEADERS_MARKER })) return 0;
  const periods = new Map<string, { workspace: string; currency: string; grain: Grain; period: string; keys: Set<string> }>();
  const filter = { grain: { $in: [Grain.Day, Grain.Month] }, c: { $exists: true }, ...(workspace ? { workspace } : {}) };
  for await (const d of rollups(db).collection.find(filter as never, { projection: { workspace: 1, currency: 1, grain: 1, period: 1, c: 1 } })) {
    const doc = d as unknown as { workspace: string; currency: string; grain: Grain; period: string; c?: Record<string, Record<string, number>> };
    const keys = new Set<string>();
    for (const counters of Object.values(doc.c ?? {})) for (const k of LEADER_KEYS) if (counters?.[k] !== undefined) keys.add(k);
    if (keys.size === 0) continue;
    const at = rollupId(doc.workspace, doc.currency, doc.grain, doc.period);
    const entry = periods.get(at) ?? { workspace: doc.workspace, currency: doc.currency, grain: doc.grain, period: doc.period, keys: new Set<string>() };
    for (const k of keys) entry.keys.add(k);
    periods.set(at, entry);
  }
  let written = 0;
  for (const p of periods.values()) {
    for (const key of p.keys) {
      await rebuildLeaders(db, p.workspace, p.currency, p.grain, p.period, key);
      written++;
    }
  }
  if (workspace) {
    // A bulk load changed party totals without a post's count: every answer kept over its months is stale.
    const months = new Map<string, Map<string, Set<string>>>();
    for (const p of periods.values()) {
      const byKey = months.get(p.currency) ?? new Map<string, Set<string>>();
      for (const key of p.keys) byKey.set(key, (byKey.get(key) ?? new Set()).add(p.period.slice(0, 7)));
      months.set(p.currency, byKey);
    }
    for (const [currency, byKey] of months) await countBulkPartyWrites(db, workspace, currency, byKey);
  }
  if (!workspace) await migrations.updateOne({ _id: LEADERS_MARKER }, { $set: { at: new Date() } }, { upsert: true });
  return written;
}

/**
 * Counts a change of party totals written in bulk, without a post (a bulk load, an import, a repair
 * that rewrites shards): one change in each of its months under each counter, and a change number
 * moved past the log ({@link LOG_SLOTS}), so every answer kept over those months is found again
 * rather than brought up to date by the log (which does not say what the load changed).
 */
export async function countBulkPartyWrites(db: Connection, workspace: string, currency: string, months: ReadonlyMap<string, Iterable<string>>): Promise<void> {
  const inc: Record<string, number> = { seq: LOG_SLOTS };
  for (const [key, ms] of months) for (const m of ms) inc[`${key}.${m}`] = 1;
  await partyWrites(db).updateOne({ _id: partyWritesId(workspace, currency) }, { $inc: inc } as never, { upsert: true });
}

/** One row of a top-N answer: a party, its last known name and its exact total in the window. */
export interface PartyRow {
  id: string;
  name: string;
  value: number;
}

/**
 * At most how many rollup documents a top-N read reads to settle the totals its leaders leave open
 * (a contender not listed in some day or month whose bound is above 0) before it reads every party
 * of the window instead: ~1.5 months of shards.
 */
const SETTLE_DOCS = 96;

type Leaders = Pick<LeadersDoc, 'top' | 'names' | 'bound' | 'low'>;

/** The leaders of each day and month of a window, in period order (an absent document: nothing there). */
async function windowLeaders(db: Connection, workspace: string, currency: string, periods: readonly [Grain, string][], key: string): Promise<{ grain: Grain; period: string; l: Leaders }[]> {
  const ids = periods.map(([grain, period]) => leadersId(workspace, currency, grain, period, key));
  const docs = new Map((await readByKeys<LeadersDoc>(db, 'party_leaders', '_id', ids)).map((d) => [d._id, d]));
  return periods
    .map(([grain, period], i) => ({ grain, period, l: docs.get(ids[i]) ?? EMPTY }))
    .sort((a, b) => (a.period < b.period ? -1 : a.period > b.period ? 1 : 0));
}

/** Exact totals of parties in days and months their leaders leave open: their shards (and the day or month documents), one read. */
async function settle(db: Connection, workspace: string, currency: string, key: string, open: { party: string; grain: Grain; period: string }[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (open.length === 0) return out;
  const ids = new Set<string>();
  const projection: Record<string, 1> = {};
  for (const o of open) {
    ids.add(rollupId(workspace, currency, o.grain, o.period));
    ids.add(partyShardId(workspace, currency, o.grain, o.period, partyShard(o.grain, o.party)));
    projection[`c.${o.party}.${key}`] = 1;
  }
  const docs = new Map((await rollups(db).collection.find({ _id: { $in: [...ids] } } as never, { projection }).toArray()).map((d) => [String(d._id), d as { c?: Record<string, Record<string, number>> }]));
  for (const o of open) {
    const at = (id: string) => docs.get(id)?.c?.[o.party]?.[key] ?? 0;
    const v = at(rollupId(workspace, currency, o.grain, o.period)) + at(partyShardId(workspace, currency, o.grain, o.period, partyShard(o.grain, o.party)));
    out.set(o.party, (out.get(o.party) ?? 0) + v);
  }
  return out;
}

/** Ranks rows as every top-N answer does: largest total first, then by id; parties at 0 left out. */
function ranked(rows: PartyRow[], limit: number): PartyRow[] {
  return rows.filter((r) => r.value !== 0).sort((a, b) => b.value - a.value || a.id.localeCompare(b.id)).slice(0, limit);
}

/** The same answer from every party's total in the window (what a read did before leaders, and does when they cannot prove theirs). */
export async function topFromEveryParty(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, limit: number): Promise<PartyRow[]> {
  const totals = await partyTotals(db, workspace, currency, from, to, key);
  return ranked([...totals].map(([id, t]) => ({ id, name: t.name, value: t.value })), limit);
}

/**
 * The `limit` parties with the largest total of `key` over a day range (ties by id), exact.
 *
 * Found afresh ({@link topPartiesAfresh}) from the leaders of the range's days and months (Fagin's
 * threshold algorithm): the candidates are the parties listed anywhere in the range; a candidate's
 * total is known where it is listed, 0 where it is not and the bound is 0, and otherwise between the
 * day's or month's `low` and `bound`. The candidates that could still rank (upper bound ≥ the
 * limit-th best lower bound) get their open days and months read from their shards (at most
 * {@link SETTLE_DOCS} documents). The answer is proven when the last row is above every other
 * candidate's upper bound and above the sum of the bounds (what a party listed nowhere can reach) —
 * or there are fewer rows than `limit` and every party listed nowhere is exactly 0. Otherwise it
 * reads every party of the range (`via: 'every party'`, the first {@link KEEP} rows kept), and for
 * {@link RETRY_PROOF_MS} after such a failure reads every party of that window without trying the
 * leaders first (ties: the try only added its own cost).
 *
 * The answer is kept (in this process) per window with the change number and the counts of the
 * window's months it was found at ({@link partyWrites}, read first, one `_id` read). A later read:
 * - the counts of the window's months unchanged: no change there has completed since — the kept rows;
 * - at most {@link CATCH_UP} changes later: their log says which parties changed in the window; their
 *   exact totals there are read from their shards and put in place ({@link placeRow}); the kept list
 *   stays exact (every party it does not list ranks after its last row, or it lists every party);
 * - otherwise, or when the list became too short for `limit`: found afresh.
 */
export async function topParties(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, limit: number): Promise<TopAnswer> {
  const at = keptKey(workspace, currency, key, from, to);
  // The change number and counts, read before anything else: whatever is counted by now is in the shards.
  const counts = await partyWrites(db).findOne({ _id: partyWritesId(workspace, currency) }, { projection: { seq: 1, [key]: 1 } });
  const seq = counts?.seq ?? 0;
  const byMonth = (counts?.[key] ?? {}) as Record<string, number>;
  const stamp = monthsBetween(from.slice(0, 7), to.slice(0, 7)).map((m) => byMonth[m] ?? 0).join(',');
  const kept = keptOf(db, workspace);
  const hit = kept.get(at);
  const serves = (k: { list: PartyRow[]; complete: boolean }) => k.complete || k.list.length >= limit;
  if (hit && serves(hit)) {
    if (hit.stamp === stamp && seq >= hit.seq) {
      keep(kept, at, seq > hit.seq ? { ...hit, seq } : hit);
      return { rows: hit.list.slice(0, limit), via: hit.via, kept: true, tried: false, caughtUp: 0, rolled: 0 };
    }
    if (seq >= hit.seq && seq - hit.seq <= CATCH_UP.changes) {
      const caught = await catchUp(db, workspace, currency, from, to, key, hit, seq);
      if (caught && serves(caught.kept)) {
        keep(kept, at, { ...hit, ...caught.kept, seq, stamp });
        return { rows: caught.kept.list.slice(0, limit), via: hit.via, kept: true, tried: false, caughtUp: caught.parties, rolled: 0 };
      }
    }
  }
  if (!hit) {
    // The day changed: the same window a day (or a few) earlier may be kept, and moved.
    const rolled = await rollForward(db, workspace, currency, from, to, key, kept, seq);
    if (rolled && serves(rolled.kept)) {
      keep(kept, at, { ...rolled.kept, seq, stamp });
      return { rows: rolled.kept.list.slice(0, limit), via: rolled.kept.via, kept: true, tried: false, caughtUp: rolled.parties, rolled: rolled.days };
    }
  }
  const answer = await proveOrReadAll(db, workspace, currency, from, to, key, limit, hit);
  const failedAt = answer.via === 'leaders' ? undefined : answer.tried ? Date.now() : hit?.failedAt;
  keep(kept, at, { seq, stamp, list: answer.list, complete: answer.complete, via: answer.via, failedAt });
  return { rows: answer.list.slice(0, limit), via: answer.via, kept: false, tried: answer.tried, caughtUp: 0, rolled: 0 };
}

/** A top-N answer: its rows, how it was found, and whether it came from the window's kept answer. */
export interface TopAnswer {
  rows: PartyRow[];
  via: 'leaders' | 'every party';
  /** From the window's kept answer (as it was, or brought up to date by `caughtUp` changed parties). */
  kept: boolean;
  /** Whether this read read the leaders (false: a kept answer, leaders not built yet, or a window they failed to prove lately). */
  tried: boolean;
  /** How many changed parties' totals a kept answer was brought up to date with. */
  caughtUp: number;
  /** By how many days the kept answer of the same window earlier was moved to this one (0: not moved). */
  rolled: number;
}

/** A window's kept answer: the first rows of its ranking, exact; `complete`: every party with a total there is listed. */
interface Kept {
  seq: number;
  stamp: string;
  list: PartyRow[];
  complete: boolean;
  via: 'leaders' | 'every party';
  failedAt?: number;
}

/**
 * The kept answer per (workspace, namespace, counter, window): a process's memory, checked against
 * the counts in the database at every read, so it is never served stale. Bounded per workspace
 * ({@link KEPT_ANSWERS}), least recently used first out, so one workspace reading many windows
 * forgets only its own — it never makes another workspace's next read a fresh one (issue 33,
 * ready14; before, 2,000 windows of any workspaces cleared every workspace's).
 */
const keptAnswers = new WeakMap<Connection, Map<string, Map<string, Kept>>>();

/**
 * How many windows each workspace keeps, and how many workspaces keep windows (the least recently
 * read workspace forgets its windows when another one comes past that): at most 2,048 windows in all,
 * as the 2,000 before. Settings only so tests can reach them with a few reads.
 */
export const KEPT_ANSWERS = { perWorkspace: 32, workspaces: 64 };

/** A workspace's kept windows on a connection, marked the most recently used workspace. */
function keptOf(db: Connection, workspace: string): Map<string, Kept> {
  let byWorkspace = keptAnswers.get(db);
  if (!byWorkspace) keptAnswers.set(db, (byWorkspace = new Map()));
  let kept = byWorkspace.get(workspace);
  if (kept) byWorkspace.delete(workspace);
  else kept = new Map();
  byWorkspace.set(workspace, kept);
  while (byWorkspace.size > KEPT_ANSWERS.workspaces) byWorkspace.delete(byWorkspace.keys().next().value!);
  return kept;
}

/** Where a window's answer is kept in {@link keptAnswers}. */
function keptKey(workspace: string, currency: string, key: string, from: string, to: string): string {
  return `${workspace}|${currency}|${key}|${from}|${to}`;
}

/** Keeps a window's answer as the workspace's most recently used; past {@link KEPT_ANSWERS}`.perWorkspace` its least recently used window is forgotten. */
function keep(kept: Map<string, Kept>, at: string, answer: Kept): void {
  kept.delete(at);
  kept.set(at, answer);
  while (kept.size > KEPT_ANSWERS.perWorkspace) kept.delete(kept.keys().next().value!);
}

/** How many rows a window's list keeps when every party is read (the largest `limit`, so removals rarely leave it short; a setting so tests can make it overflow). */
export const KEEP = { rows: 100 };

/** At most how many changes behind, and how many changed parties, a kept answer is brought up to date rather than found again. */
export const CATCH_UP = { changes: 32, parties: 16 };

/**
 * For how long, after the leaders could not prove a window's answer, the window is read from every
 * party without trying them first (ties: thousands of parties at the lists' bounds, where the try
 * cost a fifth to two thirds more than the read of every party; issue 33).
 */
export const RETRY_PROOF_MS = { value: 60_000 };

/** Ranks as every top-N answer does: larger total first, then by id. */
function rankOrder(a: PartyRow, b: PartyRow): number {
  return b.value - a.value || a.id.localeCompare(b.id);
}

/**
 * Puts a changed party's exact total in a kept list, keeping its promise — every party with a
 * nonzero total that it does not list ranks after its last row (or `complete`: it lists them all):
 * a party at 0 leaves; a complete list takes it; otherwise it stays or enters only if it ranks before
 * the last row (the last row itself: if it did not fall), and the list drops its last row past
 * {@link KEEP}. A party that falls behind the last row leaves — the list gets shorter, and a list too
 * short for a read's `limit` is found again.
 */
export function placeRow(list: readonly PartyRow[], complete: boolean, row: PartyRow): { list: PartyRow[]; complete: boolean } {
  const i = list.findIndex((r) => r.id === row.id);
  const last = list[list.length - 1];
  const out = i >= 0 ? [...list.slice(0, i), ...list.slice(i + 1)] : list.slice();
  if (row.value === 0) return { list: out, complete };
  const enters = complete || (last !== undefined && (i === list.length - 1 ? rankOrder(row, last) <= 0 : rankOrder(row, last) < 0));
  if (!enters) return { list: out, complete };
  let at = out.findIndex((r) => rankOrder(row, r) < 0);
  if (at < 0) at = out.length;
  out.splice(at, 0, row);
  if (out.length > Math.max(KEEP.rows, list.length)) {
    out.pop();
    return { list: out, complete: false };
  }
  return { list: out, complete };
}

/**
 * Brings a kept answer from its change number to `seq` by the log: null when a slot no longer (or
 * not yet) holds a change it needs, or too many parties changed in the window.
 */
async function catchUp(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, hit: Kept, seq: number): Promise<{ kept: Pick<Kept, 'list' | 'complete'>; parties: number } | null> {
  if (seq === hit.seq) return { kept: hit, parties: 0 };
  const changed = await loggedChanges(db, workspace, currency, key, hit.seq, seq, from, to);
  if (!changed) return null;
  if (changed.size === 0) return { kept: hit, parties: 0 };
  if (changed.size > CATCH_UP.parties) return null;
  const totals = await windowTotals(db, workspace, currency, from, to, key, [...changed.keys()]);
  let state: Pick<Kept, 'list' | 'complete'> = hit;
  for (const [id, name] of changed) state = placeRow(state.list, state.complete, { id, name, value: totals.get(id) ?? 0 });
  return { kept: state, parties: changed.size };
}

/**
 * The parties whose `key` changed on a day in [from, to] by the changes numbered after `since` up to
 * `seq` (party → its name), from the log; null when a slot no longer (or not yet) holds a change it needs.
 */
async function loggedChanges(db: Connection, workspace: string, currency: string, key: string, since: number, seq: number, from: string, to: string): Promise<Map<string, string> | null> {
  const changed = new Map<string, string>();
  if (seq === since) return changed;
  const ids: string[] = [];
  for (let s = since + 1; s <= seq; s++) ids.push(logSlotId(workspace, currency, s));
  const slots = new Map((await partyWrites(db).find({ _id: { $in: ids } }).toArray()).map((d) => [d._id, d]));
  for (let s = since + 1; s <= seq; s++) {
    const e = slots.get(logSlotId(workspace, currency, s));
    if (!e || e.s !== s || !e.p || !e.d) return null;
    if (e.k?.includes(key) && e.d >= from && e.d <= to) changed.set(e.p, e.n ?? e.p);
  }
  return changed;
}

/** Exact totals of `key` over [from, to] of the given parties, from their shards (one read). */
async function windowTotals(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, parties: readonly string[]): Promise<Map<string, number>> {
  const periods = rangePeriods(from, to);
  return settle(db, workspace, currency, key, parties.flatMap((party) => periods.map(([grain, period]) => ({ party, grain, period }))));
}

/** How far back (days) a read looks for the kept answer of the same window moved ({@link rollForward}), and how many parties it then reads the totals of. */
export const ROLL = { days: 7, parties: 16 };

/**
 * A new window's answer from the kept answer of the same window some days earlier (the day changed:
 * `days` ending today moved by one), when it is at most {@link CATCH_UP} changes behind. A party's
 * total differs between the two windows only by the days that left and the days that came, so:
 * the parties changed since the kept answer (the log) get their exact total in the new window read
 * from their shards; every other party's change is what those days hold (their day documents and
 * shards, one read): a listed party's total moves by it (exact); an unlisted party that lost ranks
 * after the last row still; an unlisted one that gained gets its exact total read (at most
 * {@link ROLL}.parties of those, else null: found afresh); of a complete list, an unlisted party had 0.
 * Each is put in place by {@link placeRow}, so the promise holds as in {@link catchUp}.
 */
async function rollForward(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, kept: Map<string, Kept>, seq: number): Promise<{ kept: Pick<Kept, 'list' | 'complete' | 'via' | 'failedAt'>; parties: number; days: number } | null> {
  for (let k = 1; k <= ROLL.days; k++) {
    const was = { from: addDays(from, -k), to: addDays(to, -k) };
    const prev = kept.get(keptKey(workspace, currency, key, was.from, was.to));
    if (!prev) continue;
    if (seq < prev.seq || seq - prev.seq > CATCH_UP.changes) return null;
    // The parties changed since the kept answer, in either window: their exact totals are read.
    const changed = await loggedChanges(db, workspace, currency, key, prev.seq, seq, was.from, to);
    if (!changed || changed.size > ROLL.parties) return null;
    // What the days that left (−) and came (+) hold, party by party.
    const edges: [string, number][] = [
      ...daysOf(was.from, addDays(was.to < from ? was.to : from, was.to < from ? 0 : -1)).map((d): [string, number] => [d, -1]),
      ...daysOf(was.to < from ? from : addDays(was.to, 1), to).map((d): [string, number] => [d, 1]),
    ];
    const sign = new Map<string, number>();
    for (const [day, s] of edges) {
      sign.set(rollupId(workspace, currency, Grain.Day, day), s);
      for (let i = 0; i < (PARTY_SHARDS[Grain.Day] ?? 0); i++) sign.set(partyShardId(workspace, currency, Grain.Day, day, i), s);
    }
    const delta = new Map<string, number>();
    const names = new Map<string, string>();
    for (const d of await rollups(db).collection.find({ _id: { $in: [...sign.keys()] } } as never, { projection: { c: 1, n: 1 } }).toArray()) {
      const doc = d as { _id: unknown; c?: Record<string, Record<string, number>>; n?: Record<string, string> };
      const s = sign.get(String(doc._id))!;
      for (const [p, counters] of Object.entries(doc.c ?? {})) {
        const v = counters?.[key];
        if (!v) continue;
        delta.set(p, (delta.get(p) ?? 0) + s * v);
        if (doc.n?.[p] && (s > 0 || !names.has(p))) names.set(p, doc.n[p]);
      }
    }
    // A change already in the rollups of a day that left but not counted by `seq` (its post in flight,
    // or dead until its repair) is in these edges but not in `prev`: moved by it, a party's total would
    // be off by that change, and its count, dated outside the new window, would never correct the kept
    // answer. So nothing is moved while a change of the workspace is in flight, nor when one was counted
    // since `seq` was read: its marker is written before its rollups and removed after its count, so an
    // edge read holding an uncounted change meets either its marker or a later `seq`.
    if (await pendingChanges(db).exists({ workspace, kind: 'intent' })) return null;
    const recount = await partyWrites(db).findOne({ _id: partyWritesId(workspace, currency) }, { projection: { seq: 1 } });
    if ((recount?.seq ?? 0) !== seq) return null;
    const listed = new Map(prev.list.map((r) => [r.id, r]));
    const exact = new Map(changed);
    for (const [p, d] of delta) {
      if (d > 0 && !exact.has(p) && !listed.has(p) && !prev.complete) exact.set(p, names.get(p) ?? p);
    }
    if (exact.size > ROLL.parties) return null;
    const totals = await windowTotals(db, workspace, currency, from, to, key, [...exact.keys()]);
    let state: Pick<Kept, 'list' | 'complete'> = prev;
    for (const [id, name] of exact) state = placeRow(state.list, state.complete, { id, name, value: totals.get(id) ?? 0 });
    for (const [p, d] of delta) {
      if (d === 0 || exact.has(p)) continue;
      const row = listed.get(p);
      // Listed: its total moves by what the edges hold. Unlisted, of a complete list: it had 0. Unlisted and it lost: still behind the last row.
      if (row) state = placeRow(state.list, state.complete, { id: p, name: names.get(p) ?? row.name, value: row.value + d });
      else if (prev.complete) state = placeRow(state.list, state.complete, { id: p, name: names.get(p) ?? p, value: d });
    }
    return { kept: { ...state, via: prev.via, failedAt: prev.failedAt }, parties: exact.size, days: k };
  }
  return null;
}

/** The answer topn10 read: from the leaders when they prove it, else from every party (no kept answer; benches compare with it). */
export async function topPartiesAfresh(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, limit: number): Promise<{ rows: PartyRow[]; via: 'leaders' | 'every party' }> {
  const answer = await proveOrReadAll(db, workspace, currency, from, to, key, limit, undefined);
  return { rows: answer.list.slice(0, limit), via: answer.via };
}

/**
 * The answer from the leaders when they prove it (its `limit` rows; complete when fewer), else from
 * every party (its first {@link KEEP} rows; complete when no more have a total); `tried`: whether the
 * leaders were read.
 */
async function proveOrReadAll(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, limit: number, last: { failedAt?: number } | undefined): Promise<{ list: PartyRow[]; complete: boolean; via: 'leaders' | 'every party'; tried: boolean }> {
  const everyParty = async (tried: boolean) => {
    const totals = await partyTotals(db, workspace, currency, from, to, key);
    const all = ranked([...totals].map(([id, t]) => ({ id, name: t.name, value: t.value })), Infinity);
    const keep = Math.max(KEEP.rows, limit);
    return { list: all.slice(0, keep), complete: all.length <= keep, via: 'every party' as const, tried };
  };
  if (last?.failedAt !== undefined && Date.now() - last.failedAt < RETRY_PROOF_MS.value) return everyParty(false);
  if (!(await leadersReady(db))) return everyParty(false);
  const proved = await proveFromLeaders(db, workspace, currency, from, to, key, limit);
  return proved ? { list: proved, complete: proved.length < limit, via: 'leaders', tried: true } : everyParty(true);
}

/** The answer proven from the leaders (see {@link topParties}), or null when they cannot prove it. */
async function proveFromLeaders(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, limit: number): Promise<PartyRow[] | null> {
  const grains = await windowLeaders(db, workspace, currency, rangePeriods(from, to), key);
  let boundSum = 0;
  let lowSum = 0;
  const candidates = new Map<string, { known: number; upper: number; lower: number; name: string; open: { grain: Grain; period: string }[] }>();
  for (const g of grains) {
    boundSum += g.l.bound;
    lowSum += g.l.low;
    for (const [p, v] of Object.entries(g.l.top)) {
      const c = candidates.get(p) ?? { known: 0, upper: 0, lower: 0, name: p, open: [] };
      c.known += v;
      c.name = g.l.names[p] ?? c.name;
      candidates.set(p, c);
    }
  }
  for (const [p, c] of candidates) {
    c.upper = c.known;
    c.lower = c.known;
    for (const g of grains) {
      if (p in g.l.top || (g.l.bound === 0 && g.l.low === 0)) continue;
      c.upper += g.l.bound;
      c.lower += g.l.low;
      c.open.push({ grain: g.grain, period: g.period });
    }
  }
  const lowers = [...candidates.values()].map((c) => c.lower).sort((a, b) => b - a);
  const lambda = lowers.length >= limit ? lowers[limit - 1] : -Infinity;
  const contenders = [...candidates].filter(([, c]) => c.upper >= lambda);
  // The documents to settle, counted as they are listed: past the budget the read stops listing (thousands of open pairs when parties tie at the bounds).
  const open: { party: string; grain: Grain; period: string }[] = [];
  const docs = new Set<string>();
  for (const [party, c] of contenders) {
    for (const g of c.open) {
      open.push({ party, ...g });
      docs.add(rollupId(workspace, currency, g.grain, g.period));
      docs.add(partyShardId(workspace, currency, g.grain, g.period, partyShard(g.grain, party)));
      if (docs.size > SETTLE_DOCS) return null;
    }
  }
  const settled = await settle(db, workspace, currency, key, open);
  const rows = ranked(contenders.map(([id, c]) => ({ id, name: c.name, value: c.known + (settled.get(id) ?? 0) })), limit);
  const others = candidates.size - contenders.length;
  const maxOther = Math.max(-Infinity, ...[...candidates.values()].filter((c) => c.upper < lambda).map((c) => c.upper));
  const unlistedZero = boundSum === 0 && lowSum === 0;
  const proven = rows.length === limit
    ? rows[limit - 1].value > maxOther && (unlistedZero || rows[limit - 1].value > boundSum)
    : others === 0 && unlistedZero;
  return proven ? rows : null;
}

/**
 * Exact totals of `key` over a day range for the given parties (a top-N's comparison window): from
 * the leaders where they list the party (or say it is 0), its shards where they do not.
 */
export async function partySums(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, parties: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(parties.map((p) => [p, 0]));
  if (parties.length === 0) return out;
  if (!(await leadersReady(db))) {
    const totals = await partyTotals(db, workspace, currency, from, to, key);
    for (const p of parties) out.set(p, totals.get(p)?.value ?? 0);
    return out;
  }
  const grains = await windowLeaders(db, workspace, currency, rangePeriods(from, to), key);
  const open: { party: string; grain: Grain; period: string }[] = [];
  for (const p of parties) {
    for (const g of grains) {
      if (p in g.l.top) out.set(p, out.get(p)! + g.l.top[p]);
      else if (g.l.bound !== 0 || g.l.low !== 0) open.push({ party: p, grain: g.grain, period: g.period });
    }
  }
  for (const [p, v] of await settle(db, workspace, currency, key, open)) out.set(p, out.get(p)! + v);
  return out;
}
