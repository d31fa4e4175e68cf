import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { RETRY_WINDOW_MS } from '../deliverer.ts';
import { DELIVERY_VIEW_SCHEMA, deliveries, deliveryView, webhooks } from '../model.ts';

/** Queues a message again, with the same webhook-id. */
export const redeliver = defineTool({
  name: 'webhooks.redeliver',
  description: 'Send a message again (a failed or cancelled one, or a delivered one the receiver lost): it is queued now with the same webhook-id and body, and retried for 3 days more. The endpoint must be active.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['delivery_id'], properties: { delivery_id: ID_SCHEMA } },
  output: recordOutput('delivery', DELIVERY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const d = await deliveries(ctx.db).findOne({ _id: input.delivery_id, workspace: ctx.workspace }).lean();
    if (!d) throw new CuadraError('not_found', `No webhook delivery ${input.delivery_id} exists in this workspace.`);
    const w = await webhooks(ctx.db).findOne({ _id: d.webhook_id, workspace: ctx.workspace }, { status: 1 }).lean();
    if (w?.status !== 'active') throw new CuadraError('conflict', `The endpoint is ${w?.status ?? 'deleted'}; enable it with webhooks.update first.`);
    const after = await deliveries(ctx.db).findOneAndUpdate(
      { _id: d._id, status: { $in: ['succeeded', 'failed', 'cancelled'] } },
      { $set: { status: 'pending', reason: null, next_attempt_at: ctx.now, give_up_at: new Date(ctx.now.getTime() + RETRY_WINDOW_MS), updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('conflict', `This message is ${d.status}: it is being sent already.`);
    return { delivery: deliveryView(after) };
  },
});
