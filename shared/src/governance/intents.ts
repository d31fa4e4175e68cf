import { Schema, type Connection, type Model } from 'mongoose';
import { modelOn } from '../db.ts';
import type { Principal } from '../principal.ts';
import type { Risk } from '../tool.ts';

/**
 * An action about to run, written before the handler and removed after its ledger entry. If the
 * process dies in between, the intent is still here and recovery writes the missing entry
 * (outcome `interrupted`): no action without its entry, and never an `ok` that was not seen.
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
}

const schema = new Schema<IntentDoc>(
  {
    _id: String, workspace: String, subgraph: String, tool: String, risk: String, input_digest: String, principal: Schema.Types.Mixed,
    approval_id: { type: String, default: null }, idempotency_key: { type: String, default: null }, started_at: Date,
  },
  { versionKey: false },
);
schema.index({ subgraph: 1, started_at: 1 });

/** The intents collection. */
export function intents(db: Connection): Model<IntentDoc> {
  return modelOn<IntentDoc>(db, 'Intent', schema, 'intents');
}
