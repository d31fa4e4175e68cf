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
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(db: Connection, redis?: Redis) {
    this.entries = modelOn<LedgerEntry & { _id: string }>(db, 'LedgerEntry', entrySchema, 'ledger');
    this.#heads = modelOn<HeadDoc>(db, 'LedgerHead', headSchema, 'ledger_heads');
    this.#redis = redis;
  }

  async init(): Promise<void> {
    await Promise.all([ensureModel(this.entries), ensureModel(this.#heads)]);
  }

  /** Appends one entry to its workspace's chain and publishes it for `/v1/events`. */
  append(record: LedgerRecord): Promise<LedgerEntry> {
    const workspace = record.principal.workspace;
    const previous = this.#queues.get(workspace) ?? Promise.resolve();
    const next = previous.then(() => this.#append(record), () => this.#append(record));
    this.#queues.set(workspace, next);
    void next.finally(() => {
      if (this.#queues.get(workspace) === next) this.#queues.delete(workspace);
    }).catch(() => undefined);
    return next;
  }

  async #append(record: LedgerRecord): Promise<LedgerEntry> {
    const workspace = record.principal.workspace;
    const at = new Date().toISOString();
    const id = newId('led');
    for (let attempt = 0; attempt < 200; attempt++) {
      const head = (await this.#heads.findById(workspace).lean()) ?? { _id: workspace, seq: 0, hash: GENESIS_HASH };
      const body: Omit<LedgerEntry, 'hash'> = {
        id, seq: head.seq + 1, at, workspace, actor: record.principal.actor, credential_id: record.principal.credential_id,
        tool: record.tool, module: record.tool.split('.')[0], risk: record.risk, input_digest: record.input_digest, outcome: record.outcome,
        ...(record.approval_id ? { approval_id: record.approval_id } : {}),
        ...(record.idempotency_key ? { idempotency_key: record.idempotency_key } : {}),
        ...(record.replayed ? { replayed: true } : {}),
        duration_ms: record.duration_ms, prev_hash: head.hash,
      };
      const entry: LedgerEntry = { ...body, hash: entryHash(body) };
      try {
        await this.entries.create({ _id: id, ...entry });
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
        // Another process took this position: bring the head up to the real last entry and retry.
        await this.#repairHead(workspace, head.seq);
        continue;
      }
      await this.#heads.updateOne({ _id: workspace, seq: head.seq }, { $set: { seq: entry.seq, hash: entry.hash } }, { upsert: head.seq === 0 }).catch((err: { code?: number }) => {
        if (err.code !== 11000) throw err;
      });
      if (this.#redis) {
        const event = { module: entry.module, tool: entry.tool, outcome: entry.outcome, at: entry.at };
        this.#redis.publish(`cuadra:ledger:${workspace}`, JSON.stringify(event)).catch(() => undefined);
      }
      return entry;
    }
    throw new Error(`ledger append for ${workspace} did not settle`);
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
    if (hash) await this.#heads.updateOne({ _id: workspace, seq: { $lt: last } }, { $set: { seq: last, hash } }, { upsert: false });
    const exists = await this.#heads.exists({ _id: workspace });
    if (!exists && hash) await this.#heads.create({ _id: workspace, seq: last, hash }).catch(() => undefined);
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
