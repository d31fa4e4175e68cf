import { addDays, REPAIR_AFTER_MS, type MaintenanceContext, type MaintenanceHook } from '@cuadra/shared';
import { handoverCopyFound, HANDOVER_COPY_TAG, systemMailbox, taggedAddress } from '@cuadra/shared/mail-handover';
import { deliveryMailer, type DeliveryOutcome } from '../../e-documents/delivery.ts';
import { EVERY_WORKSPACE } from '../../books/due-index.ts';
import { invoiceIsOpen, subscriptionInvoicesDue } from '../invoices/due.ts';
import { invoices, type InvoiceDoc } from '../invoices/model.ts';
import { dayEndedEverywhere } from '../invoices/overdue.ts';
import { nextPeriod, recurringInvoices } from '../invoices/recurring.ts';
import { daysBetween } from './ops.ts';
import {
  DUNNING_STAGES, dunningOf, plans, subscriptions, type DunningLevel, type DunningNotice, type DunningSettings, type DunningState, type SubscriptionDoc,
} from './model.ts';

/**
 * Dunning of plan subscriptions, driven by the background sweep (never by a read): a subscriber's
 * oldest invoice still open after its due date is chased step by step — a reminder at due + N days,
 * a second one, then the subscription suspended (its recurring schedule issues nothing) — each step
 * taken once, e-mailed to the customer once and recorded on the workspace's ledger as
 * `subscription.dunning`; once the invoice is paid (or credited) the subscription is active again and
 * its schedule resumes with the next period that starts on or after that day (periods that began
 * while suspended are not billed: the service was not given).
 *
 * Each step is first claimed on the subscription by one conditional update (`rev`): the step's
 * notice with its Message-ID, `sending`. Then the schedule is suspended (idempotent), the ledger
 * event recorded (its id derived from subscription, invoice, due date and step: once), the e-mail
 * handed to the SMTP server and its outcome stored. A sweep that dies after the claim leaves the
 * notice `sending`: past the repair wait the next sweep takes it over (one taker: a conditional
 * update of its time) and settles it as marketing's campaign sender settles a row in doubt
 * (@cuadra/shared/mail-handover): every notice goes in the same SMTP transaction to the deployment's
 * bounce mailbox too (`<bounce>+copy@…`), so its copy there, found over IMAP by Message-ID, proves the
 * server took it — the notice is `sent`, nothing is sent again; no copy past the repair wait means it
 * was never taken, and it is sent with the same Message-ID: exactly one message across a crash. A
 * deployment without that mailbox cannot tell: the notice ends `in_doubt`, never sent again (at most
 * once). A mailbox that does not answer leaves the notice for a later pass.
 *
 * Each notice with an address counts against the workspace's daily mail quota (shared MailQuota,
 * as invoices.deliver): counted before its step is claimed, so a spent quota holds the step —
 * reminder or suspension — until the quota renews (a subscription is never suspended without its
 * notice); a resend after a crash counts again.
 */

/** Subscriptions and overdue invoices read per pass (the rest wait for the next pass). */
const BATCH = 200;

/**
 * How far back the pass looks for overdue invoices: a step is at most 365 days after the due date
 * (plans.create), so an invoice due longer ago than this has reached its last step.
 */
const DUNNING_REACH_DAYS = 366;

/** The step an invoice `days` past its due date has reached under `d` (0: still within the grace). */
export function dunningLevel(d: DunningSettings, days: number): 0 | DunningLevel {
  return days >= d.suspend_days ? 3 : days >= d.second_reminder_days ? 2 : days >= d.reminder_days ? 1 : 0;
}

/** The e-mail of a step, in the customer's language (Spanish: Colombia first). */
function noticeText(s: SubscriptionDoc, inv: Pick<InvoiceDoc, 'number' | '_id' | 'due_date' | 'balance' | 'currency'>, level: DunningLevel): { subject: string; text: string } {
  const ref = inv.number ?? inv._id;
  const amount = `${(inv.balance / 100).toFixed(2)} ${inv.currency}`;
  const subject = level === 3 ? `Suscripción suspendida — factura ${ref} vencida` : `${level === 2 ? 'Segundo recordatorio' : 'Recordatorio'}: factura ${ref} vencida`;
  const body = level === 3
    ? `La factura ${ref}, vencida el ${inv.due_date}, tiene un saldo de ${amount}. Su suscripción ${s._id} queda suspendida y no se emitirán nuevas facturas hasta que se pague; al pagarla se reactiva.`
    : `La factura ${ref} venció el ${inv.due_date} y tiene un saldo de ${amount}. Le agradecemos su pago.`;
  return { subject, text: `${s.customer.name}:\n\n${body}\n` };
}

/**
 * Hands a step's e-mail to the SMTP server, with its copy to the bounce mailbox when there is one;
 * a server without SMTP answers `failed` (the step stands, ledgered).
 */
async function sendNotice(s: SubscriptionDoc, n: DunningNotice, inv: Pick<InvoiceDoc, 'number' | '_id' | 'due_date' | 'balance' | 'currency'>): Promise<DeliveryOutcome | { status: 'no_address' }> {
  if (!n.to) return { status: 'no_address' };
  let mailer: ReturnType<typeof deliveryMailer>;
  try {
    mailer = deliveryMailer();
  } catch (err) {
    return { status: 'failed', error: (err as Error).message };
  }
  const mailbox = systemMailbox();
  return mailer.send({ to: n.to, messageId: n.message_id, ...noticeText(s, inv, n.level), ...(mailbox ? { copyTo: taggedAddress(mailbox.bounceAddress, HANDOVER_COPY_TAG) } : {}) });
}

/**
 * What became of a notice a dead sweep left `sending`: `sent` when its copy is in the bounce mailbox,
 * `resend` when it is not (never taken), `in_doubt` without a mailbox to ask, `unknown` when the
 * mailbox does not answer (asked again on a later pass).
 */
async function handoverOf(n: DunningNotice, log: MaintenanceContext['log']): Promise<'sent' | 'resend' | 'in_doubt' | 'unknown'> {
  if (!n.to) return 'resend';
  const mailbox = systemMailbox();
  if (!mailbox) return 'in_doubt';
  try {
    return (await handoverCopyFound(mailbox, n.message_id)) ? 'sent' : 'resend';
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'bounce mailbox not readable; the notice in doubt waits');
    return 'unknown';
  }
}

/** Counts a notice with an address against its workspace's daily mail quota; false when the day's quota is spent. */
async function takeQuota(ctx: MaintenanceContext, s: SubscriptionDoc, to: string | null): Promise<{ day: string } | null | false> {
  if (!to || !ctx.mailQuota) return null;
  try {
    return await ctx.mailQuota.take(s.workspace, ctx.now);
  } catch (err) {
    if ((err as { code?: string }).code !== 'rate_limited') throw err;
    ctx.log.info({ subscription: s._id }, 'dunning notice held: the workspace\'s daily e-mail quota is spent');
    return false;
  }
}

/** The Message-ID of a step's e-mail: the same on every attempt. */
function messageId(s: SubscriptionDoc, d: Pick<DunningState, 'invoice_id' | 'due_date'>, level: DunningLevel): string {
  const from = process.env.MAIL_FROM?.trim() || 'no-reply@cuadra.localhost';
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'cuadra.localhost';
  return `<dunning.${s._id}.${d.invoice_id}.${d.due_date.replaceAll('-', '')}.${level}@${domain}>`;
}

/**
 * Finishes the steps a subscription carries: its schedule suspended while it is, then each notice
 * still `sending` — the one this pass just claimed (`claimed`), or one a dead sweep left past the
 * repair wait (taken over first) — ledgered and e-mailed once, its outcome stored.
 */
async function finishSteps(ctx: MaintenanceContext, s: SubscriptionDoc, claimed: string | null): Promise<void> {
  if (s.status === 'suspended') await recurringInvoices(ctx.db).updateOne({ _id: s.schedule_id, status: 'active' }, { $set: { status: 'suspended', updated_at: ctx.now } });
  const d = s.dunning;
  if (!d) return;
  for (const n of d.notices) {
    if (n.status !== 'sending') continue;
    if (n.message_id !== claimed) {
      if (ctx.now.getTime() - new Date(n.at).getTime() < REPAIR_AFTER_MS) continue; // a live sweep is sending it
      // Taken over by one conditional update on the subscription as read (`rev`): one taker.
      const notices = d.notices.map((o) => (o.message_id === n.message_id ? { ...o, at: ctx.now } : o));
      const taken = await subscriptions(ctx.db).updateOne({ _id: s._id, rev: s.rev }, { $set: { 'dunning.notices': notices }, $inc: { rev: 1 } });
      if (taken.modifiedCount !== 1) return; // another sweep took it (or moved the subscription): the next pass sees it as it is
      const handover = await handoverOf(n, ctx.log);
      if (handover === 'unknown') continue;
      if (handover !== 'resend') {
        await recordStep(ctx, s, d, n);
        await subscriptions(ctx.db).updateOne(
          { _id: s._id, 'dunning.notices.message_id': n.message_id },
          { $set: { 'dunning.notices.$.status': handover, 'dunning.notices.$.error': handover === 'in_doubt' ? 'The sweep stopped while handing this notice to the SMTP server and no mailbox can tell whether it was taken; it is not sent again.' : null } },
        );
        continue;
      }
      if ((await takeQuota(ctx, s, n.to)) === false) continue; // sent again once the quota renews (a later pass)
    }
    const inv = await recordStep(ctx, s, d, n);
    if (!inv) continue;
    const outcome = await sendNotice(s, n, inv);
    await subscriptions(ctx.db).updateOne(
      { _id: s._id, 'dunning.notices.message_id': n.message_id },
      { $set: { 'dunning.notices.$.status': outcome.status, 'dunning.notices.$.error': 'error' in outcome ? outcome.error : null } },
    );
  }
}

/** Records a step on the ledger (once: its key) and answers the invoice it chases, or null when that is gone. */
async function recordStep(ctx: MaintenanceContext, s: SubscriptionDoc, d: DunningState, n: DunningNotice): Promise<Pick<InvoiceDoc, 'number' | '_id' | 'due_date' | 'balance' | 'currency'> | null> {
  const inv = await invoices(ctx.db).findOne({ _id: d.invoice_id, workspace: s.workspace }, { number: 1, due_date: 1, balance: 1, currency: 1 }).lean();
  if (!inv) return null;
  await ctx.events.record({
    workspace: s.workspace, type: 'subscription.dunning', subject: s._id, key: `${d.invoice_id}:${d.due_date}:${n.level}`,
    data: { subscription_id: s._id, step: DUNNING_STAGES[n.level], level: n.level, invoice_id: d.invoice_id, number: inv.number ?? null, due_date: d.due_date, balance: inv.balance, currency: inv.currency, to: n.to },
  });
  return inv;
}

/** Moves a subscription to step `level` on `inv` (claimed once: `rev`), then finishes the step. */
async function takeStep(ctx: MaintenanceContext, s: SubscriptionDoc, inv: InvoiceDoc, level: DunningLevel): Promise<boolean> {
  const state: DunningState = s.dunning ?? { invoice_id: inv._id, due_date: inv.due_date, level: 0, notices: [], resume_status: null };
  const notice: DunningNotice = { level, to: s.customer.email ?? inv.customer.email ?? null, message_id: messageId(s, state, level), status: 'sending', error: null, at: ctx.now };
  const suspend = level === 3 && s.status !== 'suspended';
  const next: DunningState = { ...state, level, notices: [...state.notices, notice], resume_status: suspend ? (s.status as 'active' | 'cancelling') : state.resume_status };
  const counted = await takeQuota(ctx, s, notice.to);
  if (counted === false) return false; // the step waits for the quota to renew
  const after = await subscriptions(ctx.db).findOneAndUpdate(
    { _id: s._id, rev: s.rev },
    { $set: { dunning: next, ...(suspend ? { status: 'suspended' } : {}), updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!after) {
    if (counted) await ctx.mailQuota!.giveBack(s.workspace, counted.day);
    return false; // another sweep moved it first
  }
  await finishSteps(ctx, after, notice.message_id);
  return true;
}

/**
 * Ends a subscription's dunning once its invoice is no longer owed: back to the status it had, its
 * schedule active again from the first period that starts on or after `today`, the step ledgered.
 */
async function reactivate(ctx: MaintenanceContext, s: SubscriptionDoc, today: string): Promise<boolean> {
  const d = s.dunning!;
  const after = await subscriptions(ctx.db).findOneAndUpdate(
    { _id: s._id, rev: s.rev },
    { $set: { dunning: null, ...(s.status === 'suspended' ? { status: d.resume_status ?? 'active' } : {}), updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!after) return false;
  if (s.status === 'suspended') {
    const r = await recurringInvoices(ctx.db).findOne({ _id: s.schedule_id, status: 'suspended' }).lean();
    if (r) {
      let next = r.next_date;
      for (let i = 0; next < today && i < 1000; i++) next = nextPeriod(next, r.interval, r.every, r.anchor_day);
      await recurringInvoices(ctx.db).updateOne({ _id: r._id, status: 'suspended' }, { $set: { status: 'active', next_date: next, updated_at: ctx.now } });
    }
  }
  await ctx.events.record({
    workspace: s.workspace, type: 'subscription.dunning', subject: s._id, key: `${d.invoice_id}:${d.due_date}:paid`,
    data: { subscription_id: s._id, step: 'reactivated', level: 0, invoice_id: d.invoice_id, number: null, due_date: d.due_date, balance: 0, currency: s.currency, to: null },
  });
  return true;
}

/**
 * The plans module's share of the sweep: first the subscriptions in dunning — reactivated when their
 * invoice is no longer owed, else their unfinished steps finished — then the open invoices of
 * subscriptions past their due date, oldest first: each subscription's oldest moves to the step its
 * days overdue reach (a sweep that catches up after days away takes only the step reached, never
 * mails the skipped ones).
 * @returns how many steps it took
 */
export const dunSubscriptions: MaintenanceHook = async (ctx) => {
  const today = dayEndedEverywhere(ctx.now);
  let steps = 0;
  for (const s of await subscriptions(ctx.db).find({ dunning: { $ne: null } }).limit(BATCH).lean()) {
    const inv = await invoices(ctx.db).findOne({ _id: s.dunning!.invoice_id, workspace: s.workspace }, { kind: 1, status: 1, balance: 1, due_date: 1 }).lean();
    if (inv && invoiceIsOpen(inv) && inv.balance > 0 && inv.due_date === s.dunning!.due_date) await finishSteps(ctx, s, null);
    else if (await reactivate(ctx, s, today)) steps++;
  }
  // By due day from the index kept over every workspace (`_id` reads only), oldest first.
  const overdue = await subscriptionInvoicesDue.read<InvoiceDoc>(ctx.db, EVERY_WORKSPACE, addDays(today, -DUNNING_REACH_DAYS), addDays(today, -1), BATCH,
    // Only `_id` in the filter (the store's `_id` index answers only then).
    async (ids) => (await invoices(ctx.db).find({ _id: { $in: ids } }).lean()) as InvoiceDoc[], (inv) => invoiceIsOpen(inv) && inv.balance > 0);
  const seen = new Set<string>();
  for (const inv of overdue) {
    const subId = inv.source!.subscription_id!;
    if (seen.has(subId)) continue;
    seen.add(subId);
    const s = await subscriptions(ctx.db).findOne({ _id: subId, workspace: inv.workspace }).lean();
    // Dunning one invoice at a time: the one it chases stays until paid (then the next oldest).
    if (!s || s.status === 'starting' || (s.dunning && s.dunning.invoice_id !== inv._id)) continue;
    const plan = await plans(ctx.db).findOne({ _id: s.plan_id, workspace: s.workspace }, { dunning: 1 }).lean();
    const level = dunningLevel(dunningOf(plan ?? {}), daysBetween(inv.due_date, today));
    if (level === 0 || (s.dunning && level <= s.dunning.level)) continue;
    if (await takeStep(ctx, s, inv, level)) steps++;
  }
  return steps;
};
