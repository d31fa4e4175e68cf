import { CuadraError, defineTool, ID_SCHEMA, newId, sealerFromEnv } from '@cuadra/shared';
import { newSigningSecret } from '../deliverer.ts';
import { checkEndpointUrl, WEBHOOK_FIELDS } from '../fields.ts';
import { LEDGER_EVENT_TYPES, secretContext, signingSecrets, WEBHOOK_VIEW_SCHEMA, webhooks, webhookView, type EventType, type WebhookDoc } from '../model.ts';

/** The longest overlap a rotation may give the old secret. */
const MAX_OVERLAP_HOURS = 7 * 24;

/** Changes an endpoint, enables or disables it, or rotates its secret. */
export const update = defineTool({
  name: 'webhooks.update',
  description: 'Change a webhook endpoint (URL, events, tool patterns, description), enable or disable it, or rotate its signing secret with rotate: true. '
    + 'A rotation answers the new secret once; the old one keeps signing beside it for overlap_hours (default 24), so messages carry both signatures until the receiver has moved over — no downtime.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA, ...WEBHOOK_FIELDS,
      status: { enum: ['active', 'disabled'] },
      rotate: { type: 'boolean', description: 'Make a new signing secret (answered once).' },
      overlap_hours: { type: 'integer', minimum: 0, maximum: MAX_OVERLAP_HOURS, description: 'With rotate: how long the old secret keeps signing too (0: stops at once).' },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['webhook'],
    properties: {
      webhook: WEBHOOK_VIEW_SCHEMA,
      secret: { type: 'string', 'x-secret': true, description: 'With rotate: the new signing secret, shown once.' },
    },
  },
  async handler(input, ctx) {
    const w = await webhooks(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, status: { $ne: 'deleted' } }).lean();
    if (!w) throw new CuadraError('not_found', `No webhook endpoint ${input.id} exists in this workspace.`);
    if (input.overlap_hours !== undefined && !input.rotate) throw new CuadraError('invalid_input', 'overlap_hours goes with rotate: true.', { field: '/overlap_hours' });
    const set: Partial<WebhookDoc> = { updated_at: ctx.now };
    if (input.url !== undefined) set.url = checkEndpointUrl(input.url, '/url');
    if (input.description !== undefined) set.description = input.description;
    const events = (input.events ?? w.events) as EventType[];
    if (input.events !== undefined) set.events = events;
    // Subscribed to the ledger now and not before: from the chain's end now, not its history since creation.
    if (input.events !== undefined && !w.events.some((t) => LEDGER_EVENT_TYPES.includes(t)) && events.some((t) => LEDGER_EVENT_TYPES.includes(t))) {
      const head = await ctx.governance.ledger.entries.findOne({ workspace: ctx.workspace }, { seq: 1 }).sort({ seq: -1 }).lean();
      set.ledger_seq = head?.seq ?? 0;
    }
    if (input.tools !== undefined && !events.includes('ledger.action')) throw new CuadraError('invalid_input', 'tools selects ledger actions; subscribe to ledger.action too.', { field: '/tools' });
    if (input.tools !== undefined) set.tools = input.tools;
    else if (input.events !== undefined) set.tools = events.includes('ledger.action') ? (w.tools.length ? w.tools : ['%']) : [];
    if (input.status !== undefined) {
      set.status = input.status;
      set.disabled_reason = input.status === 'disabled' ? 'Disabled by a person.' : null;
      // Enabled again: from the chain's end now, not the actions it missed while disabled.
      if (input.status === 'active' && w.status !== 'active') {
        const head = await ctx.governance.ledger.entries.findOne({ workspace: ctx.workspace }, { seq: 1 }).sort({ seq: -1 }).lean();
        set.ledger_seq = head?.seq ?? 0;
      }
    }
    let secret: string | undefined;
    if (input.rotate) {
      const sealer = sealerFromEnv();
      if (!sealer) throw new CuadraError('unavailable', 'This deployment has no seal key (CUADRA_SEAL_KEY), so a signing secret cannot be kept; nothing was changed.');
      secret = newSigningSecret();
      const secretId = newId('whs');
      const until = new Date(ctx.now.getTime() + (input.overlap_hours ?? 24) * 3600_000);
      // The old secrets that still sign end at the overlap's end at the latest; expired ones are dropped.
      const kept = signingSecrets(w, ctx.now).map((s) => ({ ...s, expires_at: s.expires_at && new Date(s.expires_at) < until ? s.expires_at : until }))
        .filter((s) => new Date(s.expires_at).getTime() > ctx.now.getTime());
      set.secrets = [{ id: secretId, sealed: sealer.seal(secret, secretContext(ctx.workspace, w._id, secretId)), created_at: ctx.now, expires_at: null }, ...kept];
    }
    // Conditional on what was read: two updates at once do not interleave their secrets.
    const after = await webhooks(ctx.db).findOneAndUpdate({ _id: w._id, updated_at: w.updated_at }, { $set: set }, { returnDocument: 'after' }).lean();
    if (!after) throw new CuadraError('conflict', 'The endpoint changed while this update ran; read it again and retry.');
    return { webhook: webhookView(after, ctx.now), ...(secret ? { secret } : {}) };
  },
});
