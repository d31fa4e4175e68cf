import { CuadraError, defineTool, ID_SCHEMA, type ToolContext } from '@cuadra/shared';
import { marketingNow } from '../../../lib/clock.ts';
import { countExclusions, planAudience } from '../audience.ts';
import { campaignTemplate, messageFor, usableAccount } from '../content.ts';
import { signInToken } from '../../email_accounts/servers.ts';
import type { EmailAccountDoc } from '../../email_accounts/model.ts';
import { CAMPAIGN_VIEW_SCHEMA, campaignView, emailCampaigns, EXCLUSIONS, sendingCampaigns, type CampaignDoc } from '../model.ts';
import { queueRows } from '../queue.ts';
import { placeInWindow } from '../window.ts';

/** Most recipients one campaign sends to (its recipient list is kept on the campaign). */
export const MAX_RECIPIENTS = 20_000;
/** Parties left out that the campaign and the dry run list by name (all are counted). */
const EXCLUDED_LISTED = 1_000;

async function sendable(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<CampaignDoc> {
  const c = await emailCampaigns(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!c) throw new CuadraError('not_found', `No e-mail campaign ${id} exists in this workspace.`);
  if (c.status !== 'draft' && c.status !== 'scheduled' && c.status !== 'paused') throw new CuadraError('conflict', `Campaign ${id} is ${c.status}; it cannot be sent again.`);
  return c;
}

/**
 * The campaign's account, verified and able to sign in: an account that signs in with a connection
 * (XOAUTH2) whose connection is revoked or gone is a `conflict` saying so — nothing is sent.
 */
async function sendingAccount(ctx: Pick<ToolContext, 'db' | 'workspace'>, c: CampaignDoc): Promise<EmailAccountDoc> {
  const account = await usableAccount(ctx.db, ctx.workspace, c.account_id, '/id');
  if (account.auth === 'xoauth2') await signInToken(account, 'smtp');
  return account;
}

/** When a campaign goes: its scheduled time (or now), moved into the next Ley 2300 window. */
function firstWindow(c: CampaignDoc, now: Date) {
  const at = c.send_at && c.send_at > now ? c.send_at : now;
  return placeInWindow(at);
}

/**
 * The dry run: who the campaign reaches after every exclusion, who it leaves out and why, when it
 * starts, and the message the first recipient gets. Shown to the person who approves the send.
 */
async function dryRun(input: { id: string }, ctx: ToolContext) {
  const c = await sendable(ctx, input.id);
  const account = await sendingAccount(ctx, c);
  if (c.status === 'paused') {
    // Resuming: the recipients were frozen when it was first sent; the rest of them get their message.
    const window = firstWindow(c, await marketingNow(ctx.db, ctx.workspace));
    return {
      campaign: c._id, name: c.name, from: `${account.from_name} <${account.from_email}>`, template: { id: c.template_id, version: c.content?.version ?? 0 },
      recipients: c.rows_total, recipients_first: (c.recipients ?? []).slice(0, 20), excluded_counts: c.excluded_counts ?? {}, excluded: (c.excluded ?? []).slice(0, 100),
      first_window: { start: window.start.toISOString(), end: window.end.toISOString(), ...(window.reason ? { moved_because: window.reason } : {}) },
      sample: null, paused_reason: c.paused_reason ?? null, counts: c.counts ?? {},
    };
  }
  const template = await campaignTemplate(ctx.db, ctx.workspace, c.template_id, '/id');
  const plan = await planAudience(ctx.db, ctx.graph, ctx.workspace, c.audience);
  const window = firstWindow(c, await marketingNow(ctx.db, ctx.workspace));
  const first = plan.recipients[0];
  const sample = first ? await messageFor(template, account, { id: first.id, name: first.name, address: first.address }, 'https://example.invalid/sample-unsubscribe') : null;
  return {
    campaign: c._id, name: c.name, from: `${account.from_name} <${account.from_email}>`, template: { id: template._id, version: template.version },
    recipients: plan.recipients.length,
    recipients_first: plan.recipients.slice(0, 20).map((r) => ({ party_id: r.id, name: r.name, address: r.address })),
    excluded_counts: countExclusions(plan.excluded),
    excluded: plan.excluded.slice(0, 100),
    first_window: { start: window.start.toISOString(), end: window.end.toISOString(), ...(window.reason ? { moved_because: window.reason } : {}) },
    sample: sample ? { to: `${first.name} <${first.address}>`, ...sample } : null,
  };
}

/** Resumes a paused campaign: back on the sender's list, its rows as they were (none written again, none sent twice). */
async function resume(ctx: ToolContext, c: CampaignDoc) {
  await sendingCampaigns(ctx.db).updateOne({ _id: c._id }, { $setOnInsert: { workspace: ctx.workspace, since: ctx.now } }, { upsert: true });
  const after = await emailCampaigns(ctx.db).findOneAndUpdate(
    { _id: c._id, workspace: ctx.workspace, status: 'paused' },
    { $set: { status: 'sending', paused_reason: null, updated_at: ctx.now } },
    { returnDocument: 'after' },
  ).lean();
  if (!after) throw new CuadraError('conflict', `Campaign ${c._id} changed meanwhile (cancelled or resumed); read it again.`);
  const window = firstWindow(after, await marketingNow(ctx.db, ctx.workspace));
  return {
    campaign: campaignView(after), recipients: after.rows_total, excluded_counts: after.excluded_counts ?? {},
    first_window: { start: window.start.toISOString(), end: window.end.toISOString(), ...(window.reason ? { moved_because: window.reason } : {}) },
  };
}

/** Sends a campaign (held for a person's approval by default; the approver sees the dry run). */
export const send = defineTool({
  name: 'email_campaigns.send',
  description: 'Send a campaign to its audience (or resume a paused one where it stopped): every party of it with e-mail consent, minus the unsubscribed, bounced and complained, one message each, from its scheduled time (or now) and only within the Ley 2300 windows (checked again before every message), at the account\'s rate, through a queue that survives restarts without sending anyone twice. Held for a person\'s approval by default; the approver sees the dry run (recipients, who is left out and why, the first window, a rendered sample).',
  risk: 'external',
  // Held for a person unless a workspace policy says otherwise (an `allow` policy matching email_campaigns.send).
  defaultEffect: 'hold',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['campaign', 'recipients', 'excluded_counts', 'first_window'],
    properties: {
      campaign: CAMPAIGN_VIEW_SCHEMA,
      recipients: { type: 'integer' },
      excluded_counts: { type: 'object', propertyNames: { enum: [...EXCLUSIONS] }, additionalProperties: { type: 'integer' } },
      first_window: { type: 'object', additionalProperties: false, required: ['start', 'end'], properties: { start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' }, moved_because: { type: 'string' } } },
    },
  },
  preview: (input, ctx) => dryRun(input, ctx),
  async handler(input, ctx) {
    const c = await sendable(ctx, input.id);
    const account = await sendingAccount(ctx, c);
    if (c.status === 'paused') return resume(ctx, c);
    const template = await campaignTemplate(ctx.db, ctx.workspace, c.template_id, '/id');
    const plan = await planAudience(ctx.db, ctx.graph, ctx.workspace, c.audience);
    if (plan.recipients.length === 0) throw new CuadraError('conflict', `Campaign ${c._id} reaches nobody: every party of its audience is left out (${Object.entries(countExclusions(plan.excluded)).map(([k, v]) => `${k} ${v}`).join(', ') || 'the audience is empty'}).`);
    if (plan.recipients.length > MAX_RECIPIENTS) throw new CuadraError('conflict', `Campaign ${c._id} would reach ${plan.recipients.length} parties; one campaign sends to at most ${MAX_RECIPIENTS}. Narrow its audience.`);
    const window = firstWindow(c, await marketingNow(ctx.db, ctx.workspace));
    const recipients = plan.recipients.map((r) => ({ party_id: r.id, name: r.name, address: r.address }));
    // On the sender's list first: if this process dies after the freeze below, the sender finishes writing the rows.
    await sendingCampaigns(ctx.db).updateOne({ _id: c._id }, { $setOnInsert: { workspace: ctx.workspace, since: ctx.now } }, { upsert: true });
    // One conditional write freezes what is sent and to whom; the rows are then written from it.
    const frozen = await emailCampaigns(ctx.db).findOneAndUpdate(
      { _id: c._id, workspace: ctx.workspace, status: c.status, updated_at: c.updated_at },
      { $set: {
        status: 'sending', send_at: window.start, moved_reason: window.reason ?? c.moved_reason,
        content: { version: template.version, subject: template.subject, html: template.html, text: template.text },
        recipients, rows_total: recipients.length, excluded: plan.excluded.slice(0, EXCLUDED_LISTED), excluded_counts: countExclusions(plan.excluded),
        counts: { queued: recipients.length }, updated_at: ctx.now,
      } },
      { returnDocument: 'after' },
    ).lean() as (CampaignDoc & { recipients: typeof recipients }) | null;
    if (!frozen) throw new CuadraError('conflict', `Campaign ${c._id} changed meanwhile (scheduled, cancelled or sent); read it again.`);
    await queueRows(ctx.db, frozen, account.domain, ctx.now);
    return {
      campaign: campaignView({ ...frozen, queued_at: ctx.now }), recipients: recipients.length, excluded_counts: countExclusions(plan.excluded),
      first_window: { start: window.start.toISOString(), end: window.end.toISOString(), ...(window.reason ? { moved_because: window.reason } : {}) },
    };
  },
});
