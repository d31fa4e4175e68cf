import { CuadraError } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { signLink } from '../../lib/links.ts';
import { publicUrl } from '../../lib/public-url.ts';
import { firstName, renderMessage } from '../../lib/render.ts';
import type { EmailAccountDoc } from '../email_accounts/model.ts';
import { emailAccounts } from '../email_accounts/model.ts';
import { emailTemplates, type EmailTemplateDoc } from '../email_templates/model.ts';
import type { CampaignDoc } from './model.ts';

/** The purpose of one-click unsubscribe links (links.ts). */
export const UNSUBSCRIBE_PURPOSE = 'unsubscribe';

/** The public one-click unsubscribe URL of one row (RFC 8058: HTTPS in production, no sign-in). */
export function unsubscribeUrl(workspace: string, rowId: string): string {
  return `${publicUrl()}/u/${signLink(UNSUBSCRIBE_PURPOSE, { w: workspace, r: rowId })}`;
}

/** A campaign's account, which must exist and be verified (`invalid_input` at /account_id otherwise). */
export async function usableAccount(db: Connection, workspace: string, id: string, field = '/account_id'): Promise<EmailAccountDoc> {
  const account = await emailAccounts(db).findOne({ _id: id, workspace, removed_at: null }).lean();
  if (!account) throw new CuadraError('invalid_input', `No e-mail account ${id} exists in this workspace.`, { field });
  if (account.status !== 'verified') throw new CuadraError('invalid_input', `E-mail account ${id} is not verified; run email_accounts.verify first.`, { field });
  return account;
}

/** A campaign's template (`invalid_input` at /template_id when it is gone). */
export async function campaignTemplate(db: Connection, workspace: string, id: string, field = '/template_id'): Promise<EmailTemplateDoc> {
  const t = await emailTemplates(db).findOne({ _id: id, workspace }).lean();
  if (!t) throw new CuadraError('invalid_input', `No e-mail template ${id} exists in this workspace.`, { field });
  return t;
}

/** The message one recipient gets. */
export async function messageFor(content: NonNullable<CampaignDoc['content']>, account: EmailAccountDoc, party: { id: string; name: string; address: string }, unsubscribe: string) {
  return renderMessage(content, {
    party: { id: party.id, name: party.name, first_name: firstName(party.name), email: party.address },
    sender: { name: account.from_name, email: account.from_email },
    unsubscribe_url: unsubscribe,
  });
}
