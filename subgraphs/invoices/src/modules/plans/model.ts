import {
  addPositions, AMOUNT_SCHEMA as AMOUNT, CuadraError, DATE_SCHEMA as DATE, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, searchIn,
  TEXT_SCHEMA as TEXT, type ToolContext,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { CustomerSnapshot } from '../invoices/model.ts';

/** A plan's billing interval: what the recurring schedules issue (weeks or months; a year is 12 months). */
export const PLAN_INTERVALS = ['week', 'month', 'year'] as const;
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

/** A price list entry a party subscribes to: billed in advance each interval by the recurring-invoice machinery. */
export interface PlanDoc {
  _id: string;
  workspace: string;
  name: string;
  status: 'active' | 'archived';
  currency: string;
  /** Price per interval, in cents, before VAT. */
  price: number;
  tax_rate_ppm: number;
  interval: PlanInterval;
  /** Free days before the first period is billed. */
  trial_days: number;
  /** Charged once, on the day the subscription starts. */
  setup_fee: number;
  /** Days from issue to due date of each invoice. */
  due_days: number;
  /** Subscriptions not cancelled (kept on write: the records source never counts). */
  subscribers: number;
  /** When an unpaid invoice of a subscriber is chased (absent on plans made before dunning: the defaults). */
  dunning?: DunningSettings;
  search_lc: string;
  created_at: Date;
  updated_at: Date;
}

/** Days after an invoice's due date at which each dunning step is taken. */
export interface DunningSettings {
  reminder_days: number;
  second_reminder_days: number;
  suspend_days: number;
}

/**
 * The default dunning of a plan: a reminder 3 days after the due date, a second one at 10, and the
 * subscription suspended at 21 days (three weeks of grace, about what card-billing dunning spends on retries).
 */
export const DEFAULT_DUNNING: DunningSettings = { reminder_days: 3, second_reminder_days: 10, suspend_days: 21 };

/** A plan's dunning, its defaults filled in. */
export function dunningOf(p: Pick<PlanDoc, 'dunning'>): DunningSettings {
  return p.dunning ?? DEFAULT_DUNNING;
}

const DUNNING_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['reminder_days', 'second_reminder_days', 'suspend_days'],
  properties: { reminder_days: { type: 'integer' }, second_reminder_days: { type: 'integer' }, suspend_days: { type: 'integer' } },
} as const;

const planSchema = new Schema<PlanDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    status: { type: String, required: true },
    currency: { type: String, required: true },
    price: { type: Number, required: true },
    tax_rate_ppm: { type: Number, required: true },
    interval: { type: String, required: true },
    trial_days: { type: Number, required: true },
    setup_fee: { type: Number, required: true },
    due_days: { type: Number, required: true },
    subscribers: { type: Number, required: true },
    dunning: { type: Schema.Types.Mixed, default: undefined },
    search_lc: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
addPositions(planSchema);

/** The plans collection. */
export function plans(db: Connection): Model<PlanDoc> {
  return modelOn<PlanDoc>(db, 'Plan', planSchema, 'plans');
}

/** A plan of this workspace, or `not_found` (or `invalid_input` at `field` when it is a reference). */
export async function findPlan(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string, field?: string): Promise<PlanDoc> {
  const doc = await plans(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) {
    if (field) throw new CuadraError('invalid_input', `No plan ${id} exists in this workspace.`, { field });
    throw new CuadraError('not_found', `No plan ${id} exists in this workspace.`);
  }
  return doc;
}

export const planMatches = searchIn<PlanDoc>('search_lc');

/** The recurring schedule's interval and step of a plan. */
export function scheduleInterval(interval: PlanInterval): { interval: 'week' | 'month'; every: number } {
  return interval === 'year' ? { interval: 'month', every: 12 } : { interval, every: 1 };
}

/** JSON Schema of {@link planView}. */
export const PLAN_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'status', 'currency', 'price', 'tax_rate_ppm', 'interval', 'trial_days', 'setup_fee', 'due_days', 'dunning', 'subscribers', 'created_at'],
  properties: {
    id: TEXT, name: TEXT, status: { enum: ['active', 'archived'] }, currency: TEXT, price: AMOUNT, tax_rate_ppm: { type: 'integer' }, interval: { enum: PLAN_INTERVALS },
    trial_days: { type: 'integer' }, setup_fee: AMOUNT, due_days: { type: 'integer' }, dunning: DUNNING_SCHEMA, subscribers: { type: 'integer' }, created_at: DATE_TIME,
  },
} as const;

/** Public shape of a plan. */
export function planView(p: PlanDoc) {
  return {
    id: p._id, name: p.name, status: p.status, currency: p.currency, price: p.price, tax_rate_ppm: p.tax_rate_ppm, interval: p.interval, trial_days: p.trial_days,
    setup_fee: p.setup_fee, due_days: p.due_days, dunning: dunningOf(p), subscribers: p.subscribers, created_at: new Date(p.created_at).toISOString(),
  };
}

/** A change of plan: what was charged and credited for the rest of the period (upgrades), or when it takes effect (downgrades). */
export interface PlanChange {
  date: string;
  from_plan: string;
  to_plan: string;
  /** The day the new price starts: the change's day (upgrade, prorated) or the next period (downgrade). */
  effective_date: string;
  period_start: string;
  period_end: string;
  days_remaining: number;
  days_in_period: number;
  /** New plan × remaining / period days, rounded half up. */
  charge: number;
  /** Old plan × remaining / period days, rounded half up: the unused part of what was paid. */
  credit: number;
  invoice_id: string | null;
}

/**
 * A party's subscription to a plan. `starting` and a `pending_change` are intents: the schedule,
 * the setup invoice and a proration invoice carry ids derived from the subscription, so a call
 * that died is finished by the next call or the sweep without issuing anything twice.
 */
/** One dunning step's e-mail to the customer, claimed (`sending`, its Message-ID chosen) before it is handed to the SMTP server. */
export interface DunningNotice {
  level: DunningLevel;
  to: string | null;
  message_id: string;
  /** `in_doubt`: a sweep died handing it over and no mailbox can prove it was taken (never sent again: at most once). */
  status: 'sending' | 'sent' | 'bounced' | 'failed' | 'no_address' | 'in_doubt';
  error: string | null;
  at: Date;
}

/** Dunning steps: 1 reminder, 2 second reminder, 3 suspended. */
export type DunningLevel = 1 | 2 | 3;
export const DUNNING_STAGES = { 1: 'reminder', 2: 'second_reminder', 3: 'suspended' } as const;

/** A subscription's dunning: the oldest unpaid invoice past due, and the steps taken on it. */
export interface DunningState {
  invoice_id: string;
  due_date: string;
  /** The step reached (0: overdue, within the grace before the first reminder). */
  level: 0 | DunningLevel;
  notices: DunningNotice[];
  /** The status it had before the suspension, restored once paid. */
  resume_status: 'active' | 'cancelling' | null;
}

export interface SubscriptionDoc {
  _id: string;
  workspace: string;
  status: 'starting' | 'active' | 'cancelling' | 'suspended';
  plan_id: string;
  customer_id: string;
  customer: CustomerSnapshot;
  currency: string;
  start_date: string;
  /** The first day billed (start + trial days). */
  billing_start: string;
  post: boolean;
  schedule_id: string;
  setup_invoice_id: string | null;
  changes: PlanChange[];
  pending_change: (PlanChange & { to_price: number; to_name: string; to_tax_rate_ppm: number }) | null;
  /** Cancelled at a period's end: the last day billed is the day before. */
  cancel_at: string | null;
  /** Dunning in progress (modules/plans/dunning.ts), or null/absent. */
  dunning?: DunningState | null;
  rev: number;
  search_lc: string;
  created_at: Date;
  updated_at: Date;
}

const subscriptionSchema = new Schema<SubscriptionDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    plan_id: { type: String, required: true },
    customer_id: { type: String, required: true },
    customer: { type: Schema.Types.Mixed, required: true },
    currency: { type: String, required: true },
    start_date: { type: String, required: true },
    billing_start: { type: String, required: true },
    post: { type: Boolean, required: true },
    schedule_id: { type: String, required: true },
    setup_invoice_id: { type: String, default: null },
    changes: { type: Schema.Types.Mixed, default: [] },
    pending_change: { type: Schema.Types.Mixed, default: null },
    cancel_at: { type: String, default: null },
    dunning: { type: Schema.Types.Mixed, default: null },
    rev: { type: Number, required: true },
    search_lc: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
subscriptionSchema.index({ workspace: 1, status: 1, updated_at: 1 });
// The dunning sweep reads the subscriptions in dunning (few) to see whether they were paid.
subscriptionSchema.index({ 'dunning.invoice_id': 1 }, { sparse: true });
addPositions(subscriptionSchema);

/** The plan subscriptions collection. */
export function subscriptions(db: Connection): Model<SubscriptionDoc> {
  return modelOn<SubscriptionDoc>(db, 'PlanSubscription', subscriptionSchema, 'plan_subscriptions');
}

/** A subscription of this workspace, or `not_found`. */
export async function findSubscription(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<SubscriptionDoc> {
  const doc = await subscriptions(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No subscription ${id} exists in this workspace.`);
  return doc;
}

const CHANGE_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['date', 'from_plan', 'to_plan', 'effective_date', 'period_start', 'period_end', 'days_remaining', 'days_in_period', 'charge', 'credit', 'invoice_id'],
  properties: {
    date: DATE, from_plan: TEXT, to_plan: TEXT, effective_date: DATE, period_start: DATE, period_end: DATE, days_remaining: { type: 'integer' }, days_in_period: { type: 'integer' },
    charge: AMOUNT, credit: AMOUNT, invoice_id: NULLABLE_TEXT,
  },
} as const;

/** What a subscription's view answers as its status (`trialing` and `cancelled` read from its dates). */
export const SUBSCRIPTION_STATUSES = ['starting', 'trialing', 'active', 'cancelling', 'cancelled', 'suspended'] as const;

const DUNNING_VIEW_SCHEMA = {
  anyOf: [{ type: 'null' }, {
    type: 'object', additionalProperties: false, required: ['invoice_id', 'due_date', 'level', 'stage', 'notices'],
    description: 'An unpaid invoice past due being chased: level 0 within the grace, 1 reminded, 2 reminded again, 3 suspended (no new invoices until it is paid).',
    properties: {
      invoice_id: TEXT, due_date: DATE, level: { enum: [0, 1, 2, 3] }, stage: { enum: ['overdue', 'reminder', 'second_reminder', 'suspended'] },
      notices: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['level', 'to', 'status', 'message_id', 'at'],
          properties: { level: { enum: [1, 2, 3] }, to: NULLABLE_TEXT, status: { enum: ['sending', 'sent', 'bounced', 'failed', 'no_address', 'in_doubt'] }, message_id: TEXT, at: DATE_TIME },
        },
      },
    },
  }],
} as const;

/** Public shape of a subscription's dunning. */
export function dunningView(d: DunningState | null | undefined) {
  if (!d) return null;
  return {
    invoice_id: d.invoice_id, due_date: d.due_date, level: d.level, stage: d.level === 0 ? 'overdue' as const : DUNNING_STAGES[d.level],
    notices: d.notices.map((n) => ({ level: n.level, to: n.to, status: n.status, message_id: n.message_id, at: new Date(n.at).toISOString() })),
  };
}

/** JSON Schema of {@link subscriptionView}. */
export const SUBSCRIPTION_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'status', 'plan_id', 'customer_id', 'customer_name', 'currency', 'start_date', 'billing_start', 'post', 'schedule_id', 'setup_invoice_id', 'changes', 'cancel_at', 'dunning', 'created_at'],
  properties: {
    id: TEXT, status: { enum: SUBSCRIPTION_STATUSES }, plan_id: TEXT, customer_id: TEXT, customer_name: TEXT, currency: TEXT,
    start_date: DATE, billing_start: DATE, post: { type: 'boolean' }, schedule_id: TEXT, setup_invoice_id: NULLABLE_TEXT,
    changes: { type: 'array', items: CHANGE_SCHEMA }, cancel_at: { anyOf: [DATE, { type: 'null' }] }, dunning: DUNNING_VIEW_SCHEMA, created_at: DATE_TIME,
  },
} as const;

/** Public shape of a subscription; `trialing` and `cancelled` are read from its dates against `today`. */
export function subscriptionView(s: SubscriptionDoc, today: string) {
  const status = s.status === 'cancelling' && s.cancel_at! <= today ? 'cancelled'
    : s.status === 'active' && today < s.billing_start ? 'trialing' : s.status;
  return {
    id: s._id, status, plan_id: s.plan_id, customer_id: s.customer_id, customer_name: s.customer.name, currency: s.currency, start_date: s.start_date,
    billing_start: s.billing_start, post: s.post, schedule_id: s.schedule_id, setup_invoice_id: s.setup_invoice_id,
    changes: s.changes.map(({ date, from_plan, to_plan, effective_date, period_start, period_end, days_remaining, days_in_period, charge, credit, invoice_id }) => ({
      date, from_plan, to_plan, effective_date, period_start, period_end, days_remaining, days_in_period, charge, credit, invoice_id,
    })),
    cancel_at: s.cancel_at, dunning: dunningView(s.dunning), created_at: new Date(s.created_at).toISOString(),
  };
}
