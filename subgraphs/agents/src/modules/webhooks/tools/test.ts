import { CuadraError, defineTool, ID_INPUT, recordOutput, sealerFromEnv } from '@cuadra/shared';
import { enqueueMessage, WebhookDeliverer } from '../deliverer.ts';
import { DELIVERY_VIEW_SCHEMA, deliveries, deliveryView, webhooks } from '../model.ts';

/** Sends a `webhook.test` message now and answers how it went. */
export const test = defineTool({
  name: 'webhooks.test',
  description: 'Send a signed webhook.test message to an endpoint now and answer the attempt (status code, or why it failed, and the address reached). A failure is retried like any message.',
  risk: 'external',
  input: ID_INPUT,
  output: recordOutput('delivery', DELIVERY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const w = await webhooks(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, status: { $ne: 'deleted' } }).lean();
    if (!w) throw new CuadraError('not_found', `No webhook endpoint ${input.id} exists in this workspace.`);
    if (w.status !== 'active') throw new CuadraError('conflict', `The endpoint is ${w.status}${w.disabled_reason ? ` (${w.disabled_reason})` : ''}; enable it with webhooks.update first.`);
    // The test message is named by the call's moment, so each test is its own message.
    const queued = await enqueueMessage(ctx.db, w, { type: 'webhook.test', eventId: `test:${ctx.now.toISOString()}`, eventAt: ctx.now, data: { webhook_id: w._id, message: 'A test message from Cuadra.' } }, ctx.now);
    const deliverer = new WebhookDeliverer({ db: ctx.db, governance: ctx.governance, sealer: sealerFromEnv(), log: ctx.log });
    await deliverer.sendNow(queued._id, ctx.now);
    const after = await deliveries(ctx.db).findById(queued._id).lean();
    return { delivery: deliveryView(after!) };
  },
});
