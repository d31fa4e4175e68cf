import type { Redis } from 'ioredis';
import type { Connection, Model } from 'mongoose';
import { ensureModel } from '../db.ts';
import { ApprovalStore } from './approvals.ts';
import { IdempotencyStore } from './idempotency.ts';
import { executors, intents, type ExecutorDoc, type IntentDoc } from './intents.ts';
import { Ledger } from './ledger.ts';
import { MailQuota } from './mail-quota.ts';
import { PolicyStore } from './policies.ts';

/**
 * The governance stores every service shares: ledger, idempotency records, autonomy
 * policies, approvals and action intents, in one database of their own (`GOVERNANCE_DB`,
 * default `cuadra_governance`). This library owns that database; services reach it only
 * through these classes.
 */
export class Governance {
  readonly ledger: Ledger;
  readonly idempotency: IdempotencyStore;
  readonly policies: PolicyStore;
  readonly approvals: ApprovalStore;
  readonly intents: Model<IntentDoc>;
  /** Heartbeats of the processes that run actions (an intent of a dead one is settled within seconds). */
  readonly executors: Model<ExecutorDoc>;
  /** E-mails each workspace sends per day, counted across every service (mail-quota.ts). */
  readonly mailQuota: MailQuota;
  readonly db: Connection;
  /** The Redis the ledger and policies use (absent in tests that run without one): readiness checks it (readiness.ts). */
  readonly redis?: Redis;

  constructor(db: Connection, redis?: Redis, options: { idempotencyWaitMs?: number } = {}) {
    this.db = db;
    this.redis = redis;
    this.ledger = new Ledger(db, redis);
    this.idempotency = new IdempotencyStore(db, { waitMs: options.idempotencyWaitMs });
    this.policies = new PolicyStore(db, redis);
    this.approvals = new ApprovalStore(db);
    this.intents = intents(db);
    this.executors = executors(db);
    this.mailQuota = new MailQuota(db);
  }

  /** Builds the indexes the guarantees rest on (unique ledger positions…). */
  async init(): Promise<void> {
    await Promise.all([this.ledger.init(), this.idempotency.init(), this.policies.init(), this.approvals.init(), ensureModel(this.intents), ensureModel(this.executors)]);
  }
}
