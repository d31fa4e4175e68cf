import { addPositions, backfillPositions, createPositioned, pageNewestFirst, type Page } from '../paging.ts';
import { Schema, type Connection, type Model } from 'mongoose';
import { ensureModel, modelOn } from '../db.ts';
import type { Principal } from '../principal.ts';
import { openSecrets, redactInputs, type Sealer } from '../seal.ts';

/**
 * States of an approval (CONTRACT.md §3). `executing` is the short window while a held call runs;
 * `withdrawn`: its requester took it back before anyone decided (an MCP `tasks/cancel`).
 */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'executing' | 'executed' | 'failed' | 'withdrawn';

/** An approval as callers see it. */
export interface Approval {
  id: string;
  status: ApprovalStatus;
  /** `hold`: runs by itself once approved; `ask`: the caller repeats the call with X-Approval-Id. */
  mode: 'hold' | 'ask';
  tool: string;
  input: Record<string, unknown>;
  requested_by: { type: string; id: string; credential_id: string; role: string; person?: string };
  requested_at: string;
  /** Who decided; `person` is the signed-in person behind an app or page that carried the decision. */
  decided_by: { type: string; id: string; person?: string } | null;
  decided_at: string | null;
  reason: string | null;
  result: { status: number; body: Record<string, unknown> } | null;
  expires_at: string;
  /** The autonomy policy that held the call, as it was named then (absent on approvals made before it was recorded). */
  policy?: { id: string; name: string };
  /** What the call would do, computed when it was held (the tool's `preview`), for the person deciding. */
  preview?: Record<string, unknown>;
}

/** Stored form: also who to run it as, which subgraph runs it, and the input digest. */
export interface ApprovalDoc extends Omit<Approval, 'id'> {
  _id: string;
  workspace: string;
  subgraph: string;
  input_digest: string;
  idempotency_key: string | null;
  principal: Principal;
  /** While `executing`: until when the claiming process owns it. */
  lease_until: Date | null;
  executor: string | null;
  /** When the requester was given the result's secret (once; null until then). */
  secret_delivered_at?: Date | null;
  /** Set when a person decides it, until the decision's webhook messages are queued (the agents service's webhooks outbox). */
  announce?: boolean;
}

const schema = new Schema<ApprovalDoc>(
  {
    _id: String, workspace: String, subgraph: String, status: String, mode: String, tool: String, input: Schema.Types.Mixed,
    input_digest: String, idempotency_key: { type: String, default: null }, principal: Schema.Types.Mixed, requested_by: Schema.Types.Mixed,
    requested_at: String, decided_by: { type: Schema.Types.Mixed, default: null }, decided_at: { type: String, default: null },
    reason: { type: String, default: null }, result: { type: Schema.Types.Mixed, default: null }, expires_at: String,
    lease_until: { type: Date, default: null }, executor: { type: String, default: null }, secret_delivered_at: { type: Date, default: null },
    policy: { type: Schema.Types.Mixed, default: undefined },
    preview: { type: Schema.Types.Mixed, default: undefined },
    announce: { type: Boolean, default: undefined },
  },
  { versionKey: false, minimize: false },
);
// Decisions whose webhook messages are not queued yet: few at any time.
schema.index({ announce: 1 }, { sparse: true });
// The inbox pages newest first by position (CONTRACT §9 bounded lists; shared/src/paging.ts).
addPositions(schema);
schema.index({ workspace: 1, status: 1 });
schema.index({ subgraph: 1, status: 1 });
// The approvals metrics read a workspace's requests by time.
schema.index({ workspace: 1, requested_at: 1 });

/** Pending approvals expire after this long. */
export const APPROVAL_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * Public view of a stored approval. A secret in its result (an API key, an invitation link) is
 * shown as "[redacted]" unless `reveal` carries the sealer that opens it for its requester, once.
 */
export function approvalView(doc: ApprovalDoc, now = new Date(), reveal?: { sealer: Sealer | null }): Approval {
  const status = doc.status === 'pending' && doc.expires_at <= now.toISOString() ? 'expired' : doc.status;
  const result = doc.result ? openSecrets(doc.result, reveal?.sealer ?? null, `apr:${doc._id}`, reveal !== undefined) : null;
  return {
    id: doc._id, status, mode: doc.mode, tool: doc.tool, input: redactInputs(doc.input), requested_by: doc.requested_by, requested_at: doc.requested_at,
    decided_by: doc.decided_by, decided_at: doc.decided_at, reason: doc.reason, result, expires_at: doc.expires_at,
    ...(doc.policy ? { policy: { id: doc.policy.id, name: doc.policy.name } } : {}),
    ...(doc.preview ? { preview: doc.preview } : {}),
  };
}

/** Is `principal` the one who asked for this approval (same credential, or the same person behind it)? */
export function isRequester(doc: ApprovalDoc, principal: Principal): boolean {
  if (doc.principal?.credential_id === principal.credential_id) return true;
  return Boolean(principal.person) && principal.person === (doc.principal?.person ?? null);
}

/**
 * Approvals. Every state change is one conditional update on `{_id, status}`, so two people
 * approving at once, or two processes picking up the same approved call, change it once.
 */
export class ApprovalStore {
  readonly model: Model<ApprovalDoc>;

  constructor(db: Connection) {
    this.model = modelOn<ApprovalDoc>(db, 'Approval', schema, 'approvals');
  }

  async init(): Promise<void> {
    await ensureModel(this.model);
    await backfillPositions(this.model);
  }

  async create(input: { id: string; workspace: string; subgraph: string; mode: 'hold' | 'ask'; tool: string; input: Record<string, unknown>; inputDigest: string; idempotencyKey?: string; principal: Principal; policy?: { id: string; name: string }; preview?: Record<string, unknown> }, now = new Date()): Promise<ApprovalDoc> {
    const doc: ApprovalDoc = {
      _id: input.id, workspace: input.workspace, subgraph: input.subgraph, status: 'pending', mode: input.mode, tool: input.tool, input: input.input,
      input_digest: input.inputDigest, idempotency_key: input.idempotencyKey ?? null, principal: input.principal,
      requested_by: { type: input.principal.actor.type, id: input.principal.actor.id, credential_id: input.principal.credential_id, role: input.principal.role, ...(input.principal.person ? { person: input.principal.person } : {}) },
      requested_at: now.toISOString(), decided_by: null, decided_at: null, reason: null, result: null,
      expires_at: new Date(now.getTime() + APPROVAL_TTL_MS).toISOString(), lease_until: null, executor: null,
      ...(input.policy ? { policy: input.policy } : {}),
      ...(input.preview ? { preview: input.preview } : {}),
    };
    await createPositioned(this.model, doc);
    return doc;
  }

  async get(workspace: string, id: string): Promise<ApprovalDoc | null> {
    return this.model.findOne({ _id: id, workspace }).lean();
  }

  /** One page of the inbox, newest first (bounded: positions, never a sort of the collection). */
  async list(workspace: string, status: ApprovalStatus | undefined, limit: number, now = new Date(), cursor?: string): Promise<Page<ApprovalDoc>> {
    const at = now.toISOString();
    const shownStatus = (d: ApprovalDoc) => (d.status === 'pending' && d.expires_at <= at ? 'expired' : d.status);
    return pageNewestFirst<ApprovalDoc>(this.model, { workspace, limit, cursor, ...(status ? { match: (d) => shownStatus(d) === status } : {}) });
  }

  /** How many approvals wait for a decision now (pending and not past their expiry). */
  async countPending(workspace: string, now = new Date()): Promise<number> {
    return this.model.countDocuments({ workspace, status: 'pending', expires_at: { $gt: now.toISOString() } });
  }

  /** When each approval requested in `from` ≤ requested_at < `to` (ISO instants) was requested; at most `max`, newest kept. */
  async requestedBetween(workspace: string, from: string, to: string, max = 50_000): Promise<string[]> {
    const docs = await this.model.find({ workspace, requested_at: { $gte: from, $lt: to } }, { _id: 0, requested_at: 1 }).sort({ requested_at: -1 }).limit(max).lean();
    return docs.map((d) => d.requested_at);
  }

  /** pending → approved | rejected, once. Null when it was not pending (decided, expired, unknown). */
  async decide(workspace: string, id: string, decision: 'approved' | 'rejected', by: { type: string; id: string; person?: string }, reason: string | null, now = new Date()): Promise<ApprovalDoc | null> {
    return this.model.findOneAndUpdate(
      { _id: id, workspace, status: 'pending', expires_at: { $gt: now.toISOString() } },
      // `announce`: in the same write as the decision, so no decision is ever left out of the webhooks (toAnnounce).
      { $set: { status: decision, decided_by: by, decided_at: now.toISOString(), reason, announce: true } },
      { returnDocument: 'after' },
    ).lean();
  }

  /** Decisions not yet announced to webhooks, oldest first: the outbox the agents service's deliverer drains. */
  async toAnnounce(limit: number): Promise<ApprovalDoc[]> {
    return this.model.find({ announce: true }).sort({ decided_at: 1 }).limit(limit).lean();
  }

  /** Marks a decision announced, once its webhook messages are queued. */
  async announced(id: string): Promise<void> {
    await this.model.updateOne({ _id: id }, { $unset: { announce: 1 } });
  }

  /**
   * pending → withdrawn, once, by the credential that asked. The same conditional update on
   * `status: pending` as `decide`, so of a withdrawal and an approval at the same moment exactly
   * one wins: a withdrawn call never runs, and an approved one is not withdrawn. Null otherwise.
   */
  async withdraw(workspace: string, id: string, credentialId: string, now = new Date()): Promise<ApprovalDoc | null> {
    return this.model.findOneAndUpdate(
      { _id: id, workspace, status: 'pending', 'requested_by.credential_id': credentialId },
      { $set: { status: 'withdrawn', decided_at: now.toISOString(), reason: 'Withdrawn by its requester.' } },
      { returnDocument: 'after' },
    ).lean();
  }

  /** approved (hold) → executing, once, with a lease. */
  async claim(id: string, executor: string, leaseMs: number, now = new Date()): Promise<ApprovalDoc | null> {
    return this.model.findOneAndUpdate(
      { _id: id, status: 'approved', mode: 'hold' },
      { $set: { status: 'executing', executor, lease_until: new Date(now.getTime() + leaseMs) } },
      { returnDocument: 'after' },
    ).lean();
  }

  /** approved (ask) → executed, once: the caller's repeat with X-Approval-Id uses it up. */
  async useAsk(workspace: string, id: string, credentialId: string, tool: string, digest: string): Promise<ApprovalDoc | null> {
    return this.model.findOneAndUpdate(
      { _id: id, workspace, status: 'approved', mode: 'ask', tool, input_digest: digest, 'principal.credential_id': credentialId },
      { $set: { status: 'executing' } },
      { returnDocument: 'after' },
    ).lean();
  }

  /** Marks the result's secret as given to its requester; true only for the first call (it is given once). */
  async takeSecret(workspace: string, id: string, now = new Date()): Promise<boolean> {
    const res = await this.model.updateOne({ _id: id, workspace, secret_delivered_at: null }, { $set: { secret_delivered_at: now } });
    return res.modifiedCount === 1;
  }

  /** executing → executed | failed, keeping the result or the reason. */
  async finish(id: string, status: 'executed' | 'failed', result: ApprovalDoc['result'], reason: string | null): Promise<void> {
    const set: Record<string, unknown> = { status, result, lease_until: null };
    if (reason !== null) set.reason = reason;
    await this.model.updateOne({ _id: id, status: 'executing' }, { $set: set });
  }

  /** Approved hold calls of one subgraph waiting to run. */
  async approvedFor(subgraph: string, limit = 20): Promise<ApprovalDoc[]> {
    const docs = await this.model.find({ subgraph, status: 'approved', mode: 'hold' }).limit(limit).lean();
    return docs;
  }

  /** Executions whose owner died (lease passed). */
  async abandonedFor(subgraph: string, now = new Date()): Promise<ApprovalDoc[]> {
    return this.model.find({ subgraph, status: 'executing', lease_until: { $lt: now } }).limit(20).lean();
  }

  /**
   * pending → expired for those past their time; approved held calls whose owning service has
   * not run them within a day → failed, with the reason (an approval never stays in limbo).
   */
  async expire(now = new Date()): Promise<number> {
    const expired = await this.model.updateMany({ status: 'pending', expires_at: { $lte: now.toISOString() } }, { $set: { status: 'expired' } });
    const stale = await this.model.updateMany(
      { status: 'approved', mode: 'hold', decided_at: { $lte: new Date(now.getTime() - 24 * 3600 * 1000).toISOString() } },
      { $set: { status: 'failed', reason: 'The owning service did not run this call within 24 hours of its approval; nothing was done.' } },
    );
    return (expired.modifiedCount ?? 0) + (stale.modifiedCount ?? 0);
  }
}
