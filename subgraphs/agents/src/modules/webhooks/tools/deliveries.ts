import { CURSOR_SCHEMA, CuadraError, defineTool, ID_SCHEMA, pageNewestFirst, pageOutput } from '@cuadra/shared';
import { DELIVERY_VIEW_SCHEMA, deliveries as deliveriesOf, deliverySeries, deliveryView, webhooks, type DeliveryDoc } from '../model.ts';

/** An endpoint's delivery log. */
export const deliveries = defineTool({
  name: 'webhooks.deliveries',
  description: 'The delivery log of a webhook endpoint, newest first: each message (its webhook-id, event, body), its status (pending, sending, succeeded, failed, cancelled) and every attempt (when, status code or error, the address reached, how long).',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA,
      status: { enum: ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  output: pageOutput(DELIVERY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const w = await webhooks(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }, { _id: 1 }).lean();
    if (!w) throw new CuadraError('not_found', `No webhook endpoint ${input.id} exists in this workspace.`);
    const page = await pageNewestFirst<DeliveryDoc>(deliveriesOf(ctx.db), {
      workspace: ctx.workspace, ...deliverySeries(input.id), limit: input.limit ?? 20, cursor: input.cursor,
      ...(input.status ? { match: (d: DeliveryDoc) => d.status === input.status } : {}),
    });
    return { rows: page.rows.map(deliveryView), ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
  },
});
