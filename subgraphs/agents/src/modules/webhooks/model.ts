import { createHash } from 'node:crypto';
import { addPositions, DATE_TIME_SCHEMA as DATE_TIME, DOMAIN_EVENT_TYPES, modelOn, type DomainEventType, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * The events an endpoint can subscribe to (each payload's `type`): ledger actions, approval
 * decisions, finished runs, and the domain events recorded on the ledger (shared/src/events.ts).
 */
export const EVENT_TYPES = ['ledger.action', 'approval.decided', 'agent_run.finished', ...DOMAIN_EVENT_TYPES] as const;
export type EventType = 'ledger.action' | 'approval.decided' | 'agent_run.finished' | DomainEventType;

/** The event types read from the ledger (the position `ledger_seq` follows). */
export const LEDGER_EVENT_TYPES: readonly EventType[] = ['ledger.action', ...DOMAIN_EVENT_TYPES];

/** One signing secret of an endpoint, sealed; a rotated-out one signs alongside the new one until `expires_at`. */
export interface SealedSecret {
  id: string;
  sealed: string;
  created_at: Date;
  /** null: the current secret. */
  expires_at: Date | null;
}

/** A webhook endpoint as stored. `_id` is `whk_…`. */
export interface WebhookDoc {
  _id: string;
  workspace: string;
  url: string;
  description: string | null;
  events: EventType[];
  /** Tool patterns (as agents and keys use them: `invoices.%`, `%:write`) selecting the ledger actions sent; `ledger.action` only. */
  tools: string[];
  status: 'active' | 'disabled' | 'deleted';
  /** Why it is disabled (a 410 from the endpoint, a person). */
  disabled_reason: string | null;
  /** The current secret first; rotated-out ones while their overlap lasts. */
  secrets: SealedSecret[];
  /** The last ledger position of the workspace's chain looked at for this endpoint. */
  ledger_seq: number;
  created_at: Date;
  updated_at: Date;
}

const webhookSchema = new Schema<WebhookDoc>(
  {
    _id: String, workspace: { type: String, required: true }, url: { type: String, required: true }, description: { type: String, default: null },
    events: { type: [String], default: [] }, tools: { type: [String], default: [] }, status: { type: String, required: true },
    disabled_reason: { type: String, default: null }, secrets: { type: Schema.Types.Mixed, default: [] }, ledger_seq: { type: Number, required: true },
    created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
webhookSchema.index({ status: 1 });
addPositions(webhookSchema);

/** The webhook_endpoints collection. */
export function webhooks(db: Connection): Model<WebhookDoc> {
  return modelOn<WebhookDoc>(db, 'WebhookEndpoint', webhookSchema, 'webhook_endpoints');
}

/** One attempt at delivering a message, as logged. */
export interface AttemptDoc {
  at: Date;
  /** The HTTP status the endpoint answered; null: no answer (refused, unreachable, timed out). */
  status_code: number | null;
  /** Why it failed, when it did. */
  error: string | null;
  /** The address actually connected to. */
  address: string | null;
  duration_ms: number;
}

/** At most this many attempts are kept on a delivery (the newest). */
export const ATTEMPTS_KEPT = 30;

/**
 * One message to one endpoint: the durable queue. `_id` is the message's `webhook-id`, made of the
 * endpoint and the event, so enqueuing the same event twice (a retry after a crash) finds it there,
 * and every attempt at it — retries and redeliveries — carries the same `webhook-id`.
 */
export interface DeliveryDoc {
  _id: string;
  workspace: string;
  webhook_id: string;
  event_type: EventType | 'webhook.test';
  /** The event's own id (the ledger entry, the approval, the run). */
  event_id: string;
  /** The JSON body, exactly as signed and sent. */
  payload: string;
  status: 'pending' | 'sending' | 'succeeded' | 'failed' | 'cancelled';
  /** Why it stopped (failed or cancelled). */
  reason: string | null;
  attempts: AttemptDoc[];
  attempt_count: number;
  next_attempt_at: Date;
  /** While `sending`: when the claim lapses (a deliverer killed mid-send), so another sends it again. */
  lease_until: Date | null;
  /** Retries stop after this (3 days after the event; reset by a redelivery). */
  give_up_at: Date;
  created_at: Date;
  updated_at: Date;
}

const deliverySchema = new Schema<DeliveryDoc>(
  {
    _id: String, workspace: { type: String, required: true }, webhook_id: { type: String, required: true }, event_type: { type: String, required: true },
    event_id: { type: String, required: true }, payload: { type: String, required: true }, status: { type: String, required: true }, reason: { type: String, default: null },
    attempts: { type: Schema.Types.Mixed, default: [] }, attempt_count: { type: Number, default: 0 }, next_attempt_at: { type: Date, required: true },
    lease_until: { type: Date, default: null }, give_up_at: { type: Date, required: true }, created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
deliverySchema.index({ status: 1, next_attempt_at: 1 });
deliverySchema.index({ webhook_id: 1, status: 1 });
addPositions(deliverySchema);

/** The webhook_deliveries collection. */
export function deliveries(db: Connection): Model<DeliveryDoc> {
  return modelOn<DeliveryDoc>(db, 'WebhookDelivery', deliverySchema, 'webhook_deliveries');
}

/** The paging series of an endpoint's messages (each endpoint's log pages by its own positions). */
export function deliverySeries(webhookId: string): { series: string; scope: Record<string, string> } {
  return { series: `webhook_deliveries:${webhookId}`, scope: { webhook_id: webhookId } };
}

/** The `webhook-id` of an event's message to an endpoint (`msg_` and 32 hex digits): the same for every attempt. */
export function messageId(webhookId: string, eventId: string): string {
  return `msg_${createHash('sha256').update(`${webhookId}\n${eventId}`).digest('hex').slice(0, 32)}`;
}

/** The seal context of an endpoint's secret: a box cannot be moved to another endpoint or workspace. */
export function secretContext(workspace: string, webhookId: string, secretId: string): string {
  return `webhooks.secret:${workspace}:${webhookId}:${secretId}`;
}

/** JSON Schema of {@link webhookView}. */
export const WEBHOOK_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'url', 'description', 'events', 'tools', 'status', 'disabled_reason', 'signing_secrets', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, url: TEXT, description: NULLABLE_TEXT, events: { type: 'array', items: { enum: [...EVENT_TYPES] } }, tools: { type: 'array', items: TEXT },
    status: { enum: ['active', 'disabled', 'deleted'] }, disabled_reason: NULLABLE_TEXT,
    signing_secrets: {
      type: 'array', description: 'The secrets signing now (never their value): the current one, and a rotated-out one until its overlap ends.',
      items: { type: 'object', additionalProperties: false, required: ['id', 'created_at', 'expires_at'], properties: { id: TEXT, created_at: DATE_TIME, expires_at: { anyOf: [DATE_TIME, { type: 'null' }] } } },
    },
    created_at: DATE_TIME, updated_at: DATE_TIME,
  },
} as const;

/** The secrets that still sign at `now`: the current one and those whose overlap has not ended. */
export function signingSecrets(w: Pick<WebhookDoc, 'secrets'>, now: Date): SealedSecret[] {
  return w.secrets.filter((s) => s.expires_at === null || new Date(s.expires_at).getTime() > now.getTime());
}

/** An endpoint as callers see it: never a secret's value. */
export function webhookView(w: WebhookDoc, now = new Date()) {
  return {
    id: w._id, url: w.url, description: w.description, events: w.events, tools: w.tools, status: w.status, disabled_reason: w.disabled_reason,
    signing_secrets: signingSecrets(w, now).map((s) => ({ id: s.id, created_at: new Date(s.created_at).toISOString(), expires_at: s.expires_at ? new Date(s.expires_at).toISOString() : null })),
    created_at: new Date(w.created_at).toISOString(), updated_at: new Date(w.updated_at).toISOString(),
  };
}

const ATTEMPT_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['at', 'status_code', 'error', 'address', 'duration_ms'],
  properties: { at: DATE_TIME, status_code: { anyOf: [{ type: 'integer' }, { type: 'null' }] }, error: NULLABLE_TEXT, address: NULLABLE_TEXT, duration_ms: { type: 'integer', minimum: 0 } },
} as const;

/** JSON Schema of {@link deliveryView}. */
export const DELIVERY_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'webhook_id', 'event_type', 'event_id', 'status', 'reason', 'attempt_count', 'attempts', 'next_attempt_at', 'give_up_at', 'created_at', 'payload'],
  properties: {
    id: { ...TEXT, description: 'The message\'s webhook-id: the same on every attempt.' }, webhook_id: TEXT, event_type: TEXT, event_id: TEXT,
    status: { enum: ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] }, reason: NULLABLE_TEXT, attempt_count: { type: 'integer', minimum: 0 },
    attempts: { type: 'array', items: ATTEMPT_SCHEMA, description: `Every attempt, oldest first (the newest ${ATTEMPTS_KEPT} of a long run).` },
    next_attempt_at: { anyOf: [DATE_TIME, { type: 'null' }] }, give_up_at: DATE_TIME, created_at: DATE_TIME,
    payload: { type: 'object', description: 'The body sent (type, timestamp, data).' },
  },
} as const;

/** A delivery as callers see it, with its attempts. */
export function deliveryView(d: DeliveryDoc) {
  const iso = (x: Date) => new Date(x).toISOString();
  return {
    id: d._id, webhook_id: d.webhook_id, event_type: d.event_type, event_id: d.event_id, status: d.status, reason: d.reason, attempt_count: d.attempt_count,
    attempts: d.attempts.map((a) => ({ at: iso(a.at), status_code: a.status_code, error: a.error, address: a.address, duration_ms: a.duration_ms })),
    next_attempt_at: d.status === 'pending' || d.status === 'sending' ? iso(d.next_attempt_at) : null, give_up_at: iso(d.give_up_at), created_at: iso(d.created_at),
    payload: JSON.parse(d.payload) as Record<string, unknown>,
  };
}
