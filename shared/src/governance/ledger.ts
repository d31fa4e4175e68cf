import type { Redis } from 'ioredis';
import { Schema, type Connection, type Model } from 'mongoose';
import { ensureModel, modelOn } from '../db.ts';
import { newId } from '../credentials.ts';
import type { Principal } from '../principal.ts';
import type { Risk } from '../tool.ts';
import { canonicalJson, sha256 } from './digest.ts';

/** First `prev_hash` of every workspace's chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** A ledger entry as callers see it (CONTRACT.md §6). */
export interface LedgerEntry {
  id: string;
  /** Position in the workspace's chain, from 1. */
  seq: number;
  at: string;
  workspace: string;
  actor: { type: string; id: string };
  credential_id: string;
  tool: string;
  module: string;
  risk: Risk | null;
  input_digest: string | null;
  /** `ok`, `pending_approval`, a refusal code, or `interrupted` (the process died mid-action). */
  outcome: string;
  approval_id?: string;
  idempotency_key?: string;
  /** True when the answer was a replay of an earlier one with the same Idempotency-Key. */
  replayed?: boolean;
  duration_ms: number;
  prev_hash: string;
  hash: string;
}

/** What a service records; the ledger adds id, seq, at, chain and hash. */
export interface LedgerRecord {
  principal: Principal;
  tool: string;
  risk: Risk | null;
  input_digest: string | null;
  outcome: string;
  approval_id?: string;
  idempotency_key?: string;
  replayed?: boolean;
  duration_ms: number;
}

interface HeadDoc { _id: string; seq: number; hash: string }

interface PendingAppend { record: LedgerRecord; at: string; id: string; resolve(entry: LedgerEntry): void; reject(err: unknown): void }

const entrySchema = new Schema<LedgerEntry & { _id: string }>(
  {
    _id: { type: String, required: true },
    id: String, seq: Number, at: String, workspace: String, actor: Schema.Types.Mixed, credential_id: String, tool: String, module: String,
    risk: { type: String, default: null }, input_digest: { type: String, default: null }, outcome: String, approval_id: String,
    idempotency_key: String, replayed: Boolean, duration_ms: Number, prev_hash: String, hash: String,
  },
  { versionKey: false, minimize: true, id: false },
);
// The chain's order: one entry per position per workspace, enforced by the database.
entrySchema.index({ workspace: 1, seq: 1 }, { unique: true });
entrySchema.index({ workspace: 1, tool: 1 });

const headSchema = new Schema<HeadDoc>({ _id: String, seq: Number, hash: String }, { versionKey: false });

/** The fields of an entry that its hash covers: everything but the hash itself. */
function hashedFields(entry: Omit<LedgerEntry, 'hash'>): string {
  return canonicalJson(entry);
}

/** Hash of an entry given its predecessor: SHA-256(prev_hash ‖ canonical JSON of the entry). */
export function entryHash(entry: Omit<LedgerEntry, 'hash'>): string {
  return sha256(entry.prev_hash + hashedFields(entry));
}

/** Result of {@link Ledger.verify}. */
export interface LedgerVerification {
  ok: boolean;
  entries: number;
  head: string;
  /** Where the chain breaks first, when it does. */
  broken_at?: { seq: number; id: string | null; reason: string };
}

/**
 * The action ledger, hash-chained per workspace (CONTRACT.md §6). Every service writes it
 * through this class. Appends are serialised per workspace inside a process; across processes
 * the unique `{workspace, seq}` index decides and the loser retries at the next position.
 */
export class Ledger {
  readonly entries: Model<LedgerEntry & { _id: string }>;
  readonly #heads: Model<HeadDoc>;
  readonly #redis: Redis | undefined;
  readonly #pending = new Map<string, PendingAppend[]>();
  readonly #flushing = new Set<string>();
  /** The end of each workspace's chain as this process last wrote it (checked by the unique index). */
  readonly #headCache = new Map<string, HeadDoc>();

  constructor(db: Connection, redis?: Redis) {
    this.entries = modelOn<LedgerEntry & { _id: string }>(db, 'LedgerEntry', entrySchema, 'ledger');
    this.#heads = modelOn<HeadDoc>(db, 'LedgerHead', headSchema, 'ledger_heads');
    this.#redis = redis;
  }

  async init(): Promise<void> {
    await Promise.all([ensureModel(this.entries), ensureModel(this.#heads)]);
  }

  /**
   * Appends one entry to its workspace's chain and publishes it for `/v1/events`. Appends of one
   * workspace are group-committed: while a batch is being written, new entries queue and go
   * out together in the next one (one ordered insert and one head update per batch).
   */
  append(record: LedgerRecord): Promise<LedgerEntry> {
    const workspace = record.principal.workspace;
    return new Promise<LedgerEntry>((resolve, reject) => {
      const queue = this.#pending.get(workspace) ?? [];
      queue.push({ record, at: new Date().toISOString(), id: newId('led'), resolve, reject });
      this.#pending.set(workspace, queue);
      if (!this.#flushing.has(workspace)) void this.#flush(workspace);
    });
  }

  async #flush(workspace: string): Promise<void> {
    this.#flushing.add(workspace);
    try {
      for (;;) {
        const queue = this.#pending.get(workspace);
        if (!queue || queue.length === 0) {
          this.#pending.delete(workspace);
          break;
        }
        const batch = queue.splice(0, 200);
        try {
          await this.#write(workspace, batch);
        } catch (err) {
          this.#headCache.delete(workspace);
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.#flushing.delete(workspace);
    }
  }

  /** Writes a batch at the end of the chain; entries another process got in first push the rest back. */
  async #write(workspace: string, batch: PendingAppend[]): Promise<void> {
    let rest = batch;
    for (let attempt = 0; rest.length > 0; attempt++) {
      if (attempt > 100) throw new Error(`ledger append for ${workspace} did not settle`);
      const head = this.#headCache.get(workspace) ?? (await this.#heads.findById(workspace).lean()) ?? { _id: workspace, seq: 0, hash: GENESIS_HASH };
      const entries: LedgerEntry[] = [];
      let prev = head.hash;
      for (const [i, p] of rest.entries()) {
        const r = p.record;
        const body: Omit<LedgerEntry, 'hash'> = {
          id: p.id, seq: head.seq + 1 + i, at: p.at, workspace, actor: r.principal.actor, credential_id: r.principal.credential_id,
          tool: r.tool, module: r.tool.split('.')[0], risk: r.risk, input_digest: r.input_digest, outcome: r.outcome,
          ...(r.approval_id ? { approval_id: r.approval_id } : {}),
          ...(r.idempotency_key ? { idempotency_key: r.idempotency_key } : {}),
          ...(r.replayed ? { replayed: true } : {}),
          duration_ms: r.duration_ms, prev_hash: prev,
        };
        const entry = { ...body, hash: entryHash(body) };
        entries.push(entry);
        prev = entry.hash;
      }
      let inserted = entries.length;
      try {
        await this.entries.collection.insertMany(entries.map((e) => ({ _id: e.id, ...e })) as never[], { ordered: true });
      } catch (err) {
        const e = err as { code?: number; writeErrors?: { index: number; code: number }[] | { index: number; code: number } };
        const first = Array.isArray(e.writeErrors) ? e.writeErrors[0] : e.writeErrors;
        if (e.code !== 11000 && first?.code !== 11000) throw err;
        // Ordered: everything before the first failed position is stored.
        inserted = first?.index ?? 0;
      }
      if (inserted > 0) {
        const last = entries[inserted - 1];
        await this.#heads.updateOne({ _id: workspace, seq: { $lt: last.seq } }, { $set: { seq: last.seq, hash: last.hash } }, { upsert: true }).catch((err: { code?: number }) => {
          if (err.code !== 11000) throw err;
        });
        this.#headCache.set(workspace, { _id: workspace, seq: last.seq, hash: last.hash });
        for (let i = 0; i < inserted; i++) {
          const entry = entries[i];
          rest[i].resolve(entry);
          if (this.#redis) {
            const event = { module: entry.module, tool: entry.tool, outcome: entry.outcome, at: entry.at };
            this.#redis.publish(`cuadra:ledger:${workspace}`, JSON.stringify(event)).catch(() => undefined);
          }
        }
      }
      rest = rest.slice(inserted);
      if (rest.length > 0) {
        // Another process took the next position: find the real end of the chain and go on from there.
        this.#headCache.delete(workspace);
        await this.#repairHead(workspace, inserted > 0 ? entries[inserted - 1].seq : head.seq);
      }
    }
  }

  /** Moves the head hint forward to the last entry actually stored after `seq`. */
  async #repairHead(workspace: string, seq: number): Promise<void> {
    let last = seq;
    let hash: string | undefined;
    for (;;) {
      const nextEntry = await this.entries.findOne({ workspace, seq: last + 1 }, { seq: 1, hash: 1 }).lean();
      if (!nextEntry) break;
      last = nextEntry.seq;
      hash = nextEntry.hash;
    }
    if (!hash) return;
    await this.#heads.updateOne({ _id: workspace, seq: { $lt: last } }, { $set: { seq: last, hash } }, { upsert: true }).catch((err: { code?: number }) => {
      if (err.code !== 11000) throw err; // a head already further on: nothing to do
    });
  }

  /** Newest entries first, filtered (bounded: at most `limit`, 200 max). */
  async list(workspace: string, filter: { tool?: string; module?: string; actor?: string; from?: string; to?: string; limit?: number }): Promise<LedgerEntry[]> {
    const head = await this.#heads.findById(workspace).lean();
    if (!head) return [];
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 200);
    const out: LedgerEntry[] = [];
    // Walk back from the head in windows of seq numbers: indexed range reads, never a full sort.
    for (let high = head.seq; high > 0 && out.length < limit; high -= 500) {
      const query: Record<string, unknown> = { workspace, seq: { $gt: Math.max(0, high - 500), $lte: high } };
      if (filter.tool) query.tool = filter.tool;
      if (filter.module) query.module = filter.module;
      if (filter.actor) query['actor.id'] = filter.actor;
      if (filter.from || filter.to) query.at = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lte: filter.to } : {}) };
      const rows = await this.entries.find(query, { _id: 0 }).lean();
      rows.sort((a, b) => b.seq - a.seq);
      out.push(...rows.slice(0, limit - out.length));
    }
    return out;
  }

  /**
   * The entries of a span of time (`from` ≤ at < `to`, ISO instants), projected to `at`, `tool`,
   * `module` and `outcome`, for the activity metric. Walks back from the head in windows of 500
   * seq numbers (indexed range reads, as `list`) and stops at the first window wholly before
   * `from`. The walk is capped at `maxScanned` entries read (default 50 000, 100 windows): a
   * workspace busier than that over the span gets the newest part, and `truncated` says so.
   */
  async span(workspace: string, from: string, to: string, maxScanned = 50_000): Promise<{ entries: Pick<LedgerEntry, 'at' | 'tool' | 'module' | 'outcome'>[]; truncated: boolean }> {
    const head = await this.#heads.findById(workspace).lean();
    const out: Pick<LedgerEntry, 'at' | 'tool' | 'module' | 'outcome'>[] = [];
    if (!head) return { entries: out, truncated: false };
    let scanned = 0;
    for (let high = head.seq; high > 0; high -= 500) {
      if (scanned >= maxScanned) return { entries: out, truncated: true };
      const rows = await this.entries.find({ workspace, seq: { $gt: Math.max(0, high - 500), $lte: high } }, { _id: 0, at: 1, tool: 1, module: 1, outcome: 1 }).lean();
      // Counted by positions, so even a chain with gaps ends the walk within the cap.
      scanned += 500;
      let newest = '';
      for (const r of rows) {
        if (r.at > newest) newest = r.at;
        if (r.at >= from && r.at < to) out.push({ at: r.at, tool: r.tool, module: r.module, outcome: r.outcome });
      }
      // Entries are appended in time order (up to a batch's milliseconds): older windows hold nothing later.
      if (rows.length > 0 && newest < from) break;
    }
    return { entries: out, truncated: false };
  }

  /** Recomputes the whole chain: finds any edited, removed or reordered entry. */
  async verify(workspace: string): Promise<LedgerVerification> {
    const head = await this.#heads.findById(workspace).lean();
    let prev = GENESIS_HASH;
    let seq = 0;
    for (;;) {
      const batch = await this.entries.find({ workspace, seq: { $gt: seq, $lte: seq + 500 } }, { _id: 0 }).lean();
      if (batch.length === 0) break;
      batch.sort((a, b) => a.seq - b.seq);
      for (const entry of batch) {
        if (entry.seq !== seq + 1) return { ok: false, entries: seq, head: prev, broken_at: { seq: seq + 1, id: null, reason: `entry ${seq + 1} is missing` } };
        if (entry.prev_hash !== prev) return { ok: false, entries: seq, head: prev, broken_at: { seq: entry.seq, id: entry.id, reason: 'prev_hash does not match the entry before it (removed or reordered)' } };
        const { hash, ...rest } = entry;
        if (entryHash(rest as Omit<LedgerEntry, 'hash'>) !== hash) return { ok: false, entries: seq, head: prev, broken_at: { seq: entry.seq, id: entry.id, reason: 'the entry was changed after it was written' } };
        prev = hash;
        seq = entry.seq;
      }
    }
    if (head && head.seq > seq) return { ok: false, entries: seq, head: prev, broken_at: { seq: seq + 1, id: null, reason: `entries ${seq + 1}–${head.seq} are missing` } };
    return { ok: true, entries: seq, head: prev };
  }
}
