import { Schema, type Connection, type Model } from 'mongoose';
import { modelOn } from '../db.ts';
import type { Principal } from '../principal.ts';
import type { Risk } from '../tool.ts';

/**
 * An action about to run, written before the handler and removed after its ledger entry. If the
 * process dies in between, the intent is still here and recovery writes the missing entry
 * (outcome `interrupted`): no action without its entry, and never an `ok` that was not seen.
 * Settling reconciles it with the owner's records (runs.ts): an action that provably wrote nothing
 * gets its Idempotency-Key back, so a retry runs it.
 */
export interface IntentDoc {
  _id: string;
  workspace: string;
  subgraph: string;
  tool: string;
  risk: Risk;
  input_digest: string;
  principal: Principal;
  approval_id: string | null;
  idempotency_key: string | null;
  started_at: Date;
  /** The process running it (its heartbeat in `executors` says whether it is alive). */
  executor?: string;
  /** The handler deleted something (marked before its first delete): its records cannot prove it did nothing. */
  deletes?: boolean;
  /** The handler ended without an outcome (its store failed mid-write): settle it as soon as the store answers. */
  abandoned?: boolean;
  /** A settler holds it until then (settling is claimed, then the intent is removed last). */
  settling_until?: Date;
}

const schema = new Schema<IntentDoc>(
  {
    _id: String, workspace: String, subgraph: String, tool: String, risk: String, input_digest: String, principal: Schema.Types.Mixed,
    approval_id: { type: String, default: null }, idempotency_key: { type: String, default: null }, started_at: Date,
    executor: String, deletes: Boolean, abandoned: Boolean, settling_until: Date,
  },
  { versionKey: false },
);
schema.index({ subgraph: 1, started_at: 1 });

/** A process's heartbeat: while `alive_until` is ahead, its running intents are its own to settle. */
export interface ExecutorDoc { _id: string; subgraph: string; alive_until: Date }

const executorSchema = new Schema<ExecutorDoc>({ _id: String, subgraph: String, alive_until: Date }, { versionKey: false });

/** The executors collection (one heartbeat document per running owner process). */
export function executors(db: Connection): Model<ExecutorDoc> {
  return modelOn<ExecutorDoc>(db, 'Executor', executorSchema, 'executors');
}

/** The intents collection. */
export function intents(db: Connection): Model<IntentDoc> {
  return modelOn<IntentDoc>(db, 'Intent', schema, 'intents');
}
