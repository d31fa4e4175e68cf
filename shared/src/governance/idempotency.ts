import { randomBytes } from 'node:crypto';
import { Schema, type Connection, type Model } from 'mongoose';
import { ensureModel, modelOn } from '../db.ts';
import { Coalescer, eachItem } from '../coalesce.ts';
import { CuadraError } from '../errors.ts';

/** The answer kept for a key: what was sent, byte for byte (status and body). */
export interface StoredAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * How an answer is stored: its status and the JSON text of its body, as one string. Replaying it
 * gives back exactly what `JSON.stringify` sent (an `undefined` key absent, as it was on the wire),
 * and the store keeps one value instead of the body's tree: on the MongoDB-protocol server's
 * memory backend a 2.5 KB answer held as a tree took ~20 KB of the JVM's heap, and 30,000 keyed
 * calls filled its 768 MB (`bench/invoke.ts`, `BENCH_VARIANTS=eeee`). Records written before keep
 * `body` and are read as they were.
 */
interface StoredAnswerDoc {
  status: number;
  json?: string;
  body?: Record<string, unknown>;
}

function toStored(answer: StoredAnswer): StoredAnswerDoc {
  return { status: answer.status, json: JSON.stringify(answer.body) };
}

function fromStored(stored: StoredAnswerDoc): StoredAnswer {
  return { status: stored.status, body: stored.json !== undefined ? JSON.parse(stored.json) as Record<string, unknown> : stored.body ?? {} };
}

interface IdempotencyDoc {
  /** `<workspace>:<key>`: one record per key per workspace, made unique by `_id`. */
  _id: string;
  workspace: string;
  tool: string;
  input_digest: string;
  /**
   * `released`: an attempt that provably wrote nothing was handed back by recovery ({@link
   * IdempotencyStore.releaseRun}); the next request with the same tool and input takes the record
   * over, keeping its `nonce`.
   */
  state: 'running' | 'done' | 'released';
  answer: StoredAnswerDoc | null;
  /**
   * Chosen when the key is first used and kept while the record lives (a released record taken
   * over keeps it): with the key, it names the call for ids its records take in every attempt
   * (`repeatableId`, runs.ts), so an attempt's late write and its rerun collide on `_id`; a key used
   * again after its retention gets a new one. Records written before have none (their attempts'
   * ids are random, as before).
   */
  nonce?: string;
  /**
   * The running attempt: the intent of its action is `int_<run>` (written before the handler
   * starts). A running record whose lease has passed and whose intent does not exist provably
   * never started its action, so a retry may take it over.
   */
  run: string;
  /** Until when the running attempt owns the key. */
  lease_until: Date;
  created_at: Date;
  /** Kept at least this long (CONTRACT.md §3: at least 24 h). */
  expires_at: Date;
}

const schema = new Schema<IdempotencyDoc>(
  {
    _id: String, workspace: String, tool: String, input_digest: String, state: String,
    answer: { type: Schema.Types.Mixed, default: null }, nonce: String, run: String, lease_until: Date, created_at: Date, expires_at: Date,
  },
  { versionKey: false },
);
// Recovery finds the key of an interrupted attempt by its run.
schema.index({ run: 1 });

/**
 * Where the sweep finds expired records without reading them all. Each insert of records also
 * inserts, in the same command and ahead of them, one marker per expiry hour naming their ids:
 * `~expiry|<hour>|<series>|<n>` (n = 0, 1, 2 … within a series; a process starts a series per hour
 * and a new one every {@link SERIES_MARKS} markers). The hour's document (`idempotency_expiry`)
 * names its series, and is written before a series' first marker. No record id starts with `~`
 * (they are `<workspace>:<key>`), and markers have no `workspace` or `expires_at`.
 *
 * Before, ids went into separate chunk documents (`idempotency_expiry_ids`, filled with `$push`):
 * one more command per batch of keyed calls, and a growing document the store copied on every
 * push — 10 % of a keyed call's throughput (`bench/invoke.ts`, `BENCH_VARIANTS=ee`). Hours written
 * that way (`chunks`) are still swept.
 */
interface ExpiryHourDoc { _id: string; series?: string[]; chunks?: string[] }
/** A marker, or a chunk of an hour indexed before markers: ids that expire in one hour. */
interface ExpiryIdsDoc { _id: string; ids: string[] }
const EXPIRY_HOURS = 'idempotency_expiry';
const EXPIRY_CHUNKS = 'idempotency_expiry_ids';
const EXPIRY_MIGRATION = 'idempotency-expiry-index';
const MARK_PREFIX = '~expiry|';
const SERIES_MARKS = 4_096;
/** Markers read per command by the sweep; a run of this many missing ends a series. */
const SWEEP_WINDOW = 100;

function markId(series: string, n: number): string {
  return `${MARK_PREFIX}${series}|${n}`;
}

/** The UTC hour a record expiring at `at` is swept after: `2026-11-28T20`. */
export function expiryBucket(at: Date): string {
  return at.toISOString().slice(0, 13);
}

/**
 * How long a running action owns its intent and its Idempotency-Key before recovery may settle
 * it (`CUADRA_ACTION_LEASE_MS`, default 60 s; tests shorten it).
 */
export const ACTION_LEASE_MS = Number(process.env.CUADRA_ACTION_LEASE_MS) > 0 ? Number(process.env.CUADRA_ACTION_LEASE_MS) : 60_000;

/** How long answers are kept for replay. */
export const IDEMPOTENCY_RETENTION_MS = 48 * 3600 * 1000;

/** The intent id of a keyed attempt: written before its handler runs, so its absence proves the action never started. */
export function intentIdOf(run: string): string {
  return `int_${run}`;
}

/** A key this caller now holds: run the call, then complete (or release, if provably nothing was done). */
export interface IdempotencyRun {
  kind: 'run';
  /** Names this attempt; its action's intent must be {@link intentIdOf}(run). */
  run: string;
  /**
   * Names the call across its attempts (the record's id and nonce): the same for a rerun after
   * recovery handed the key back, different for the same key used again after its retention.
   */
  scope: string;
  release(): Promise<void>;
  complete(answer: StoredAnswer): Promise<void>;
}

/** What {@link IdempotencyStore.begin} decided. */
export type IdempotencyStart = IdempotencyRun | { kind: 'replay'; answer: StoredAnswer };

/** What the store needs to know about intents (owned by the governance stores). */
export interface IntentProbe {
  /** Does the intent exist (the action may have started and not been settled)? */
  exists(intentId: string): Promise<boolean>;
  /** Settles a stale intent now (its `interrupted` ledger entry, its key's answer); false if another did. */
  settle(intentId: string): Promise<boolean>;
}

/**
 * Idempotency-Key records in MongoDB (not Redis: a replay must survive a Redis restart when
 * money is involved). The first request inserts the record (unique `_id`), runs, and stores
 * its answer; duplicates wait for it and replay it, or are told of a different input.
 */
export class IdempotencyStore {
  readonly #model: Model<IdempotencyDoc>;
  readonly #waitMs: number;
  readonly #leaseMs: number;
  #intents: IntentProbe | null = null;
  /**
   * The two writes of every keyed call, each sent for many calls at once (`Coalescer`: one command
   * while none is in flight, then one for all that queued meanwhile). A record is still inserted
   * before its call runs and its answer stored before the call is answered; a duplicate key in the
   * same command fails at its own index, exactly as its own insert would have.
   */
  readonly #inserts: Coalescer<IdempotencyDoc>;
  readonly #completions: Coalescer<{ id: string; run: string; answer: StoredAnswer }>;
  /** This process's series of expiry markers per hour (written one batch at a time: the insert coalescer's). */
  readonly #series = new Map<string, { id: string; next: number }>();

  constructor(db: Connection, options: { waitMs?: number; leaseMs?: number } = {}) {
    this.#model = modelOn<IdempotencyDoc>(db, 'IdempotencyRecord', schema, 'idempotency');
    this.#waitMs = options.waitMs ?? 15_000;
    this.#leaseMs = options.leaseMs ?? ACTION_LEASE_MS;
    this.#inserts = new Coalescer(async (records) => {
      // The markers go first in the same command: the server stores them before the records (a
      // crash in between leaves only ids the sweep finds no record for).
      const marks = await this.#expiryMarks(records);
      // Straight to the driver: every field is given, typed as stored. Unordered: each record stands alone.
      const results = await eachItem(marks.length + records.length, () => this.#model.collection.insertMany([...marks, ...records] as never[], { ordered: false }));
      const markFailed = results.slice(0, marks.length).find((r) => r !== null);
      if (markFailed) {
        // A record the sweep could not find would be kept for ever: take back what was stored and fail
        // them all (with a duplicate marker, each caller finds its key free and takes it again, under the next marker).
        const stored = records.filter((_, i) => results[marks.length + i] === null);
        await this.#model.collection.deleteMany({ _id: { $in: stored.map((r) => r._id) }, run: { $in: stored.map((r) => r.run) } } as never).catch(() => undefined);
        throw markFailed;
      }
      return results.slice(marks.length);
    });
    this.#completions = new Coalescer(async (done) => {
      const ops = done.map(({ id, run, answer }) => ({ updateOne: { filter: { _id: id, state: 'running', run }, update: { $set: { state: 'done', answer: toStored(answer) } } } }));
      return eachItem(done.length, () => this.#model.collection.bulkWrite(ops as never[], { ordered: false }));
    });
  }

  /** Lets a retry settle or take over an attempt whose process died (set by the owning service). */
  probeIntentsWith(probe: IntentProbe): void {
    this.#intents = probe;
  }

  #handle(id: string, run: string, nonce: string): IdempotencyRun {
    return {
      kind: 'run',
      run,
      scope: `${id}|${nonce}`,
      release: async () => {
        await this.#model.deleteOne({ _id: id, state: 'running', run });
      },
      complete: async (answer) => {
        await this.#completions.add({ id, run, answer });
      },
    };
  }

  /**
   * Gives the answer `outcome_unknown` to the key whose attempt `run` was interrupted mid-action
   * (recovery found its intent): a retry replays that instead of running a second time.
   */
  async settleInterrupted(run: string, answer: StoredAnswer): Promise<void> {
    await this.#model.updateOne({ run, state: 'running' }, { $set: { state: 'done', answer: toStored(answer) } });
  }

  /**
   * Hands back the key whose attempt `run` provably did nothing (recovery found no record it wrote):
   * the next request with it runs the call. The record stays, `released`, with its nonce: the rerun
   * takes it over and its records get the ids the dead attempt's got, so a write of that attempt
   * the store applies only now (sent before its process died) collides with the rerun's instead of
   * adding a second record (docs/measurements.md, "A double payment after a kill").
   */
  async releaseRun(run: string): Promise<void> {
    await this.#model.updateOne({ run, state: 'running' }, { $set: { state: 'released', run: `released_${run}`, lease_until: new Date(0) } });
  }

  async init(): Promise<void> {
    await ensureModel(this.#model);
    // Records stored before the expiry index existed are put in it once (a marker in `migrations`; a
    // start that died half-way lists some ids twice when it runs again, and the sweep deletes a record once).
    const migrations = this.#model.db.collection<{ _id: string; at: Date }>('migrations');
    if (await migrations.findOne({ _id: EXPIRY_MIGRATION })) return;
    let page: { _id: string; expires_at: Date }[] = [];
    const flush = async () => {
      const marks = await this.#expiryMarks(page.splice(0));
      if (marks.length > 0) await this.#model.collection.insertMany(marks as never[]);
    };
    for await (const doc of this.#model.collection.find({}, { projection: { _id: 1, expires_at: 1 } })) {
      if (!(doc.expires_at instanceof Date)) continue; // a marker, not a record
      page.push(doc as unknown as { _id: string; expires_at: Date });
      if (page.length === 1_000) await flush();
    }
    await flush();
    await migrations.updateOne({ _id: EXPIRY_MIGRATION }, { $set: { at: new Date() } }, { upsert: true });
  }

  /**
   * The markers naming `records`' ids, one per expiry hour, each the next of this process's series
   * for its hour; a series' hour document names it before its first marker is handed out.
   */
  async #expiryMarks(records: readonly { _id: string; expires_at: Date }[]): Promise<ExpiryIdsDoc[]> {
    const byHour = new Map<string, string[]>();
    for (const r of records) {
      const hour = expiryBucket(r.expires_at);
      const ids = byHour.get(hour);
      if (ids) ids.push(r._id);
      else byHour.set(hour, [r._id]);
    }
    const marks: ExpiryIdsDoc[] = [];
    for (const [hour, ids] of byHour) {
      let series = this.#series.get(hour);
      if (!series || series.next >= SERIES_MARKS) {
        // Series of hours already over get no new ids (a record expires after it is written): forgotten here,
        // as the process that sweeps them forgets them there.
        const over = expiryBucket(new Date());
        for (const h of this.#series.keys()) if (h < over) this.#series.delete(h);
        const id = `${hour}|${randomBytes(8).toString('hex')}`;
        await this.#model.db.collection<ExpiryHourDoc>(EXPIRY_HOURS).updateOne({ _id: hour }, { $addToSet: { series: id } }, { upsert: true });
        this.#series.set(hour, (series = { id, next: 0 }));
      }
      // Every marker handed out uses up its number, stored or not: the sweep walks over gaps.
      marks.push({ _id: markId(series.id, series.next++), ids });
    }
    return marks;
  }

  async begin(workspace: string, key: string, tool: string, digest: string, now = new Date()): Promise<IdempotencyStart> {
    const id = `${workspace}:${key}`;
    const deadline = Date.now() + this.#waitMs;
    for (;;) {
      const run = randomBytes(12).toString('hex');
      const nonce = randomBytes(9).toString('base64url');
      try {
        const record: IdempotencyDoc = {
          _id: id, workspace, tool, input_digest: digest, state: 'running', answer: null, nonce, run, lease_until: new Date(Date.now() + this.#leaseMs),
          created_at: now, expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS),
        };
        await this.#inserts.add(record);
        return this.#handle(id, run, nonce);
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      const existing = await this.#model.findById(id).lean();
      if (!existing) continue; // released meanwhile: try to take it
      if (existing.expires_at.getTime() <= now.getTime()) {
        await this.#model.deleteOne({ _id: id, expires_at: existing.expires_at });
        continue;
      }
      if (existing.state === 'released') {
        // Handed back by recovery: the same call runs again under the record's nonce; another call
        // (a different tool or input) finds the key free, as if the record were gone — and so does
        // the same call once less than half the retention is left (its answer is kept at least 24 h
        // from now: a new record; a dead attempt's write is not still in flight a day later).
        if (existing.tool !== tool || existing.input_digest !== digest || existing.expires_at.getTime() - now.getTime() < IDEMPOTENCY_RETENTION_MS / 2) {
          await this.#model.deleteOne({ _id: id, state: 'released', run: existing.run });
          continue;
        }
        const taken = await this.#model.updateOne(
          { _id: id, state: 'released', run: existing.run },
          { $set: { state: 'running', run, lease_until: new Date(Date.now() + this.#leaseMs) } },
        );
        if (taken.modifiedCount === 1) return this.#handle(id, run, existing.nonce ?? existing.run);
        continue;
      }
      if (existing.tool !== tool || existing.input_digest !== digest) {
        throw new CuadraError('idempotency_conflict', 'This Idempotency-Key was already used with a different tool or input. Use a new key for a new request.');
      }
      if (existing.state === 'done' && existing.answer) return { kind: 'replay', answer: fromStored(existing.answer) };
      if (existing.state === 'running' && this.#intents && existing.lease_until && existing.lease_until.getTime() <= Date.now()) {
        // The attempt holding the key is past its lease: its process died or hangs. Its intent is
        // written before its action starts, so without one the action provably never started.
        const intentId = intentIdOf(existing.run);
        if (await this.#intents.exists(intentId)) {
          // It may have acted: settle it now (interrupted entry, outcome_unknown answer), then replay that.
          await this.#intents.settle(intentId);
          continue;
        }
        const run = randomBytes(12).toString('hex');
        const taken = await this.#model.updateOne(
          { _id: id, state: 'running', run: existing.run },
          { $set: { run, lease_until: new Date(Date.now() + this.#leaseMs) } },
        );
        if (taken.modifiedCount === 1) {
          // The intent may still appear if the old attempt was only slow, not dead: check once more.
          if (!(await this.#intents.exists(intentId))) return this.#handle(id, run, existing.nonce ?? existing.run);
        }
        continue;
      }
      if (Date.now() >= deadline) {
        throw new CuadraError('idempotency_conflict', 'A request with this Idempotency-Key is still running (or was interrupted and its outcome is unknown); it will not run twice.');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Deletes records past their retention (there is no TTL index on every MongoDB-protocol server).
   * It reads the expiry index (markers by `_id`), never the records: an hour's ids once the hour is over, deleted by
   * `_id` and only if still expired (a key used again since has a later expiry and stays), then the
   * hour itself. A record outlives its retention by at most an hour. The index holds one small
   * document per hour of retention, so reading it all is cheap.
   */
  async sweep(now = new Date()): Promise<number> {
    const db = this.#model.db;
    const hours = db.collection<ExpiryHourDoc>(EXPIRY_HOURS);
    const chunks = db.collection<ExpiryIdsDoc>(EXPIRY_CHUNKS);
    const current = expiryBucket(now);
    let deleted = 0;
    const forget = async (ids: string[]) => {
      for (let i = 0; i < ids.length; i += 500) {
        const res = await this.#model.collection.deleteMany({ _id: { $in: ids.slice(i, i + 500) }, expires_at: { $lte: now } } as never);
        deleted += res.deletedCount ?? 0;
      }
    };
    // One document per hour of retention (~49): reading them all is cheap.
    for (const hour of await hours.find({}).toArray()) {
      if (hour._id >= current) continue;
      for (const series of hour.series ?? []) {
        // Markers by _id, a window at a time, until a whole window is missing (the series' end).
        for (let n = 0; ; n += SWEEP_WINDOW) {
          const named = Array.from({ length: SWEEP_WINDOW }, (_, i) => markId(series, n + i));
          const marks = (await this.#model.collection.find({ _id: { $in: named } } as never).toArray()) as unknown as ExpiryIdsDoc[];
          if (marks.length === 0) break;
          for (const mark of marks) await forget(mark.ids);
          await this.#model.collection.deleteMany({ _id: { $in: named } } as never);
        }
      }
      // Hours indexed before the markers: chunk documents of ids.
      const chunkNames = hour.chunks ?? [];
      for (let c = 0; c < chunkNames.length; c += 100) {
        const named = chunkNames.slice(c, c + 100);
        for (const chunk of await chunks.find({ _id: { $in: named } }).toArray()) await forget(chunk.ids);
        await chunks.deleteMany({ _id: { $in: named } });
      }
      // Only once its records are gone: a sweep that dies half-way does the hour again. (A past hour
      // gets no new ids: a record always expires its retention after it is written.)
      await hours.deleteOne({ _id: hour._id });
      this.#series.delete(hour._id);
    }
    return deleted;
  }
}
