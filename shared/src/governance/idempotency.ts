import { Schema, type Connection, type Model } from 'mongoose';
import { ensureModel, modelOn } from '../db.ts';
import { CuadraError } from '../errors.ts';

/** The answer kept for a key: what was sent, byte for byte (status and body). */
export interface StoredAnswer {
  status: number;
  body: Record<string, unknown>;
}

interface IdempotencyDoc {
  /** `<workspace>:<key>`: one record per key per workspace, made unique by `_id`. */
  _id: string;
  workspace: string;
  tool: string;
  input_digest: string;
  state: 'running' | 'done';
  answer: StoredAnswer | null;
  created_at: Date;
  /** Kept at least this long (CONTRACT.md §3: at least 24 h). */
  expires_at: Date;
}

const schema = new Schema<IdempotencyDoc>(
  {
    _id: String, workspace: String, tool: String, input_digest: String, state: String,
    answer: { type: Schema.Types.Mixed, default: null }, created_at: Date, expires_at: Date,
  },
  { versionKey: false },
);
schema.index({ expires_at: 1 });

/** How long answers are kept for replay. */
export const IDEMPOTENCY_RETENTION_MS = 48 * 3600 * 1000;

/** What {@link IdempotencyStore.begin} decided. */
export type IdempotencyStart = { kind: 'run'; release(): Promise<void>; complete(answer: StoredAnswer): Promise<void> } | { kind: 'replay'; answer: StoredAnswer };

/**
 * Idempotency-Key records in MongoDB (not Redis: a replay must survive a Redis restart when
 * money is involved). The first request inserts the record (unique `_id`), runs, and stores
 * its answer; duplicates wait for it and replay it, or are told of a different input.
 */
export class IdempotencyStore {
  readonly #model: Model<IdempotencyDoc>;
  readonly #waitMs: number;

  constructor(db: Connection, options: { waitMs?: number } = {}) {
    this.#model = modelOn<IdempotencyDoc>(db, 'IdempotencyRecord', schema, 'idempotency');
    this.#waitMs = options.waitMs ?? 15_000;
  }

  async init(): Promise<void> {
    await ensureModel(this.#model);
  }

  async begin(workspace: string, key: string, tool: string, digest: string, now = new Date()): Promise<IdempotencyStart> {
    const id = `${workspace}:${key}`;
    const deadline = Date.now() + this.#waitMs;
    for (;;) {
      try {
        await this.#model.create({ _id: id, workspace, tool, input_digest: digest, state: 'running', answer: null, created_at: now, expires_at: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS) });
        return {
          kind: 'run',
          release: async () => {
            await this.#model.deleteOne({ _id: id, state: 'running' });
          },
          complete: async (answer) => {
            await this.#model.updateOne({ _id: id, state: 'running' }, { $set: { state: 'done', answer } });
          },
        };
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      const existing = await this.#model.findById(id).lean();
      if (!existing) continue; // released meanwhile: try to take it
      if (existing.expires_at.getTime() <= now.getTime()) {
        await this.#model.deleteOne({ _id: id, expires_at: existing.expires_at });
        continue;
      }
      if (existing.tool !== tool || existing.input_digest !== digest) {
        throw new CuadraError('idempotency_conflict', 'This Idempotency-Key was already used with a different tool or input. Use a new key for a new request.');
      }
      if (existing.state === 'done' && existing.answer) return { kind: 'replay', answer: existing.answer };
      if (Date.now() >= deadline) {
        throw new CuadraError('idempotency_conflict', 'A request with this Idempotency-Key is still running (or was interrupted and its outcome is unknown); it will not run twice.');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Deletes records past their retention (there is no TTL index on every MongoDB-protocol server). */
  async sweep(now = new Date()): Promise<number> {
    const res = await this.#model.deleteMany({ expires_at: { $lte: now } });
    return res.deletedCount ?? 0;
  }
}
