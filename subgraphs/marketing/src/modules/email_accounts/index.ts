import { defineModule, defineSource, searchIn } from '@cuadra/shared';
import { emailAccounts, type EmailAccountDoc } from './model.ts';
import { connect } from './tools/connect.ts';
import { list } from './tools/list.ts';
import { remove } from './tools/remove.ts';
import { update } from './tools/update.ts';
import { verify } from './tools/verify.ts';

/** The accounts campaigns are sent from: SMTP (system or the workspace's), IMAP for bounces, DKIM per sending domain. */
export const emailAccountsModule = defineModule({
  name: 'email_accounts',
  tools: [connect, update, verify, list, remove],
  models: [emailAccounts],
  listed: [{ model: emailAccounts }],
  reads: {
    sources: {
      // Status is ignored for email_accounts (specification §2.5).
      email_accounts: defineSource<EmailAccountDoc>({
        model: emailAccounts,
        search: searchIn<EmailAccountDoc>('name_lc', 'from_email', 'domain'),
        row: (a) => ({ id: a._id, name: a.name, from_email: a.from_email, domain: a.domain, transport: a.transport, status: a.removed_at ? 'removed' : a.status }),
      }),
    },
  },
});
