import { defineModule } from '@cuadra/shared';
import { deliveries, webhooks } from './model.ts';
import { create } from './tools/create.ts';
import { remove } from './tools/delete.ts';
import { deliveries as deliveriesTool } from './tools/deliveries.ts';
import { list } from './tools/list.ts';
import { redeliver } from './tools/redeliver.ts';
import { test } from './tools/test.ts';
import { update } from './tools/update.ts';

/**
 * Signed webhooks (issue 39): endpoints subscribed to ledger actions, approval decisions and
 * finished agent runs, delivered by {@link WebhookDeliverer} (deliverer.ts) from a durable queue.
 */
export const webhooksModule = defineModule({
  name: 'webhooks',
  tools: [create, list, update, remove, test, deliveriesTool, redeliver],
  models: [webhooks, deliveries],
  listed: [{ model: webhooks }],
});
