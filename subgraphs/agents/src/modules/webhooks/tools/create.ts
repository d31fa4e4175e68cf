import { CuadraError, defineTool, newId, createPositioned, sealerFromEnv } from '@cuadra/shared';
import { newSigningSecret } from '../deliverer.ts';
import { checkEndpointUrl, WEBHOOK_FIELDS } from '../fields.ts';
import { secretContext, WEBHOOK_VIEW_SCHEMA, webhooks, webhookView, type EventType, type WebhookDoc } from '../model.ts';

/** Subscribes an endpoint; its signing secret is in this answer only. */
export const create = defineTool({
  name: 'webhooks.create',
  description: 'Subscribe an HTTPS endpoint to events: ledger.action (actions on the ledger, by module or tool pattern), approval.decided, agent_run.finished, and domain events such as invoice.overdue. '
    + 'Messages are signed as Standard Webhooks says (webhook-id, webhook-timestamp, webhook-signature); the signing secret (whsec_…) is in this answer only — keep it. '
    + 'Failed deliveries are retried with backoff for 3 days; an endpoint answering 410 is disabled. Only public addresses are called.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['url', 'events'],
    properties: WEBHOOK_FIELDS,
  },
  output: {
    type: 'object', additionalProperties: false, required: ['webhook', 'secret'],
    properties: {
      webhook: WEBHOOK_VIEW_SCHEMA,
      secret: { type: 'string', 'x-secret': true, description: 'The signing secret (whsec_…), shown once; kept only sealed.' },
    },
  },
  async handler(input, ctx) {
    const sealer = sealerFromEnv();
    if (!sealer) throw new CuadraError('unavailable', 'This deployment has no seal key (CUADRA_SEAL_KEY), so a signing secret cannot be kept; nothing was stored.');
    const url = checkEndpointUrl(input.url, '/url');
    if (input.tools && !input.events.includes('ledger.action')) throw new CuadraError('invalid_input', 'tools selects ledger actions; subscribe to ledger.action too, or leave tools out.', { field: '/tools' });
    const id = newId('whk');
    const secret = newSigningSecret();
    const secretId = newId('whs');
    // The chain's end now: actions from here on are sent, not the workspace's history.
    const head = await ctx.governance.ledger.entries.findOne({ workspace: ctx.workspace }, { seq: 1 }).sort({ seq: -1 }).lean();
    const doc: WebhookDoc = {
      _id: id, workspace: ctx.workspace, url, description: input.description ?? null, events: input.events as EventType[],
      tools: input.events.includes('ledger.action') ? (input.tools ?? ['%']) : [], status: 'active', disabled_reason: null,
      secrets: [{ id: secretId, sealed: sealer.seal(secret, secretContext(ctx.workspace, id, secretId)), created_at: ctx.now, expires_at: null }],
      ledger_seq: head?.seq ?? 0, created_at: ctx.now, updated_at: ctx.now,
    };
    await createPositioned(webhooks(ctx.db), doc);
    return { webhook: webhookView(doc, ctx.now), secret };
  },
});
