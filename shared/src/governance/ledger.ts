import { AsyncLocalStorage } from 'node:async_hooks';
import type { Redis } from 'ioredis';
import { Schema, type Connection, type Model } from 'mongoose';
import { ensureModel, modelOn } from '../db.ts';
import { eachItem } from '../coalesce.ts';
import { newId } from '../credentials.ts';
import type { Principal } from '../principal.ts';
import type { Risk } from '../tool.ts';
import { redisKeyPrefix } from '../ratelimit.ts';
import { formatReceipt, HEAD_CONTEXT, LedgerSigner, parseReceipt } from './anchor.ts';
import { canonicalJson, sha256 } from './digest.ts';
import { localDate } from '../periods.ts';
import { decodeSignedCursor, encodeSignedCursor, foreignCursor } from '../paging.ts';

/** First `prev_hash` of every workspace's chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** A ledger entry as callers see it (CONTRACT.md §6). */
export interface LedgerEntry extends LedgerOutcome {
  id: string;
  /** Position in the workspace's chain, from 1. */
  seq: number;
  at: string;
  workspace: string;
  actor: { type: string; id: string };
  credential_id: string;
  tool: string;
  module: string;
  /** The agent run the call was made for (issue 37): present only on an agent run's calls. */
  run_id?: string;
  /**
   * On a domain event's entry only (shared/src/events.ts; `tool` is then the event type, e.g.
   * `invoice.overdue`, and the actor the owning service): the record it is about, what makes the
   * occurrence one, and its payload.
   */
  event?: LedgerEvent;
  prev_hash: string;
  hash: string;
}

/** What a call came to, as its ledger entry records it (what a service records, and what callers read). */
export interface LedgerOutcome {
  risk: Risk | null;
  input_digest: string | null;
  /** `ok`, `pending_approval`, a refusal code, or `interrupted` (the process died mid-action). */
  outcome: string;
  approval_id?: string;
  idempotency_key?: string;
  /** True when the answer was a replay of an earlier one with the same Idempotency-Key. */
  replayed?: boolean;
  duration_ms: number;
}

/** A domain event's part of its ledger entry. */
export interface LedgerEvent {
  subject: string;
  key: string;
  data: Record<string, string | number | boolean | null>;
}

/** What a service records; the ledger adds id, seq, at, chain and hash. */
export interface LedgerRecord extends LedgerOutcome {
  principal: Principal;
  tool: string;
  /** The entry's module, when it is not the tool name's first part (a domain event: `invoice.overdue` of `invoices`). */
  module?: string;
  /** A domain event's subject, key and payload (shared/src/events.ts). */
  event?: LedgerEvent;
  /**
   * The entry's id, when the writer chose it ahead (an action's outcome entry is named by its
   * intent, so whoever settles the action later writes it at most once). Appending an id that is
   * already in the chain appends nothing and answers the entry stored.
   */
  id?: string;
}

/** Windows of 500 seq numbers one `ledger.list` page reads at most (10,000 entries). */
export const LIST_WINDOWS = 20;

/**
 * The end of a workspace's chain as the database keeps it. Two documents: `<workspace>`, a hint
 * for writers that any process moves forward to entries it finds stored; and, with the ledger key,
 * `signed:<workspace>`, the signed head (`signature`, context {@link HEAD_CONTEXT}) that only a
 * writer moves, forward only, to the entries it has just written — the anchor Redis losing its
 * data cannot take away.
 */
interface HeadDoc { _id: string; seq: number; hash: string; signature?: string }

/** The `_id` of a workspace's signed head in `ledger_heads`. */
function signedHeadId(workspace: string): string {
  return `signed:${workspace}`;
}

/** A signed head a writer found beyond the stored chain (the chain was cut back), kept as evidence. */
interface CutEvidenceDoc { _id: string; receipt: string; found_at: Date }

/** Signed heads one process remembers (its newest per workspace), for that many workspaces at most. */
const REMEMBERED_HEADS = 10_000;

/** Receipts whose prefix (entries 1 to the receipt's seq) takes at most this many entries are walked by equality reads, in any verify. */
export const RECEIPT_WALK_FREE = 1_000;

/** A signed checkpoint of a workspace's chain: entry `seq` has hash `hash` (CONTRACT.md §9). */
interface CheckpointDoc { _id: string; workspace: string; seq: number; hash: string; signature: string; at: string }

/** An appended entry as its writer gets it back: with its receipt when the ledger is anchored. */
export type AppendedEntry = LedgerEntry & { receipt?: string };

/**
 * Collects the receipt of the last entry appended inside a scope: the owner runs each call in
 * one, so the answer can carry the `Ledger-Receipt` of the entry that call wrote.
 */
export const ledgerReceiptScope = new AsyncLocalStorage<{ receipt?: string }>();

/**
 * One page of a full walk (`ledger.verify {full: true}`): at most this many entries, and no window
 * begun after `ms` — well under the gateway's 60 s wait for an owner's answer (gateway/src/forward.ts):
 * at ~200 µs an entry (docs/measurements.md) 50,000 entries take ~10 s; a loaded machine ends the page
 * on time instead. A longer chain answers `next_cursor`, and the walk goes on from there.
 */
export const FULL_WALK_PAGE = { entries: 50_000, ms: 15_000 };

/** The series a full walk's cursors are signed for (shared/src/paging.ts). */
const FULL_WALK_CURSOR = 'ledger.verify.full';

/** Checkpoints are kept at every multiple of this many entries (routine verify walks at most about this many). */
export const CHECKPOINT_EVERY = 100;

/**
 * Checkpoint positions a routine verify asks for on each side of where the heads say the chain ends (32 index
 * lookups): the newest checkpoint is among them unless that many in a row were never written or were removed.
 */
export const CHECKPOINT_SPAN = 16;

/** Where a walk of the chain ended: the last entry it checked, that entry's hash, and why it stopped early, if it did. */
interface WalkEnd { seq: number; prev: string; broken?: Broken; more?: boolean }

interface PendingAppend { record: LedgerRecord; at: string; id: string; resolve(entry: LedgerEntry): void; reject(err: unknown): void }

const entrySchema = new Schema<LedgerEntry & { _id: string }>(
  {
    _id: { type: String, required: true },
    id: String, seq: Number, at: String, workspace: String, actor: Schema.Types.Mixed, credential_id: String, tool: String, module: String,
    risk: { type: String, default: null }, input_digest: { type: String, default: null }, outcome: String, approval_id: String,
    idempotency_key: String, replayed: Boolean, run_id: String, event: Schema.Types.Mixed, duration_ms: Number, prev_hash: String, hash: String,
  },
  { versionKey: false, minimize: true, id: false },
);
// The chain's order: one entry per position per workspace, enforced by the database.
entrySchema.index({ workspace: 1, seq: 1 }, { unique: true });
entrySchema.index({ workspace: 1, tool: 1 });

const headSchema = new Schema<HeadDoc>({ _id: String, seq: Number, hash: String, signature: String }, { versionKey: false });
const cutEvidenceSchema = new Schema<CutEvidenceDoc>({ _id: String, receipt: String, found_at: Date }, { versionKey: false });

const checkpointSchema = new Schema<CheckpointDoc>(
  { _id: String, workspace: String, seq: Number, hash: String, signature: String, at: String },
  { versionKey: false },
);
checkpointSchema.index({ workspace: 1, seq: 1 }, { unique: true });

/** Positions read per window of a workspace's chain. */
export const WINDOW = 500;

/** Positions looked up past a head hint at first (4× more after a window found whole, up to {@link WINDOW}). */
const PAST_HINT_FIRST = 8;

/**
 * The query for positions `from`–`to` of one workspace's chain: the positions spelled out, so the
 * unique (workspace, seq) index answers it by lookup. A range (`$gt`/`$lte`) answers the same on
 * MongoDB, but the MongoDB-protocol server here walks every tenant's entries for a range (measured:
 * issue 33); its launcher looks a `$in` up key by key.
 */
export function positionsOf(workspace: string, from: number, to: number): { workspace: string; seq: { $in: number[] } } {
  const seqs: number[] = [];
  for (let s = Math.max(1, from); s <= to; s++) seqs.push(s);
  return { workspace, seq: { $in: seqs } };
}

/**
 * The activity of a workspace's local day, counted from its chain (issue 33: the activity metric
 * read counters instead of walking the ledger). `_id` `<workspace>|<day>`; `n` entries, `t` entries
 * per tool and `r` of them made by agents' runs (tool names with `.` written as `:`, a field path's
 * separator); `blocks` the blocks of {@link ACTIVITY_BLOCK} positions already counted in (each block
 * is added to a day once: the update's condition).
 */
interface ActivityDayDoc { _id: string; workspace: string; day: string; n: number; t: Record<string, number>; r: Record<string, number>; blocks: number[] }
/** How far a workspace's chain is counted into its days: every block up to `block` (`_id` the workspace). */
interface ActivityMarkDoc { _id: string; block: number }

/** Positions counted into the days together: a block is counted once the chain holds its last position. */
export const ACTIVITY_BLOCK = 100;

const activityDaySchema = new Schema<ActivityDayDoc>(
  { _id: String, workspace: String, day: String, n: Number, t: Schema.Types.Mixed, r: Schema.Types.Mixed, blocks: [Number] },
  { versionKey: false, minimize: false },
);
const activityMarkSchema = new Schema<ActivityMarkDoc>({ _id: String, block: Number }, { versionKey: false });

/**
 * Where one tool's entries are in a workspace's chain, for one chunk of {@link TOOL_CHUNK} positions
 * (issue 33: `ledger.list {tool}` looks its entries up instead of walking the chain). `_id`
 * `<workspace>|<tool>|<chunk>` (chunk `c` holds positions `(c-1)·TOOL_CHUNK+1` to `c·TOOL_CHUNK`);
 * `s` the positions, `blocks` the blocks of {@link ACTIVITY_BLOCK} positions already added (each
 * added once: the update's condition). How far the chain is in these is its own mark
 * (`ledger_tool_marks`, `_id` the workspace), so chains counted into days before these existed are
 * caught up by the same pass.
 */
interface ToolPositionsDoc { _id: string; workspace: string; tool: string; s: number[]; blocks: number[] }

/** Positions per {@link ToolPositionsDoc}: a tool's chunk is at most this many numbers, and a page of a rare tool reads one document per chunk. */
export const TOOL_CHUNK = 10_000;

/** Chunks of positions read per query while a `ledger.list {tool}` page looks for its entries. */
const CHUNKS_READ = 16;

const toolPositionsSchema = new Schema<ToolPositionsDoc>(
  { _id: String, workspace: String, tool: String, s: [Number], blocks: [Number] },
  { versionKey: false },
);

/** An entry's share of the activity counters. */
type ActivityFields = Pick<LedgerEntry, 'seq' | 'at' | 'tool' | 'run_id'>;

/** A workspace's activity over a span of days, per day: entries, and entries per tool with those agents' runs made. */
export interface LedgerActivity {
  perDay: Map<string, number>;
  tools: Map<string, Map<string, { count: number; by_runs: number }>>;
}

const toolField = (tool: string) => tool.replaceAll('.', ':');
const fieldTool = (field: string) => field.replaceAll(':', '.');

/** The reason given for signed positions `from`–`to` that the chain no longer holds. */
function signedButGone(from: number, to: number): string {
  return from === to ? `entry ${from} was signed but is gone` : `entries ${from}–${to} were signed but are gone`;
}

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
  /** The seq of the last entry the walk reached (the chain's length when it is whole). */
  entries: number;
  /** Hash of that entry. */
  head: string;
  /** `routine`: from the newest signed checkpoint on; `full`: from the first entry. */
  mode?: 'routine' | 'full';
  /** False when no ledger key is configured: the chain is checked, but nothing outside the database vouches for it. */
  anchored?: boolean;
  /** The Ed25519 public key (SPKI PEM) that verifies receipts and checkpoints; compare it with the one the operator publishes. */
  public_key?: string;
  /** The walk started after this seq (0: from the first entry). */
  checked_from?: number;
  /** The newest signed checkpoint the walk started from. */
  checkpoint?: { seq: number; hash: string } | null;
  /**
   * The newest signed head found (its signature verified), and where it was kept: `database` (the
   * signed head beside the chain), `redis` (kept forward-only outside the database), `process` (the
   * newest this verifying process wrote or read). The chain must still hold it.
   */
  anchor?: { seq: number; hash: string; kept_in: ('database' | 'redis' | 'process')[] } | null;
  /** When receipts were given: entries 1 to this seq were recomputed, and every receipt up to it checked against them. */
  prefix_checked?: number;
  /** One result per given receipt, in order. */
  receipts?: { receipt: string; ok: boolean; reason?: string }[];
  /** Where the chain breaks first, when it does. */
  broken_at?: { seq: number; id: string | null; reason: string };
  /**
   * A full walk that has more to walk: pass it back as `cursor` for the next page. Until the last
   * page, `ok` and `entries` say what was walked so far (from entry 1); the last page (no
   * `next_cursor`) also checks the chain's end against the signed heads.
   */
  next_cursor?: string;
}

type Broken = NonNullable<LedgerVerification['broken_at']>;

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
  readonly checkpoints: Model<CheckpointDoc>;
  /** The anchor key (outside the database); `null`: the ledger gives no receipts. */
  readonly signer: LedgerSigner | null;
  readonly #checkpointEvery: number;
  readonly #fullWalkPage: { entries: number; ms: number };
  readonly #redisPrefix: string;
  readonly #cuts: Model<CutEvidenceDoc>;
  /** The newest signed entry statement (a receipt) this process wrote or read, per workspace: a head Redis losing its data cannot take from it. */
  readonly #remembered = new Map<string, string>();
  readonly #activityDays: Model<ActivityDayDoc>;
  readonly #activityMarks: Model<ActivityMarkDoc>;
  readonly #toolPositions: Model<ToolPositionsDoc>;
  readonly #toolMarks: Model<ActivityMarkDoc>;
  /** The count into days running in this process, per workspace (one at a time; a later call runs after it). */
  readonly #counting = new Map<string, Promise<number>>();

  constructor(db: Connection, redis?: Redis, options: { signer?: LedgerSigner | null; checkpointEvery?: number; redisPrefix?: string; fullWalkPage?: { entries: number; ms: number } } = {}) {
    this.entries = modelOn<LedgerEntry & { _id: string }>(db, 'LedgerEntry', entrySchema, 'ledger');
    this.#heads = modelOn<HeadDoc>(db, 'LedgerHead', headSchema, 'ledger_heads');
    this.checkpoints = modelOn<CheckpointDoc>(db, 'LedgerCheckpoint', checkpointSchema, 'ledger_checkpoints');
    this.#cuts = modelOn<CutEvidenceDoc>(db, 'LedgerCutEvidence', cutEvidenceSchema, 'ledger_cut_evidence');
    this.#activityDays = modelOn<ActivityDayDoc>(db, 'LedgerActivityDay', activityDaySchema, 'ledger_activity');
    this.#activityMarks = modelOn<ActivityMarkDoc>(db, 'LedgerActivityMark', activityMarkSchema, 'ledger_activity_marks');
    this.#toolPositions = modelOn<ToolPositionsDoc>(db, 'LedgerToolPositions', toolPositionsSchema, 'ledger_tool_positions');
    this.#toolMarks = modelOn<ActivityMarkDoc>(db, 'LedgerToolMark', activityMarkSchema, 'ledger_tool_marks');
    this.#redis = redis;
    this.signer = options.signer === undefined ? LedgerSigner.fromEnv() : options.signer;
    this.#checkpointEvery = options.checkpointEvery ?? CHECKPOINT_EVERY;
    this.#fullWalkPage = options.fullWalkPage ?? FULL_WALK_PAGE;
    this.#redisPrefix = options.redisPrefix ?? redisKeyPrefix();
  }

  async init(): Promise<void> {
    await Promise.all([ensureModel(this.entries), ensureModel(this.#heads), ensureModel(this.checkpoints), ensureModel(this.#cuts), ensureModel(this.#activityDays), ensureModel(this.#activityMarks), ensureModel(this.#toolPositions), ensureModel(this.#toolMarks)]);
  }

  #anchorKey(workspace: string): string {
    return `${this.#redisPrefix}:ledger:anchor:${workspace}`;
  }

  #cutKey(workspace: string): string {
    return `${this.#redisPrefix}:ledger:cut:${workspace}`;
  }

  /** Remembers a signed entry statement as this process's newest for its workspace (never an older one). */
  #remember(workspace: string, receipt: string): void {
    const known = this.#remembered.get(workspace);
    if (known && (parseReceipt(known)?.seq ?? 0) >= (parseReceipt(receipt)?.seq ?? 0)) return;
    this.#remembered.delete(workspace);
    if (this.#remembered.size >= REMEMBERED_HEADS) this.#remembered.delete(this.#remembered.keys().next().value!);
    this.#remembered.set(workspace, receipt);
  }

  /**
   * Before extending a chain whose end was read from the database: when a signed head kept
   * elsewhere (Redis, or this process's memory) is further on, the chain was cut back (nothing
   * else shortens it). The append goes on — the action it records has happened — but that head is
   * kept apart as evidence first, in Redis and in the database, so verify keeps reporting the cut
   * after new entries pass the old position and move the heads on.
   */
  async #keepCutEvidence(workspace: string, headSeq: number): Promise<void> {
    if (!this.signer) return;
    const [redisHead, databaseHead] = await Promise.all([
      this.#redis ? this.#redis.get(this.#anchorKey(workspace)).catch(() => null) : null,
      this.#heads.findById(signedHeadId(workspace)).lean(),
    ]);
    let newest: { text: string; seq: number } | null = null;
    for (const text of [this.#remembered.get(workspace) ?? null, redisHead]) {
      const r = text ? parseReceipt(text) : null;
      if (r && r.seq > headSeq && r.seq > (newest?.seq ?? 0) && this.signer.verify(workspace, r.seq, r.hash, r.signature)) newest = { text: text!, seq: r.seq };
    }
    // The database's signed head is a head statement, not a receipt: kept as evidence in its own form ("head:" + seq;hash;signature).
    if (databaseHead?.signature && databaseHead.seq > headSeq && databaseHead.seq > (newest?.seq ?? 0) && this.signer.verify(workspace, databaseHead.seq, databaseHead.hash, databaseHead.signature, HEAD_CONTEXT)) {
      newest = { text: `head:${formatReceipt({ seq: databaseHead.seq, hash: databaseHead.hash, signature: databaseHead.signature })}`, seq: databaseHead.seq };
    }
    if (!newest) return;
    if (await this.entries.exists({ workspace, seq: newest.seq })) return; // only the head hint lags (a crash between insert and hint)
    await Promise.all([
      this.#redis?.set(this.#cutKey(workspace), newest.text, 'NX').catch(() => undefined),
      this.#cuts.collection.insertOne({ _id: workspace, receipt: newest.text, found_at: new Date() } as never).catch(() => undefined), // the first evidence stays
    ]);
  }

  /**
   * Appends one entry to its workspace's chain and publishes it for `/v1/events`. Appends of one
   * workspace are group-committed: while a batch is being written, new entries queue and go
   * out together in the next one (one ordered insert and one head update per batch).
   */
  append(record: LedgerRecord): Promise<AppendedEntry> {
    const workspace = record.principal.workspace;
    const scope = ledgerReceiptScope.getStore();
    const appended = new Promise<AppendedEntry>((resolve, reject) => {
      const queue = this.#pending.get(workspace) ?? [];
      queue.push({ record, at: new Date().toISOString(), id: record.id ?? newId('led'), resolve, reject });
      this.#pending.set(workspace, queue);
      if (!this.#flushing.has(workspace)) void this.#flush(workspace);
    });
    if (!scope) return appended;
    return appended.then((entry) => {
      if (entry.receipt) scope.receipt = entry.receipt;
      return entry;
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
      const cached = this.#headCache.get(workspace);
      const head = cached ?? (await this.#heads.findById(workspace).lean()) ?? { _id: workspace, seq: 0, hash: GENESIS_HASH };
      if (!cached) await this.#keepCutEvidence(workspace, head.seq);
      const entries: LedgerEntry[] = [];
      let prev = head.hash;
      for (const [i, p] of rest.entries()) {
        const r = p.record;
        const body: Omit<LedgerEntry, 'hash'> = {
          id: p.id, seq: head.seq + 1 + i, at: p.at, workspace, actor: r.principal.actor, credential_id: r.principal.credential_id,
          tool: r.tool, module: r.module ?? r.tool.split('.')[0], risk: r.risk, input_digest: r.input_digest, outcome: r.outcome,
          ...(r.approval_id ? { approval_id: r.approval_id } : {}),
          ...(r.idempotency_key ? { idempotency_key: r.idempotency_key } : {}),
          ...(r.replayed ? { replayed: true } : {}),
          ...(r.principal.run ? { run_id: r.principal.run } : {}),
          ...(r.event ? { event: r.event } : {}),
          duration_ms: r.duration_ms, prev_hash: prev,
        };
        const entry = { ...body, hash: entryHash(body) };
        entries.push(entry);
        prev = entry.hash;
      }
      let inserted = entries.length;
      let alreadyStored: LedgerEntry | null = null;
      try {
        await this.entries.collection.insertMany(entries.map((e) => ({ _id: e.id, ...e })) as never[], { ordered: true });
      } catch (err) {
        const e = err as { code?: number; writeErrors?: { index: number; code: number }[] | { index: number; code: number } };
        const first = Array.isArray(e.writeErrors) ? e.writeErrors[0] : e.writeErrors;
        if (e.code !== 11000 && first?.code !== 11000) throw err;
        // Ordered: everything before the first failed position is stored.
        inserted = first?.index ?? 0;
        // The failed one may be an entry whose id is already in the chain (its action's outcome,
        // written by whoever settled it first): it is not appended again.
        if (rest[inserted].record.id) alreadyStored = await this.entries.findById(rest[inserted].id, { _id: 0 }).lean();
      }
      if (inserted > 0) {
        const stored = entries.slice(0, inserted);
        // The signed head and the anchors go once the entries are stored (a head left behind by a
        // crash here is the lagging head #keepCutEvidence and #repairHead already allow for).
        await this.#anchor(workspace, stored);
        const last = stored[stored.length - 1];
        this.#headCache.set(workspace, { _id: workspace, seq: last.seq, hash: last.hash });
        // A block completed: counted into its days in the background (a failure is caught up by the next block or the sweep).
        if (Math.floor(last.seq / ACTIVITY_BLOCK) > Math.floor((stored[0].seq - 1) / ACTIVITY_BLOCK)) void this.countActivity(workspace).catch(() => undefined);
        for (let i = 0; i < inserted; i++) rest[i].resolve(entries[i]);
      }
      if (alreadyStored) {
        rest[inserted].resolve(alreadyStored);
        inserted++;
      }
      rest = rest.slice(inserted);
      if (rest.length > 0) {
        // Another process took the next position: find the real end of the chain and go on from there.
        this.#headCache.delete(workspace);
        await this.#repairHead(workspace, inserted > 0 ? entries[inserted - 1].seq : head.seq);
      }
    }
  }

  /**
   * Once a batch is stored: signs each entry (its receipt) and the new head, moves the database's
   * head forward with its signature (never back), keeps a signed checkpoint at every multiple of
   * `checkpointEvery`, moves the signed head kept in Redis forward (never back) and publishes each
   * entry for `/v1/events` — the Redis part in one pipeline, one round trip per batch (the anchor
   * first, then the events, in that order on the server). Ed25519 signing (about 30 µs a
   * statement) runs on libuv's thread pool, not on the service's thread.
   */
  async #anchor(workspace: string, stored: AppendedEntry[]): Promise<void> {
    const signing = this.signer?.canSign === true;
    const last = stored[stored.length - 1];
    const checkpoints: CheckpointDoc[] = [];
    let headSignature: string | undefined;
    if (signing) {
      // On the thread pool, all of the batch at once: the service's JavaScript thread does not wait on Ed25519.
      const [signatures, head] = await Promise.all([
        Promise.all(stored.map((entry) => this.signer!.signAsync(workspace, entry.seq, entry.hash))),
        this.signer!.signAsync(workspace, last.seq, last.hash, HEAD_CONTEXT),
      ]);
      headSignature = head;
      for (const [i, entry] of stored.entries()) {
        const signature = signatures[i];
        entry.receipt = formatReceipt({ seq: entry.seq, hash: entry.hash, signature });
        if (entry.seq % this.#checkpointEvery === 0) {
          checkpoints.push({ _id: `${workspace}:${entry.seq}`, workspace, seq: entry.seq, hash: entry.hash, signature, at: entry.at });
        }
      }
      this.#remember(workspace, last.receipt!);
    }
    // The hint and the signed head, each forward only, in one command (a duplicate key: that one is already further on).
    const forward = (_id: string, set: Record<string, unknown>) => ({ updateOne: { filter: { _id, seq: { $lt: last.seq } }, update: { $set: set }, upsert: true } });
    const headStored = eachItem(headSignature ? 2 : 1, () => this.#heads.collection.bulkWrite([
      forward(workspace, { seq: last.seq, hash: last.hash }),
      ...(headSignature ? [forward(signedHeadId(workspace), { seq: last.seq, hash: last.hash, signature: headSignature })] : []),
    ] as never[], { ordered: false })).then((results) => {
      for (const failed of results) if (failed && (failed as { code?: number }).code !== 11000) throw failed;
    });
    let redisDone: Promise<unknown> | undefined;
    if (this.#redis) {
      const pipeline = this.#redis.pipeline();
      if (signing) {
        pipeline.eval(
          // Moves the anchor forward only: SET when absent or older.
          "local cur = redis.call('GET', KEYS[1]) if cur then local s = tonumber(string.match(cur, '^(%d+);')) if s and s >= tonumber(ARGV[1]) then return 0 end end redis.call('SET', KEYS[1], ARGV[2]) return 1",
          1, this.#anchorKey(workspace), String(last.seq), last.receipt!,
        );
      }
      for (const entry of stored) {
        pipeline.publish(`cuadra:ledger:${workspace}`, JSON.stringify({ module: entry.module, tool: entry.tool, outcome: entry.outcome, at: entry.at }));
      }
      redisDone = pipeline.exec().catch(() => undefined);
    }
    // Events are not waited for when the ledger is unsigned (as before): nothing depends on them.
    await Promise.all([
      headStored,
      checkpoints.length === 0 ? undefined : this.checkpoints.collection.insertMany(checkpoints as never[], { ordered: false }).catch(() => undefined), // the entries are stored: a missing checkpoint only makes routine verify walk further
      signing ? redisDone : undefined,
    ]);
  }

  /** Moves the head hint forward to the last entry actually stored after `seq`. */
  async #repairHead(workspace: string, seq: number): Promise<void> {
    let last = seq;
    let hash: string | undefined;
    // Start from the head hint when it is further on: it only ever moves to stored entries, and a
    // process that appends rarely to a busy workspace would otherwise read every entry since its
    // own last one, one by one (measured: thousands of reads for one gateway refusal under load).
    const hint = await this.#heads.findById(workspace).lean();
    if (hint && hint.seq > last) {
      last = hint.seq;
      hash = hint.hash;
    }
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

  /**
   * Newest entries first, filtered, one bounded page: at most `limit` (200 max) entries, and at
   * most {@link LIST_WINDOWS} windows of 500 seq numbers read (each window's positions
   * looked up on the unique (workspace, seq) index, {@link positionsOf}; never a full sort). Filtered
   * by a tool, positions up to the tool mark come from the tool's positions ({@link TOOL_CHUNK}
   * chunks), so a window holds only that tool's entries. `before` continues below a seq; `next_before` is
   * where the next page starts, absent when the chain's start was reached. A filter that matches
   * rarely therefore gives short (even empty) pages that still continue.
   */
  async list(workspace: string, filter: { tool?: string; module?: string; actor?: string; run?: string; from?: string; to?: string; limit?: number; before?: number }): Promise<{ rows: LedgerEntry[]; next_before?: number }> {
    const [head, toolMark] = await Promise.all([
      this.#heads.findById(workspace).lean(),
      filter.tool ? this.#toolMarks.findById(workspace).lean() : null,
    ]);
    if (!head) return { rows: [] };
    const limit = Math.min(Math.max(filter.limit ?? 50, 1), 200);
    const out: LedgerEntry[] = [];
    const top = Math.min(head.seq, (filter.before ?? head.seq + 1) - 1);
    // Filtered by a tool, positions up to the tool mark are looked up from the tool's positions;
    // above it (what was appended since the last indexed block) they are read by position.
    const indexed = Math.min(top, (toolMark?.block ?? 0) * ACTIVITY_BLOCK);
    const conditions: Record<string, unknown> = {};
    if (filter.tool) conditions.tool = filter.tool;
    if (filter.module) conditions.module = filter.module;
    if (filter.actor) conditions['actor.id'] = filter.actor;
    if (filter.run) conditions.run_id = filter.run;
    if (filter.from || filter.to) conditions.at = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lte: filter.to } : {}) };
    /** Reads the entries at `seqs` (newest first); true when the page is full. */
    const take = async (seqs: number[]): Promise<boolean> => {
      const rows = await this.entries.find({ workspace, seq: { $in: seqs }, ...conditions }, { _id: 0 }).lean();
      rows.sort((a, b) => b.seq - a.seq);
      out.push(...rows.slice(0, limit - out.length));
      return out.length >= limit;
    };
    const full = () => ({ rows: out, ...(out.at(-1)!.seq > 1 ? { next_before: out.at(-1)!.seq } : {}) });
    // Unfiltered, the newest `limit` positions are the page (a chain has no gaps): read just those first.
    const filtered = Object.keys(conditions).length > 0;
    let high = top;
    let windows = 0;
    for (let size = filtered ? WINDOW : Math.min(WINDOW, limit); high > indexed && windows < LIST_WINDOWS; windows++, size = WINDOW) {
      const low = Math.max(indexed + 1, high - size + 1);
      if (await take(positionsOf(workspace, low, high).seq.$in)) return full();
      high = low - 1;
    }
    if (high > indexed) return { rows: out, next_before: high + 1 };
    // The indexed part: the tool's positions, newest chunk first, looked up a window at a time.
    let pending: number[] = [];
    for (let chunk = Math.ceil(high / TOOL_CHUNK); high > 0 && windows < LIST_WINDOWS; ) {
      if (pending.length < WINDOW && chunk > 0) {
        const ids: string[] = [];
        for (let c = chunk; c > Math.max(0, chunk - CHUNKS_READ); c--) ids.push(`${workspace}|${filter.tool}|${c}`);
        chunk = Math.max(0, chunk - CHUNKS_READ);
        const docs = await this.#toolPositions.find({ _id: { $in: ids } }, { _id: 0, s: 1 }).lean();
        const found = docs.flatMap((d) => d.s).filter((seq) => seq <= high && (pending.length === 0 || seq < pending.at(-1)!));
        pending.push(...found.sort((a, b) => b - a));
        if (pending.length < WINDOW && chunk > 0) continue;
      }
      if (pending.length === 0) {
        high = 0;
        break;
      }
      // Filtered by the tool alone, every indexed position is a row of the page: read just the rows still missing.
      const size = Object.keys(conditions).length === 1 ? limit - out.length : WINDOW;
      const seqs = pending.slice(0, size);
      pending = pending.slice(size);
      windows++;
      if (await take(seqs)) return full();
      high = seqs.at(-1)! - 1;
    }
    return { rows: out, ...(high > 0 ? { next_before: high + 1 } : {}) };
  }

  /**
   * The entries of a span of time (`from` ≤ at < `to`, ISO instants), projected to `at`, `tool`,
   * `module`, `outcome` and (an agent run's calls) `run_id`, for the activity metric. Walks back from the head in windows of 500
   * seq numbers (positions looked up by index, as `list`) and stops at the first window wholly before
   * `from`. The walk is capped at `maxScanned` entries read (default 50 000, 100 windows): a
   * workspace busier than that over the span gets the newest part, and `truncated` says so.
   */
  async span(workspace: string, from: string, to: string, maxScanned = 50_000): Promise<{ entries: Pick<LedgerEntry, 'at' | 'tool' | 'module' | 'outcome' | 'run_id'>[]; truncated: boolean }> {
    const head = await this.#heads.findById(workspace).lean();
    const out: Pick<LedgerEntry, 'at' | 'tool' | 'module' | 'outcome' | 'run_id'>[] = [];
    if (!head) return { entries: out, truncated: false };
    let scanned = 0;
    for (let high = head.seq; high > 0; high -= WINDOW) {
      if (scanned >= maxScanned) return { entries: out, truncated: true };
      const rows = await this.entries.find(positionsOf(workspace, high - WINDOW + 1, high), { _id: 0, at: 1, tool: 1, module: 1, outcome: 1, run_id: 1 }).lean();
      // Counted by positions, so even a chain with gaps ends the walk within the cap.
      scanned += WINDOW;
      let newest = '';
      for (const r of rows) {
        if (r.at > newest) newest = r.at;
        if (r.at >= from && r.at < to) out.push({ at: r.at, tool: r.tool, module: r.module, outcome: r.outcome, ...(r.run_id ? { run_id: r.run_id } : {}) });
      }
      // Entries are appended in time order (up to a batch's milliseconds): older windows hold nothing later.
      if (rows.length > 0 && newest < from) break;
    }
    return { entries: out, truncated: false };
  }

  /**
   * Counts a workspace's complete blocks of {@link ACTIVITY_BLOCK} positions not yet counted into
   * its day counters or its tools' positions (each has its own mark; the pass starts at the lower),
   * oldest first, at most `maxBlocks` of them. Idempotent and safe to run in
   * several processes at once: a block goes into each day's document once (the update's condition
   * names the block), and the mark moves forward only, after its days. A crash between leaves the
   * mark behind, and the next run counts that block again into the days still missing it.
   * @returns the blocks counted
   */
  countActivity(workspace: string, maxBlocks = 1_000): Promise<number> {
    const running = this.#counting.get(workspace);
    const next = (running ? running.catch(() => 0) : Promise.resolve(0)).then(() => this.#countBlocks(workspace, maxBlocks));
    this.#counting.set(workspace, next);
    const forget = () => {
      if (this.#counting.get(workspace) === next) this.#counting.delete(workspace);
    };
    next.then(forget, forget);
    return next;
  }

  async #countBlocks(workspace: string, maxBlocks: number): Promise<number> {
    const [dayMark, toolMark, head] = await Promise.all([this.#activityMarks.findById(workspace).lean(), this.#toolMarks.findById(workspace).lean(), this.#heads.findById(workspace).lean()]);
    const [daysDone, toolsDone] = [dayMark?.block ?? 0, toolMark?.block ?? 0];
    const first = Math.min(daysDone, toolsDone) + 1;
    const last = Math.min(Math.floor((head?.seq ?? 0) / ACTIVITY_BLOCK), first - 1 + maxBlocks);
    let counted = 0;
    for (let block = first; block <= last; block++) {
      const rows = await this.entries.find(positionsOf(workspace, (block - 1) * ACTIVITY_BLOCK + 1, block * ACTIVITY_BLOCK), { _id: 0, seq: 1, at: 1, tool: 1, run_id: 1 }).lean();
      if (block > toolsDone) await this.#indexTools(workspace, block, rows);
      if (block <= daysDone) continue;
      const days = new Map<string, { n: number; t: Record<string, number>; r: Record<string, number> }>();
      for (const e of rows) {
        const day = localDate(new Date(e.at));
        const d = days.get(day) ?? { n: 0, t: {}, r: {} };
        d.n++;
        d.t[toolField(e.tool)] = (d.t[toolField(e.tool)] ?? 0) + 1;
        if (e.run_id) d.r[toolField(e.tool)] = (d.r[toolField(e.tool)] ?? 0) + 1;
        days.set(day, d);
      }
      await Promise.all([...days].map(async ([day, d]) => {
        const inc: Record<string, number> = { n: d.n };
        for (const [k, v] of Object.entries(d.t)) inc[`t.${k}`] = v;
        for (const [k, v] of Object.entries(d.r)) inc[`r.${k}`] = v;
        await this.#activityDays.collection.updateOne(
          { _id: `${workspace}|${day}`, blocks: { $ne: block } } as never,
          { $inc: inc, $push: { blocks: block }, $setOnInsert: { workspace, day } } as never,
          { upsert: true },
        ).catch((err: { code?: number }) => {
          if (err.code !== 11000) throw err; // the day already holds this block
        });
      }));
      await this.#activityMarks.collection.updateOne({ _id: workspace, block: { $lt: block } } as never, { $set: { block } }, { upsert: true }).catch((err: { code?: number }) => {
        if (err.code !== 11000) throw err; // the mark is already further on
      });
      counted++;
    }
    return counted;
  }

  /** Adds one block's entries to their tools' positions (each chunk document takes a block once), then moves the tool mark. */
  async #indexTools(workspace: string, block: number, rows: Pick<LedgerEntry, 'seq' | 'tool'>[]): Promise<void> {
    const chunk = Math.ceil((block * ACTIVITY_BLOCK) / TOOL_CHUNK);
    const byTool = new Map<string, number[]>();
    for (const e of rows) byTool.set(e.tool, [...(byTool.get(e.tool) ?? []), e.seq]);
    await Promise.all([...byTool].map(([tool, seqs]) => this.#toolPositions.collection.updateOne(
      { _id: `${workspace}|${tool}|${chunk}`, blocks: { $ne: block } } as never,
      { $push: { s: { $each: seqs.sort((a, b) => a - b) }, blocks: block }, $setOnInsert: { workspace, tool } } as never,
      { upsert: true },
    ).catch((err: { code?: number }) => {
      if (err.code !== 11000) throw err; // the chunk already holds this block
    })));
    await this.#toolMarks.collection.updateOne({ _id: workspace, block: { $lt: block } } as never, { $set: { block } }, { upsert: true }).catch((err: { code?: number }) => {
      if (err.code !== 11000) throw err; // the mark is already further on
    });
  }

  /**
   * Catches up the day counters of every workspace with a chain (the background sweep; also
   * counts chains written before the counters existed), at most `maxBlocks` blocks each per call.
   * @returns the blocks counted
   */
  async countAllActivity(maxBlocks = 200): Promise<number> {
    let counted = 0;
    for await (const head of this.#heads.find({}, { _id: 1 }).lean().cursor()) {
      if (!head._id.startsWith('signed:')) counted += await this.countActivity(head._id, maxBlocks);
    }
    return counted;
  }

  /**
   * A workspace's activity per local day from `fromDay` to `toDay` (inclusive): the day counters,
   * plus the entries not counted into them yet — read newest first from the head down to the
   * counted mark, stopping at the first window wholly before `fromDay` — each added unless its day
   * already holds its block. Costs the days asked plus what was appended since the last counted
   * block, whatever the ledger's size. Reads only.
   */
  async activity(workspace: string, fromDay: string, toDay: string): Promise<LedgerActivity> {
    const days: string[] = [];
    for (let at = Date.parse(`${fromDay}T00:00:00Z`), end = Date.parse(`${toDay}T00:00:00Z`); at <= end; at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
    const [mark, head] = await Promise.all([this.#activityMarks.findById(workspace).lean(), this.#heads.findById(workspace).lean()]);
    const stored: ActivityDayDoc[] = [];
    for (let i = 0; i < days.length; i += 1_000) {
      stored.push(...(await this.#activityDays.find({ _id: { $in: days.slice(i, i + 1_000).map((d) => `${workspace}|${d}`) } }).lean()));
    }
    const perDay = new Map<string, number>();
    const tools = new Map<string, Map<string, { count: number; by_runs: number }>>();
    const blocksOf = new Map<string, Set<number>>();
    const add = (day: string, tool: string, count: number, byRuns: number) => {
      perDay.set(day, (perDay.get(day) ?? 0) + count);
      const perTool = tools.get(day) ?? new Map<string, { count: number; by_runs: number }>();
      const t = perTool.get(tool) ?? { count: 0, by_runs: 0 };
      t.count += count;
      t.by_runs += byRuns;
      perTool.set(tool, t);
      tools.set(day, perTool);
    };
    for (const doc of stored) {
      blocksOf.set(doc.day, new Set(doc.blocks));
      for (const [field, count] of Object.entries(doc.t ?? {})) add(doc.day, fieldTool(field), count, doc.r?.[field] ?? 0);
    }
    const counted = (mark?.block ?? 0) * ACTIVITY_BLOCK;
    // The tail: from past the hint (a hint may lag its entries) down to the counted mark. Past the
    // hint, a few positions at a time, more while every one asked is there (a chain has no gaps),
    // until a window holds nothing: the hint is almost always the end, and each position asked is
    // a lookup for the store (500 of them on every read made this read the heaviest a busy
    // workspace sent: issue 33, another workspace at 6.8× its idle p50 under it).
    let high = Math.max(head?.seq ?? 0, counted);
    for (let size = PAST_HINT_FIRST, more = true; more; ) {
      const rows: ActivityFields[] = await this.entries.find(positionsOf(workspace, high + 1, high + size), { _id: 0, seq: 1, at: 1, tool: 1, run_id: 1 }).lean();
      more = rows.length > 0;
      high += size;
      size = rows.length === size ? Math.min(size * 4, WINDOW) : PAST_HINT_FIRST;
      for (const e of rows) this.#addUncounted(e, fromDay, toDay, blocksOf, add);
    }
    for (let top = Math.max(head?.seq ?? 0, counted); top > counted; top -= WINDOW) {
      const rows: ActivityFields[] = await this.entries.find(positionsOf(workspace, Math.max(counted + 1, top - WINDOW + 1), top), { _id: 0, seq: 1, at: 1, tool: 1, run_id: 1 }).lean();
      let newest = '';
      for (const e of rows) {
        if (e.at > newest) newest = e.at;
        this.#addUncounted(e, fromDay, toDay, blocksOf, add);
      }
      // Entries are appended in time order: older windows hold nothing in the span.
      if (rows.length > 0 && localDate(new Date(newest)) < fromDay) break;
    }
    return { perDay, tools };
  }

  #addUncounted(e: ActivityFields, fromDay: string, toDay: string, blocksOf: Map<string, Set<number>>, add: (day: string, tool: string, count: number, byRuns: number) => void): void {
    const day = localDate(new Date(e.at));
    if (day < fromDay || day > toDay) return;
    if (blocksOf.get(day)?.has(Math.ceil(e.seq / ACTIVITY_BLOCK))) return; // its block is in that day's counter already
    add(day, e.tool, 1, e.run_id ? 1 : 0);
  }

  /**
   * Verifies the workspace's chain (CONTRACT.md §6, §9). What each mode proves, and its cost:
   *
   * - **routine**: the entries after the newest signed checkpoint are recomputed (at most about
   *   `checkpointEvery` plus what was appended since, by equality reads), and the chain's end is
   *   checked against every signed head kept: in the database beside the chain, in Redis, in this
   *   process's memory, and the cut evidence writers kept. Finds edits, removals and reorders
   *   after that checkpoint, a cut-back tail and a rewritten suffix — not an edit before it.
   * - **receipts**: each receipt proves its entry and every entry before it: entries 1 to the
   *   largest receipt's seq are recomputed (hash and chain) and every receipt and checkpoint in
   *   that range is compared with them — an edit anywhere before a receipt makes it fail, naming
   *   the first changed entry. Costs one read per entry of that prefix.
   * - **full**: every entry, every checkpoint and every signed head, in pages
   *   ({@link FULL_WALK_PAGE}): each page after the first continues from the signed `cursor` the one
   *   before it answered (where it stopped, and that hash); only a page that found nothing wrong gives
   *   one, so the last page speaks for the whole walk.
   */
  async verify(workspace: string, options: { full?: boolean; receipts?: string[]; cursor?: string } = {}): Promise<LedgerVerification> {
    const full = options.full === true;
    // A cursor continues a full walk (a routine verify or receipts take none: the tool refuses the mix).
    const resume = full && options.cursor !== undefined ? fullWalkResumes(workspace, options.cursor) : null;
    const signer = this.signer;
    const anchored = signer !== null;
    // Every signed head is taken before the walk (this process's too): one taken after could name an entry appended
    // while the walk ran and read as "signed but gone".
    const rememberedText = this.#remembered.get(workspace) ?? null;
    // The head hint is read before the walk: an entry is stored before the hint moves past it, so every entry the
    // hint names was stored when it was read. Read after the walk, an append landing in between looked like a
    // missing entry (a fresh clone's page test saw "entries 33–33 are missing" while the page was being used).
    const [hint, signedHead, anchorText, cutText, cutDoc] = await Promise.all([
      this.#heads.findById(workspace).lean(),
      anchored ? this.#heads.findById(signedHeadId(workspace)).lean() : null,
      anchored && this.#redis ? this.#redis.get(this.#anchorKey(workspace)).catch(() => null) : null,
      anchored && this.#redis ? this.#redis.get(this.#cutKey(workspace)).catch(() => null) : null,
      anchored ? this.#cuts.findById(workspace).lean() : null,
    ]);
    // Where the chain's end is said to be (by the hint and every signed head): the routine walk's checkpoint is looked up
    // near it, and its first window of positions reaches it. Only a place to look: what is found there is checked.
    const said = [hint?.seq, signedHead?.seq, parseReceipt(anchorText ?? '')?.seq, parseReceipt(rememberedText ?? '')?.seq]
      .filter((s): s is number => Number.isSafeInteger(s) && s! > 0);
    const top = Math.max(0, ...said);
    const checkpoint = anchored && !full ? await this.#newestCheckpoint(workspace, top) : null;
    let broken: Broken | undefined;
    const fail = (b: Broken) => {
      broken ??= b;
    };

    // Receipts: their signatures first; then the prefix they commit to is walked once, for all of them.
    const receipts = (options.receipts ?? []).map((text) => {
      const r = parseReceipt(text);
      if (!r) return { text, r: null, reason: 'not a receipt: expected <seq>;<hash>;<signature>' };
      if (!signer) return { text, r: null, reason: 'this deployment has no ledger key to check receipts with' };
      if (!signer.verify(workspace, r.seq, r.hash, r.signature)) return { text, r: null, reason: 'the signature does not verify for this workspace' };
      return { text, r, reason: undefined as string | undefined };
    });
    const prefixTo = Math.max(0, ...receipts.map((x) => x.r?.seq ?? 0));
    // Hashes the walks reached at the positions that are compared with a signed statement.
    const walked = new Map<number, string>();
    const compared = new Set(receipts.flatMap((x) => (x.r ? [x.r.seq] : [])));
    let prefix: { seq: number; prev: string; broken?: Broken } | undefined;
    if (prefixTo > 0 && !full) {
      prefix = await this.#walk(workspace, 0, GENESIS_HASH, { upTo: prefixTo, expected: prefixTo, cursor: prefixTo > RECEIPT_WALK_FREE, seen: walked, compared });
      // The prefix ends before the newest receipt: the entries after its end were signed, and are gone.
      if (!prefix.broken && prefix.seq < prefixTo) prefix.broken = { seq: prefix.seq + 1, id: null, reason: `${signedButGone(prefix.seq + 1, prefixTo)} (a receipt commits to them)` };
      if (prefix.broken) fail(prefix.broken);
    }

    let prev = resume?.hash ?? GENESIS_HASH;
    let seq = resume?.seq ?? 0;
    let startsWell = true;
    // The routine walk notes the hashes at the signed heads' positions it passes, so the heads need no read of their own.
    const atHeads = new Map<number, string>();
    const headPositions = new Set(said);
    let walk: WalkEnd | undefined;
    if (checkpoint) {
      startsWell = false;
      if (!signer!.verify(workspace, checkpoint.seq, checkpoint.hash, checkpoint.signature)) {
        fail({ seq: checkpoint.seq, id: null, reason: `the checkpoint at ${checkpoint.seq} is not signed by the ledger key (forged)` });
      } else {
        // The walk from the checkpoint runs beside the check of the checkpoint's own entry (one round trip, not two); it
        // counts only when that entry is the one signed.
        const [problem, fromCheckpoint] = await Promise.all([
          this.#checkSigned(workspace, checkpoint.seq, checkpoint.hash),
          this.#walk(workspace, checkpoint.seq, checkpoint.hash, { expected: top, seen: atHeads, compared: headPositions }),
        ]);
        if (problem) fail({ ...problem, reason: `${problem.reason} (checkpoint ${checkpoint.seq})` });
        else {
          prev = checkpoint.hash;
          seq = checkpoint.seq;
          startsWell = true;
          walk = fromCheckpoint;
        }
      }
    }
    const checkedFrom = seq;
    let walkBroken: Broken | undefined;
    // A full walk's page stopped short of the chain's end: its end is not compared with the heads (a later page does).
    let more = false;
    if (startsWell) {
      const page = full ? { upTo: seq + this.#fullWalkPage.entries, deadline: performance.now() + this.#fullWalkPage.ms } : {};
      walk ??= await this.#walk(workspace, seq, prev, { ...page, expected: top, cursor: full, complete: full, seen: full ? walked : atHeads, compared: full ? compared : headPositions });
      seq = walk.seq;
      prev = walk.prev;
      walkBroken = walk.broken;
      more = walk.more === true;
      if (walk.broken) fail(walk.broken);
    }
    if (more) return this.#fullWalkPageAnswer(workspace, resume?.seq ?? 0, seq, prev, walked, broken);
    if (!broken && hint && hint.seq > seq) fail({ seq: seq + 1, id: null, reason: `entries ${seq + 1}–${hint.seq} are missing` });
    if (anchored && (full || prefix)) {
      // Every checkpoint the walks covered must still match the chain walked.
      const covered = full ? seq : prefix!.broken ? prefix!.broken.seq - 1 : prefix!.seq;
      const query = full ? { workspace } : { workspace, seq: { $lte: prefixTo } };
      for (const cp of await this.checkpoints.find(query, { _id: 0 }).lean()) {
        if (!signer!.verify(workspace, cp.seq, cp.hash, cp.signature)) fail({ seq: cp.seq, id: null, reason: `the checkpoint at ${cp.seq} is not signed by the ledger key (forged)` });
        else if (full && cp.seq > seq) fail({ seq: seq + 1, id: null, reason: `${signedButGone(seq + 1, cp.seq)} (the chain was cut back)` });
        else if (cp.seq <= covered && walked.has(cp.seq) && walked.get(cp.seq) !== cp.hash) {
          fail({ seq: cp.seq, id: null, reason: `the entry at this position is not the one that was signed (rewritten) (checkpoint ${cp.seq})` });
        }
      }
    }

    // Each receipt against the entries walked (before the heads: a receipt names the earliest signed position that changed).
    let results: LedgerVerification['receipts'];
    if (options.receipts) {
      results = [];
      const prefixBreak = full ? walkBroken : prefix?.broken;
      for (const { text, r, reason } of receipts) {
        if (!r) results.push({ receipt: text, ok: false, reason: reason! });
        else if (prefixBreak && prefixBreak.seq <= r.seq) results.push({ receipt: text, ok: false, reason: `entry ${prefixBreak.seq}, which this receipt commits to: ${prefixBreak.reason}` });
        else if (!walked.has(r.seq)) results.push({ receipt: text, ok: false, reason: `entry ${r.seq} was signed but is gone` });
        else if (walked.get(r.seq) !== r.hash) results.push({ receipt: text, ok: false, reason: 'the entry at this position is not the one that was signed (rewritten)' });
        else results.push({ receipt: text, ok: true });
      }
      const first = results.find((x) => !x.ok && receipts.find((y) => y.text === x.receipt)?.r);
      if (first) {
        const r = parseReceipt(first.receipt)!;
        fail({ seq: Math.min(r.seq, prefixBreak?.seq ?? r.seq), id: null, reason: first.reason! });
      }
    }

    // Cut evidence a writer kept (a signed head it found beyond the stored chain): that entry must be back.
    for (const text of [cutText, cutDoc?.receipt ?? null]) {
      const isHead = text?.startsWith('head:') === true;
      const r = text ? parseReceipt(isHead ? text.slice('head:'.length) : text) : null;
      if (r && signer!.verify(workspace, r.seq, r.hash, r.signature, isHead ? HEAD_CONTEXT : undefined)) {
        const problem = await this.#checkSigned(workspace, r.seq, r.hash);
        if (problem) fail({ ...problem, reason: `the chain was cut back below ${r.seq} and written again: ${problem.reason}` });
      }
    }

    // The signed heads kept in the database, in Redis and in this process: the chain must still reach and hold each.
    const heads: { seq: number; hash: string; kept: 'database' | 'redis' | 'process' }[] = [];
    if (anchored) {
      if (signedHead) {
        const verifies = (h: { seq: number; hash: string; signature?: string } | null) => !!h?.signature && signer!.verify(workspace, h.seq, h.hash, h.signature, HEAD_CONTEXT);
        let head = signedHead;
        if (!verifies(head)) {
          // Read once more before saying forged: a store without read isolation (mongo-java-server's memory backend,
          // the suite's) can hand a reader the head mid-update — a new seq beside the old signature (ledger-anchor's
          // "verify while entries are appended", once in a fresh clone). A forged head reads forged twice.
          const again = await this.#heads.findById(signedHeadId(workspace)).lean();
          if (again && again.seq >= head.seq && verifies(again)) head = again;
        }
        if (!verifies(head)) {
          fail({ seq: head.seq ?? 0, id: null, reason: 'the signed head kept in the database does not verify (forged, or another signed statement put in its place)' });
        } else heads.push({ seq: head.seq, hash: head.hash, kept: 'database' });
      } else if (seq > 0 || hint) {
        fail({ seq: 0, id: null, reason: 'the database holds no signed head for this chain (removed; a ledger written before heads were signed gets one with its next entry)' });
      }
      for (const [text, kept] of [[anchorText, 'redis'], [rememberedText, 'process']] as const) {
        const r = text ? parseReceipt(text) : null;
        if (!r) continue;
        if (!signer!.verify(workspace, r.seq, r.hash, r.signature)) fail({ seq: r.seq, id: null, reason: `the signed head kept in ${kept} does not verify` });
        else heads.push({ seq: r.seq, hash: r.hash, kept });
      }
    }
    const checkedHeads = new Set<string>();
    for (const h of heads) {
      if (checkedHeads.has(`${h.seq};${h.hash}`)) continue;
      checkedHeads.add(`${h.seq};${h.hash}`);
      if (h.seq > seq) {
        if (!broken || broken.seq > seq + 1) fail({ seq: seq + 1, id: null, reason: `${signedButGone(seq + 1, h.seq)} (the chain was cut back; signed head kept in ${h.kept})` });
      } else if (!broken) {
        const known = walked.get(h.seq) ?? atHeads.get(h.seq);
        const problem = known !== undefined ? (known === h.hash ? null : { seq: h.seq, id: null, reason: 'the entry at this position is not the one that was signed (rewritten)' }) : await this.#checkSigned(workspace, h.seq, h.hash);
        if (problem) fail({ ...problem, reason: `${problem.reason} (signed head ${h.seq}, kept in ${h.kept})` });
      }
    }
    const newest = heads.reduce<typeof heads[number] | null>((a, h) => (a && a.seq >= h.seq ? a : h), null);
    const anchor = newest ? { seq: newest.seq, hash: newest.hash, kept_in: heads.filter((h) => h.seq === newest.seq && h.hash === newest.hash).map((h) => h.kept) } : null;

    const ok = !broken && (results ?? []).every((x) => x.ok);
    return {
      ok, entries: seq, head: prev, mode: full ? 'full' : 'routine', anchored, ...(signer ? { public_key: signer.publicKeyPem() } : {}), checked_from: full ? 0 : checkedFrom,
      checkpoint: checkpoint ? { seq: checkpoint.seq, hash: checkpoint.hash } : null, anchor,
      ...(prefix ? { prefix_checked: prefix.broken ? prefix.broken.seq - 1 : prefix.seq } : {}),
      ...(results ? { receipts: results } : {}), ...(broken ? { broken_at: broken } : {}),
    };
  }

  /**
   * The answer of a full walk's page that stopped before the chain's end: the checkpoints it walked
   * past are compared with the chain, and the next page's cursor is given only when nothing was wrong.
   */
  async #fullWalkPageAnswer(workspace: string, from: number, seq: number, prev: string, walked: Map<number, string>, broken: Broken | undefined): Promise<LedgerVerification> {
    const signer = this.signer;
    if (signer && !broken) {
      for (const cp of await this.checkpoints.find({ workspace }, { _id: 0 }).lean()) {
        if (cp.seq <= from || cp.seq > seq) continue;
        if (!signer.verify(workspace, cp.seq, cp.hash, cp.signature)) broken ??= { seq: cp.seq, id: null, reason: `the checkpoint at ${cp.seq} is not signed by the ledger key (forged)` };
        else if (walked.has(cp.seq) && walked.get(cp.seq) !== cp.hash) broken ??= { seq: cp.seq, id: null, reason: `the entry at this position is not the one that was signed (rewritten) (checkpoint ${cp.seq})` };
      }
    }
    return {
      ok: !broken, entries: seq, head: prev, mode: 'full', anchored: signer !== null, ...(signer ? { public_key: signer.publicKeyPem() } : {}), checked_from: 0,
      checkpoint: null, anchor: null,
      ...(broken ? { broken_at: broken } : { next_cursor: encodeSignedCursor(FULL_WALK_CURSOR, workspace, { s: seq, h: prev }) }),
    };
  }

  /**
   * The workspace's newest signed checkpoint, looked up by position near `near` (where the hint and the signed heads
   * say the chain ends): checkpoints sit at multiples of `checkpointEvery`, so the {@link CHECKPOINT_SPAN} positions
   * below and above it are asked of the unique `{workspace, seq}` index. A query by workspace alone, sorted, read
   * every tenant's checkpoints on this store (its indexes answer only queries naming all their keys) and sorted the
   * workspace's in memory: ~1,000 at 100,000 entries. Only when none is found there (a workspace whose recent
   * checkpoints are all missing) is the newest looked for anywhere, as before.
   */
  async #newestCheckpoint(workspace: string, near: number): Promise<Omit<CheckpointDoc, '_id'> | null> {
    const every = this.#checkpointEvery;
    const positions: number[] = [];
    const lowest = (Math.floor(near / every) - CHECKPOINT_SPAN + 1) * every;
    for (let s = (Math.floor(near / every) + CHECKPOINT_SPAN) * every; s >= Math.max(every, lowest); s -= every) positions.push(s);
    const [found] = await this.checkpoints.find({ workspace, seq: { $in: positions } }, { _id: 0 }).sort({ seq: -1 }).limit(1).lean();
    if (found) return found;
    if (lowest <= every) return null; // every position a checkpoint can have at this length was asked
    const [anywhere] = await this.checkpoints.find({ workspace }, { _id: 0 }).sort({ seq: -1 }).limit(1).lean();
    return anywhere ?? null;
  }

  /** Whether the stored entry at `seq` is still the one whose hash was signed; the problem if not. */
  async #checkSigned(workspace: string, seq: number, hash: string): Promise<Broken | null> {
    const entry = await this.entries.findOne({ workspace, seq }, { _id: 0 }).lean();
    if (!entry) return { seq, id: null, reason: `entry ${seq} was signed but is gone` };
    const { hash: stored, ...rest } = entry;
    if (entryHash(rest as Omit<LedgerEntry, 'hash'>) !== stored) return { seq, id: entry.id, reason: 'the entry was changed after it was written' };
    if (stored !== hash) return { seq, id: entry.id, reason: 'the entry at this position is not the one that was signed (rewritten)' };
    return null;
  }

  /**
   * Can a full walk of this workspace start now? One per workspace per `seconds` (Redis, shared
   * by every instance). Answers 0 when it may, else the seconds to wait.
   */
  async claimFullWalk(workspace: string, seconds = 60): Promise<number> {
    if (!this.#redis) return 0;
    const key = `${this.#redisPrefix}:ledger:fullwalk:${workspace}`;
    const set = await this.#redis.set(key, '1', 'EX', seconds, 'NX');
    if (set === 'OK') return 0;
    return Math.max(1, await this.#redis.ttl(key));
  }

  /**
   * Recomputes the chain from after `from` (whose hash is `start`) to its end, or to `upTo`.
   * Short walks (routine: since the newest checkpoint; a receipts' prefix up to
   * {@link RECEIPT_WALK_FREE}) read windows of positions spelled out ({@link positionsOf}), each
   * position an equality lookup on the unique `{workspace, seq}` index — on mongo-java-server a
   * range query scans the whole collection (measured: 1.6–3.7 s at 112,000 entries) —, the first
   * window reaching `expected` (where the heads say the chain ends), the next ones larger, until a
   * window comes back short: one find for a routine walk, where one `findOne` per position (25 at a
   * time) took up to four round trips of 25 commands. Long ones
   * (`cursor`) read the range in one pass and put the entries in seq order as they come. Without
   * `complete`, the walk ends quietly at the first missing entry (the caller compares that end with
   * the signed heads); with it, a missing entry before the last one found breaks the chain. `seen`
   * gets the hash at every checkpoint position and at each position in `compared`.
   */
  async #walk(workspace: string, from: number, start: string, options: { upTo?: number; expected?: number; deadline?: number; cursor?: boolean; complete?: boolean; seen?: Map<number, string>; compared?: Set<number> } = {}): Promise<WalkEnd> {
    const { upTo = Infinity, seen, compared } = options;
    let prev = start;
    let seq = from;
    const check = (entry: LedgerEntry): Broken | undefined => {
      if (entry.prev_hash !== prev) return { seq: entry.seq, id: entry.id, reason: 'prev_hash does not match the entry before it (removed or reordered)' };
      const { hash, ...rest } = entry;
      if (entryHash(rest as Omit<LedgerEntry, 'hash'>) !== hash) return { seq: entry.seq, id: entry.id, reason: 'the entry was changed after it was written' };
      if (seen && (entry.seq % this.#checkpointEvery === 0 || compared?.has(entry.seq))) seen.set(entry.seq, entry.hash);
      prev = hash;
      seq = entry.seq;
      return undefined;
    };
    if (!options.cursor) {
      // One find per window of positions, each looked up in the index: the first reaches where the chain is expected
      // to end and a few positions past it; a window found whole is followed by a larger one, until one comes back short.
      let size = Math.min(WINDOW, Math.max(0, Math.min(upTo, options.expected ?? 0) - seq) + PAST_HINT_FIRST);
      while (seq < upTo) {
        const high = Math.min(upTo, seq + size);
        const rows = (await this.entries.find(positionsOf(workspace, seq + 1, high), { _id: 0 }).lean()) as LedgerEntry[];
        rows.sort((a, b) => a.seq - b.seq);
        for (const entry of rows) {
          if (entry.seq !== seq + 1) return { seq, prev }; // the position before it is missing: the walk ends there
          const broken = check(entry);
          if (broken) return { seq, prev, broken };
        }
        if (seq < high) return { seq, prev };
        size = Math.min(size * 4, WINDOW);
      }
      return { seq, prev };
    }
    // Out-of-order arrivals (an entry whose seq was edited) wait here until their predecessor has been checked.
    const waiting = new Map<number, LedgerEntry>();
    // Windows of positions by the index, never a range (which walks every tenant's entries here).
    // Without an end, the walk goes past the head hint until a window holds nothing.
    // A page's end (a `deadline` is given) is where it may stop, not an entry that must exist: it ends where the chain does.
    const headHint = options.deadline !== undefined || !Number.isFinite(upTo) ? ((await this.#heads.findById(workspace).lean())?.seq ?? 0) : upTo;
    const hinted = Math.min(upTo, headHint);
    for (let low = from + 1; low <= upTo; low += WINDOW) {
      const high = Math.min(upTo, low + WINDOW - 1);
      const rows = (await this.entries.find(positionsOf(workspace, low, high), { _id: 0 }).lean()) as LedgerEntry[];
      rows.sort((a, b) => a.seq - b.seq);
      for (const entry of rows) {
        if (entry.seq !== seq + 1) {
          waiting.set(entry.seq, entry);
          continue;
        }
        let next: LedgerEntry | undefined = entry;
        while (next) {
          const broken = check(next);
          if (broken) return { seq, prev, broken };
          waiting.delete(next.seq);
          next = waiting.get(seq + 1);
        }
      }
      if (rows.length === 0 && high >= hinted) break;
      // Out of time with every window so far whole: the page ends here, and the next goes on from the same place.
      if (options.deadline !== undefined && seq === high && high < upTo && performance.now() >= options.deadline) return { seq, prev, more: true };
    }
    if (waiting.size > 0 && options.complete) return { seq, prev, broken: { seq: seq + 1, id: null, reason: `entry ${seq + 1} is missing` } };
    return { seq, prev, ...(options.deadline !== undefined && seq === upTo ? { more: true } : {}) };
  }
}

/** Where a full walk's `cursor` continues (the entry its previous page ended on, and that entry's hash); `invalid_input` at `/cursor` for anything else. */
function fullWalkResumes(workspace: string, cursor: string): { seq: number; hash: string } {
  const { s: seq, h: hash } = decodeSignedCursor(FULL_WALK_CURSOR, workspace, cursor);
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) throw foreignCursor();
  return { seq, hash };
}
