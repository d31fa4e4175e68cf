import { addDays, createPositioned, CuadraError, type ToolContext } from '@cuadra/shared';
import type { LineInput } from '../items/document-lines.ts';
import { issueInvoiceOnce } from '../invoices/issue.ts';
import { previousPeriod, recurringInvoices, type RecurringDoc } from '../invoices/recurring.ts';
import { findSubscription, plans, scheduleInterval, subscriptions, type PlanChange, type PlanDoc, type SubscriptionDoc } from './model.ts';

/** The recurring schedule that bills a subscription: one per subscription. */
export function scheduleIdOf(subscriptionId: string): string {
  return `rec_${subscriptionId.slice(4)}`;
}

/** The one-off invoices of a subscription: its setup fee, and the proration of its n-th change. */
export function setupInvoiceId(subscriptionId: string): string {
  return `inv_${subscriptionId.slice(4)}_setup`;
}
export function changeInvoiceId(subscriptionId: string, n: number): string {
  return `inv_${subscriptionId.slice(4)}_chg${n}`;
}

/** The line a plan bills each period. */
export function planLine(p: Pick<PlanDoc, 'name' | 'price' | 'tax_rate_ppm'>): LineInput {
  return { description: p.name, quantity: 1, unit_price: p.price, tax_rate_ppm: p.tax_rate_ppm };
}

/** Whole days from `from` to `to`. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** ⌊a × b / c + ½⌋ in exact integers: money × days / days, rounded half up. */
export function prorate(amount: number, days: number, periodDays: number): number {
  return Number((BigInt(amount) * BigInt(days) * 2n + BigInt(periodDays)) / (2n * BigInt(periodDays)));
}

/**
 * Finishes starting a subscription: its recurring schedule (id from the subscription, so written
 * once), its setup-fee invoice (id from the subscription), then active. Called by plans.subscribe
 * right after writing the subscription, and by the sweep for one a dead process left `starting`.
 */
export async function completeStart(ctx: ToolContext, s: SubscriptionDoc): Promise<SubscriptionDoc> {
  if (s.status !== 'starting') return s;
  const plan = (await plans(ctx.db).findOne({ _id: s.plan_id, workspace: ctx.workspace }).lean())!;
  const { interval, every } = scheduleInterval(plan.interval);
  const schedule: RecurringDoc = {
    _id: s.schedule_id, workspace: ctx.workspace, status: 'active', customer_id: s.customer_id, customer: s.customer, currency: s.currency,
    lines: [planLine(plan)], withholdings: [], notes: `Suscripción ${s._id} — ${plan.name}`, interval, every, due_days: plan.due_days, post: s.post,
    next_date: s.billing_start, anchor_day: Number(s.billing_start.slice(8, 10)), end_date: null, issued: 0, subscription_id: s._id, created_at: ctx.now, updated_at: ctx.now,
  };
  try {
    await createPositioned(recurringInvoices(ctx.db), schedule);
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err; // written by the call that died
  }
  if (s.setup_invoice_id) {
    await issueInvoiceOnce(ctx, {
      id: s.setup_invoice_id, customer_id: s.customer_id, customer: s.customer, currency: s.currency, issue_date: s.start_date, due_date: addDays(s.start_date, plan.due_days),
      lines: [{ description: `Cargo de activación — ${plan.name}`, quantity: 1, unit_price: plan.setup_fee, tax_rate_ppm: plan.tax_rate_ppm }], withholdings: [], notes: null,
      source: { subscription_id: s._id }, post: s.post,
    });
  }
  const after = await subscriptions(ctx.db).findOneAndUpdate({ _id: s._id, status: 'starting' }, { $set: { status: 'active', updated_at: ctx.now }, $inc: { rev: 1 } }, { returnDocument: 'after' }).lean();
  return after ?? (await subscriptions(ctx.db).findById(s._id).lean())!;
}

/**
 * The proration of a change on `date`, on the schedule as it stands. The rule: the period being
 * billed is [period start, next billing date); an upgrade (a dearer plan) starts the day of the
 * change and is charged for the remaining days, daily: new price × remaining days / days in the
 * period, less the unused part of the old plan (old price × remaining days / days in the period),
 * each rounded half up to the cent, on one invoice; a downgrade (same price or cheaper) starts with
 * the next period, with nothing charged or refunded now. A period not yet billed (a trial) changes
 * with no proration.
 */
export function prorationOf(r: Pick<RecurringDoc, 'next_date' | 'interval' | 'every' | 'anchor_day' | 'issued'>, from: PlanDoc, to: PlanDoc, date: string): Omit<PlanChange, 'invoice_id'> {
  const base = { date, from_plan: from._id, to_plan: to._id };
  if (r.issued === 0) return { ...base, effective_date: date, period_start: date, period_end: date, days_remaining: 0, days_in_period: 0, charge: 0, credit: 0 };
  const start = previousPeriod(r.next_date, r.interval, r.every, r.anchor_day);
  const end = addDays(r.next_date, -1);
  const periodDays = daysBetween(start, r.next_date);
  const remaining = daysBetween(date, r.next_date);
  if (to.price <= from.price) return { ...base, effective_date: r.next_date, period_start: start, period_end: end, days_remaining: remaining, days_in_period: periodDays, charge: 0, credit: 0 };
  return {
    ...base, effective_date: date, period_start: start, period_end: end, days_remaining: remaining, days_in_period: periodDays,
    charge: prorate(to.price, remaining, periodDays), credit: prorate(from.price, remaining, periodDays),
  };
}

/**
 * Finishes a change a subscription carries (`pending_change`): the proration invoice (its id from
 * the subscription and the change's number), the schedule's line switched to the new plan (a
 * conditional update: once), then the change recorded and the plan switched.
 */
export async function completeChange(ctx: ToolContext, s: SubscriptionDoc): Promise<SubscriptionDoc> {
  const c = s.pending_change;
  if (!c) return s;
  if (c.invoice_id) {
    await issueInvoiceOnce(ctx, {
      id: c.invoice_id, customer_id: s.customer_id, customer: s.customer, currency: s.currency, issue_date: c.date, due_date: c.date,
      lines: [{
        description: `Prorrateo ${c.to_name}: ${c.days_remaining} de ${c.days_in_period} días (${c.charge}) menos crédito del plan anterior por los mismos días (${c.credit})`,
        quantity: 1, unit_price: c.charge - c.credit, tax_rate_ppm: c.to_tax_rate_ppm,
      }],
      withholdings: [], notes: `Suscripción ${s._id}: cambio de plan ${c.from_plan} → ${c.to_plan} el ${c.date}`, source: { subscription_id: s._id }, post: s.post,
    });
  }
  // Setting the new line is idempotent: a second finisher writes the same value.
  await recurringInvoices(ctx.db).updateOne(
    { _id: s.schedule_id },
    { $set: { lines: [{ description: c.to_name, quantity: 1, unit_price: c.to_price, tax_rate_ppm: c.to_tax_rate_ppm }], updated_at: ctx.now } },
  );
  const { to_price: _p, to_name: _n, to_tax_rate_ppm: _t, ...change } = c;
  const after = await subscriptions(ctx.db).findOneAndUpdate(
    { _id: s._id, rev: s.rev },
    { $set: { plan_id: c.to_plan, pending_change: null, updated_at: ctx.now }, $push: { changes: change }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (after) {
    await plans(ctx.db).updateOne({ _id: c.from_plan }, { $inc: { subscribers: -1 } });
    await plans(ctx.db).updateOne({ _id: c.to_plan }, { $inc: { subscribers: 1 } });
    return after;
  }
  return (await subscriptions(ctx.db).findById(s._id).lean())!;
}

/**
 * A subscription of the workspace that may be changed or cancelled: a start or a change a dead
 * process left half done is finished first (their invoices carry derived ids, so nothing twice);
 * one that is not active (nor of a status in `also`) is refused `conflict`.
 */
export async function changeableSubscription(ctx: ToolContext, id: string, also: readonly SubscriptionDoc['status'][] = []): Promise<SubscriptionDoc> {
  let s = await completeStart(ctx, await findSubscription(ctx, id));
  if (s.pending_change) s = await completeChange(ctx, s);
  if (s.status !== 'active' && !also.includes(s.status)) throw new CuadraError('conflict', `Subscription ${s._id} is ${s.status}; this needs it active.`);
  if (s.pending_change) throw new CuadraError('conflict', `Subscription ${s._id} is changing plan right now; try again in a moment.`);
  return s;
}
