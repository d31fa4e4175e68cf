import { defineListTool } from '@cuadra/shared';
import { WEBHOOK_VIEW_SCHEMA, webhooks, webhookView, type WebhookDoc } from '../model.ts';

/** The workspace's webhook endpoints. */
export const list = defineListTool({
  name: 'webhooks.list',
  description: 'List the workspace\'s webhook endpoints, newest first: URL, events, tool patterns, status (a disabled one says why) and the secrets signing now (never their value).',
  model: webhooks,
  view: (w: WebhookDoc) => webhookView(w),
  viewSchema: WEBHOOK_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'disabled', 'deleted'] } },
  match: ({ status }) => (status ? (w: WebhookDoc) => w.status === status : (w: WebhookDoc) => w.status !== 'deleted'),
});
