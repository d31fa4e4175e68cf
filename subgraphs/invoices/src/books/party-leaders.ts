import { readByKeys } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { partyTotals, rangePeriods } from './rollup-reads.ts';
import { Grain, PARTY_SHARDS, partyShard, partyShardId, rollupId, rollups } from './rollup-store.ts';

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
  if (!workspace) await migrations.updateOne({ _id: LEADERS_MARKER }, { $set: { at: new Date() } }, { upsert: true });
  return written;
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
 * The `limit` parties with the largest total of `key` over a day range (ties by id), exact, from
 * the leaders of the range's days and months (Fagin's threshold algorithm): the candidates are
 * the parties listed anywhere in the range; a candidate's total is known where it is listed, 0
 * where it is not and the bound is 0, and otherwise between the day's or month's `low` and
 * `bound`. The candidates that could still rank (upper bound ≥ the limit-th best lower bound) get
 * their open days and months read from their shards (at most {@link SETTLE_DOCS} documents). The
 * answer is proven when the last row is above every other candidate's upper bound and above the
 * sum of the bounds (what a party listed nowhere can reach) — or there are fewer rows than `limit`
 * and every party listed nowhere is exactly 0. Otherwise it reads every party of the range, as
 * before (`via: 'every party'`).
 */
export async function topParties(db: Connection, workspace: string, currency: string, from: string, to: string, key: string, limit: number): Promise<{ rows: PartyRow[]; via: 'leaders' | 'every party' }> {
  const everyParty = async () => ({ rows: await topFromEveryParty(db, workspace, currency, from, to, key, limit), via: 'every party' as const });
  if (!(await leadersReady(db))) return everyParty();
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
      if (docs.size > SETTLE_DOCS) return everyParty();
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
  return proven ? { rows, via: 'leaders' } : everyParty();
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
