import { defineListTool } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, accountView, emailAccounts } from '../model.ts';

/** Lists the workspace's connected e-mail accounts, newest first. */
export const list = defineListTool({
  name: 'email_accounts.list',
  description: 'List the workspace\'s e-mail accounts (connected, not removed), newest first, with their status and the DNS records to publish.',
  model: emailAccounts,
  view: accountView,
  viewSchema: ACCOUNT_VIEW_SCHEMA,
  filters: { status: { enum: ['unverified', 'verified', 'failed'] } },
  match: ({ status }) => (a) => a.removed_at === null && (!status || a.status === status),
});
