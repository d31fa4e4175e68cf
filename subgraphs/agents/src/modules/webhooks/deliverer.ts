import { randomBytes } from 'node:crypto';
import { anyPatternMatches, createPositioned, type Governance, type Logger, type Sealer } from '@cuadra/shared';
import { privateOutboundAllowed } from '@cuadra/shared/outbound';
import type { Connection } from 'mongoose';
import { Webhook } from 'standardwebhooks';
import { agentRuns } from '../agent_runs/model.ts';
import { ATTEMPTS_KEPT, deliveries, deliverySeries, messageId, secretContext, signingSecrets, webhooks, type AttemptDoc, type DeliveryDoc, type EventType, type WebhookDoc, LEDGER_EVENT_TYPES } from './model.ts';
import { postMessage } from './transport.ts';

/** Retries go on for this long after the event (the issue: 3 days). */
export const RETRY_WINDOW_MS = 3 * 24 * 3600 * 1000;

/** A claimed message not settled within this long is sent again (its deliverer died mid-send). */
export const LEASE_MS = 60_000;

/**
 * The waits before each retry, after attempt 1, 2, …: the schedule the Standard Webhooks
 * specification gives as an example ("immediately, 5 seconds, 5 minutes, 30 minutes, 2 hours,
 * 5 hours, 10 hours, 10 hours"), then every 10 hours until {@link RETRY_WINDOW_MS} has passed.
 */
const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000];

/**
 * The wait before the next attempt once `attempts` have failed: the schedule's step, with ±20 %
 * jitter so endpoints that failed together are not all retried in the same instant.
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1];
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The `webhook-signature` header: one `v1,<base64>` per secret that signs now, space separated
 * (Standard Webhooks "Signature scheme"). During a rotation's overlap both the new and the old secret
 * sign, so a receiver still verifying with the old one keeps accepting messages, and one that moved
 * to the new one already does.
 */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, payload: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, payload)).join(' ');
}

export interface DelivererDeps {
  db: Connection;
  governance: Governance;
  sealer: Sealer | null;
  log: Logger;
  /** Deliver to private and loopback addresses too (the tests' receivers); default: `CUADRA_OUTBOUND_PRIVATE=allow`. */
  allowPrivate?: boolean;
  /** Random numbers for the jitter (tests fix them). */
  random?: () => number;
}

/** Ledger entries read per endpoint per pass. */
const LEDGER_BATCH = 200;
/** A gap in a chain's positions older than this is passed over (never expected: positions are unique and written in order). */
const GAP_PATIENCE_MS = 30_000;
/** Messages sent at once by one deliverer. */
const CONCURRENCY = 8;

/**
 * Webhook delivery for every workspace, run by each agents service instance (safe side by side:
 * every step is a conditional write). Two halves, both durable:
 *
 * - **Events into the queue.** Events come from where they are recorded, never from a tool: ledger
 *   actions from the workspace's hash-chained ledger (each endpoint keeps the last position it
 *   looked at, moved on only after the messages exist), approval decisions and finished agent runs
 *   from an `announce` mark written in the same update as the decision or the end, cleared after the
 *   messages exist. A message's id is made of the endpoint and the event, so a pass repeated after
 *   a crash finds the message there instead of making a second one.
 * - **The queue out.** A due message is claimed with a lease, signed with every secret that signs
 *   now, POSTed through the SSRF-filtering agent, and the attempt logged. 2xx: done; 410: the
 *   endpoint is disabled; anything else: retried on {@link retryDelayMs}'s schedule until three days
 *   after the event. A deliverer killed mid-send leaves the claim to lapse and another sends the same
 *   message again, with the same `webhook-id` (at least once; receivers deduplicate by it).
 */
export class WebhookDeliverer {
  readonly #deps: DelivererDeps;
  readonly #allowPrivate: boolean;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;

  constructor(deps: DelivererDeps) {
    this.#deps = deps;
    this.#allowPrivate = deps.allowPrivate ?? privateOutboundAllowed();
  }

  /** Runs a pass every `everyMs` until {@link stop}. */
  start(everyMs = 1_000): void {
    const loop = () => {
      this.#running = this.tick().catch((err: unknown) => this.#deps.log.warn({ err }, 'webhook pass failed; will retry')).finally(() => {
        this.#running = null;
        if (this.#timer) this.#timer = setTimeout(loop, everyMs);
      });
    };
    this.#timer = setTimeout(loop, everyMs);
  }

  async stop(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One pass: new events into the queue, then the due messages out. */
  async tick(now = new Date()): Promise<void> {
    await this.enqueue(now);
    await this.sendDue(now);
  }

  /** Queues the messages of events recorded since the last pass. */
  async enqueue(now = new Date()): Promise<void> {
    await this.#enqueueLedger(now);
    await this.#enqueueApprovals(now);
    await this.#enqueueRuns(now);
  }

  async #enqueueLedger(now: Date): Promise<void> {
    const { db, governance } = this.#deps;
    const watching = await webhooks(db).find({ status: 'active', events: { $in: [...LEDGER_EVENT_TYPES] } }).limit(1000).lean();
    for (const w of watching) {
      const entries = await governance.ledger.entries.find({ workspace: w.workspace, seq: { $gt: w.ledger_seq } }, { _id: 0 }).sort({ seq: 1 }).limit(LEDGER_BATCH).lean();
      let seen = w.ledger_seq;
      for (const e of entries) {
        if (e.seq !== seen + 1 && now.getTime() - Date.parse(e.at) < GAP_PATIENCE_MS) break; // an earlier position not visible yet: wait for it
        if (e.event) {
          // A domain event (shared/src/events.ts): sent to the endpoints subscribed to its type.
          if (w.events.includes(e.tool as EventType)) {
            await this.#queue(w, e.tool as EventType, `event:${e.id}`, e.at, {
              id: e.id, seq: e.seq, at: e.at, type: e.tool, module: e.module, subject: e.event.subject, data: e.event.data, actor: e.actor, hash: e.hash,
            }, now);
          }
        } else if (w.events.includes('ledger.action') && anyPatternMatches(w.tools, { name: e.tool, risk: e.risk ?? 'read' })) {
          await this.#queue(w, 'ledger.action', e.id, e.at, {
            id: e.id, seq: e.seq, at: e.at, tool: e.tool, module: e.module, risk: e.risk, outcome: e.outcome, actor: e.actor,
            ...(e.approval_id ? { approval_id: e.approval_id } : {}), ...(e.run_id ? { run_id: e.run_id } : {}), ...(e.replayed ? { replayed: true } : {}), hash: e.hash,
          }, now);
        }
        seen = e.seq;
      }
      if (seen > w.ledger_seq) await webhooks(db).updateOne({ _id: w._id, ledger_seq: w.ledger_seq }, { $set: { ledger_seq: seen } });
    }
  }

  async #enqueueApprovals(now: Date): Promise<void> {
    const { governance } = this.#deps;
    for (const a of await governance.approvals.toAnnounce(200)) {
      const decidedAt = a.decided_at ?? now.toISOString();
      for (const w of await this.#subscribers(a.workspace, 'approval.decided', decidedAt)) {
        await this.#queue(w, 'approval.decided', `approval:${a._id}:decided`, decidedAt, {
          id: a._id, tool: a.tool, status: a.status, decided_by: a.decided_by, decided_at: decidedAt, reason: a.reason, requested_by: a.requested_by, requested_at: a.requested_at,
        }, now);
      }
      await governance.approvals.announced(a._id);
    }
  }

  async #enqueueRuns(now: Date): Promise<void> {
    const { db } = this.#deps;
    const ended = await agentRuns(db).find({ announce: true }, { steps: 0, spans: 0 }).limit(200).lean();
    for (const r of ended) {
      const finishedAt = new Date(r.finished_at ?? now).toISOString();
      for (const w of await this.#subscribers(r.workspace, 'agent_run.finished', finishedAt)) {
        await this.#queue(w, 'agent_run.finished', `run:${r._id}:finished`, finishedAt, {
          id: r._id, agent_id: r.agent_id, status: r.status, stop_reason: r.stop_reason, error: r.error, finished_at: finishedAt,
          usage: { input_tokens: r.usage.input_tokens, output_tokens: r.usage.output_tokens, cost_micros: r.usage.cost_micros, currency: r.currency },
        }, now);
      }
      await agentRuns(db).updateOne({ _id: r._id }, { $unset: { announce: 1 } });
    }
  }

  /** The workspace's active endpoints subscribed to `type` that existed when the event happened. */
  #subscribers(workspace: string, type: EventType, at: string): Promise<WebhookDoc[]> {
    return webhooks(this.#deps.db).find({ workspace, status: 'active', events: type, created_at: { $lte: new Date(at) } }).lean();
  }

  /** Puts one event's message to one endpoint in the queue, once (a repeat finds it there). */
  async #queue(w: WebhookDoc, type: EventType, eventId: string, eventAt: string, data: Record<string, unknown>, now: Date): Promise<void> {
    await enqueueMessage(this.#deps.db, w, { type, eventId, eventAt: new Date(eventAt), data }, now);
  }

  /** Sends the messages due at `now` (at most `max`), {@link CONCURRENCY} at a time. */
  async sendDue(now = new Date(), max = 200): Promise<number> {
    let sent = 0;
    const worker = async () => {
      while (sent < max) {
        const claimed = await this.#claim(now);
        if (!claimed) return;
        sent++;
        await this.attempt(claimed, now);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return sent;
  }

  async #claim(now: Date, id?: string): Promise<DeliveryDoc | null> {
    const due: Record<string, unknown> = { $or: [{ status: 'pending', next_attempt_at: { $lte: now } }, { status: 'sending', lease_until: { $lt: now } }] };
    return deliveries(this.#deps.db).findOneAndUpdate(
      (id ? { _id: id, ...due } : due) as never,
      { $set: { status: 'sending', lease_until: new Date(now.getTime() + LEASE_MS), updated_at: now } },
      { sort: { next_attempt_at: 1 }, returnDocument: 'after' },
    ).lean<DeliveryDoc>();
  }

  /** Claims one message now and makes one attempt at it (`webhooks.test`); null when it is not due or someone else holds it. */
  async sendNow(id: string, now = new Date()): Promise<DeliveryDoc | null> {
    const claimed = await this.#claim(now, id);
    if (!claimed) return null;
    return this.attempt(claimed, now);
  }

  /** One attempt at a claimed message: signed, sent, logged, and the message settled or rescheduled. */
  async attempt(d: DeliveryDoc, now: Date): Promise<DeliveryDoc | null> {
    const { db, sealer } = this.#deps;
    const lease = d.lease_until;
    const w = await webhooks(db).findOne({ _id: d.webhook_id, workspace: d.workspace }).lean();
    if (!w || w.status !== 'active') {
      return this.#settle(d, lease, null, { status: 'cancelled', reason: `The endpoint is ${w?.status ?? 'deleted'}; nothing was sent.` });
    }
    const secrets = signingSecrets(w, now).map((s) => sealer?.open(s.sealed, secretContext(w.workspace, w._id, s.id)) ?? null);
    const started = Date.now();
    let outcome: { status: number | null; error: string | null; address: string | null };
    if (secrets.length === 0 || secrets.some((s) => s === null)) {
      outcome = { status: null, error: 'The signing secret cannot be opened here (no seal key, or another one); nothing was sent.', address: null };
    } else {
      // The timestamp is the attempt's (Standard Webhooks: receivers refuse old ones); the id is the message's, the same on every attempt.
      const at = new Date();
      outcome = await postMessage(w.url, {
        'webhook-id': d._id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signatureHeader(secrets as string[], d._id, at, d.payload),
      }, d.payload, this.#allowPrivate);
    }
    const attempt: AttemptDoc = { at: now, status_code: outcome.status, error: outcome.error, address: outcome.address, duration_ms: Date.now() - started };
    if (outcome.status !== null && outcome.status >= 200 && outcome.status < 300) return this.#settle(d, lease, attempt, { status: 'succeeded', reason: null });
    if (outcome.status === 410) {
      const reason = 'The endpoint answered 410 Gone, so it was disabled; enable it again with webhooks.update.';
      await webhooks(db).updateOne({ _id: w._id, status: 'active' }, { $set: { status: 'disabled', disabled_reason: reason, updated_at: now } });
      return this.#settle(d, lease, attempt, { status: 'failed', reason });
    }
    const next = new Date(now.getTime() + retryDelayMs(d.attempt_count + 1, this.#deps.random));
    if (next.getTime() > new Date(d.give_up_at).getTime()) {
      return this.#settle(d, lease, attempt, { status: 'failed', reason: `No attempt succeeded within ${RETRY_WINDOW_MS / 86_400_000} days of the event; redeliver it with webhooks.redeliver.` });
    }
    return this.#settle(d, lease, attempt, { status: 'pending', reason: null, next_attempt_at: next });
  }

  /** Logs the attempt and settles the message, if this deliverer still holds its claim (else only logs the attempt). */
  async #settle(d: DeliveryDoc, lease: Date | null, attempt: AttemptDoc | null, set: Partial<DeliveryDoc>): Promise<DeliveryDoc | null> {
    const push = attempt ? { $push: { attempts: { $each: [attempt], $slice: -ATTEMPTS_KEPT } }, $inc: { attempt_count: 1 } } : {};
    const model = deliveries(this.#deps.db);
    const settled = await model.findOneAndUpdate(
      { _id: d._id, status: 'sending', lease_until: lease },
      { $set: { ...set, lease_until: null, updated_at: new Date() }, ...push },
      { returnDocument: 'after' },
    ).lean();
    if (!settled && attempt) await model.updateOne({ _id: d._id }, push);
    return settled;
  }
}

/** One event to put in the queue. */
export interface QueuedEvent {
  type: EventType | 'webhook.test';
  eventId: string;
  eventAt: Date;
  data: Record<string, unknown>;
}

/**
 * Queues an event's message to an endpoint, due now, once: the message's id is made of the
 * endpoint and the event, so a second call finds it and answers the stored one. The body is the
 * Standard Webhooks payload shape (`type`, `timestamp`, `data`), fixed here, so every attempt sends
 * (and signs) the same bytes.
 */
export async function enqueueMessage(db: Connection, w: Pick<WebhookDoc, '_id' | 'workspace'>, event: QueuedEvent, now: Date): Promise<DeliveryDoc> {
  const id = messageId(w._id, event.eventId);
  const model = deliveries(db);
  const existing = await model.findById(id).lean();
  if (existing) return existing;
  const doc: DeliveryDoc = {
    _id: id, workspace: w.workspace, webhook_id: w._id, event_type: event.type, event_id: event.eventId,
    payload: JSON.stringify({ type: event.type, timestamp: event.eventAt.toISOString(), data: event.data }),
    status: 'pending', reason: null, attempts: [], attempt_count: 0, next_attempt_at: now, lease_until: null,
    give_up_at: new Date(event.eventAt.getTime() + RETRY_WINDOW_MS), created_at: now, updated_at: now,
  };
  try {
    return await createPositioned(model, doc, deliverySeries(w._id));
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
    return (await model.findById(id).lean())!;
  }
}
