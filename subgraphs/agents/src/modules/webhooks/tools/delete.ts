import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { deliveries, WEBHOOK_VIEW_SCHEMA, webhooks, webhookView } from '../model.ts';

/** Removes an endpoint: nothing more is sent to it; its delivery log stays readable. */
export const remove = defineTool({
  name: 'webhooks.delete',
  description: 'Delete a webhook endpoint: nothing more is sent to it (messages waiting for a retry are cancelled) and its secrets are dropped; its delivery log stays readable with webhooks.deliveries.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('webhook', WEBHOOK_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await webhooks(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: { $ne: 'deleted' } },
      { $set: { status: 'deleted', secrets: [], disabled_reason: null, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('not_found', `No webhook endpoint ${input.id} exists in this workspace.`);
    await deliveries(ctx.db).updateMany({ webhook_id: after._id, status: 'pending' }, { $set: { status: 'cancelled', reason: 'The endpoint was deleted.', updated_at: ctx.now } });
    return { webhook: webhookView(after, ctx.now) };
  },
});
