import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { emailCampaigns } from '../../email_campaigns/model.ts';
import { emailAccounts } from '../model.ts';

/** Removes an account: its sealed passwords and DKIM key are erased; campaigns sending from it must end first. */
export const remove = defineTool({
  name: 'email_accounts.remove',
  description: 'Remove an e-mail account: its sealed passwords and DKIM key are erased. Refused while a campaign is scheduled, sending or paused from it (cancel it first).',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: { type: 'object', additionalProperties: false, required: ['id', 'removed'], properties: { id: { type: 'string' }, removed: { const: true } } },
  async handler(input, ctx) {
    const busy = await emailCampaigns(ctx.db).findOne({ workspace: ctx.workspace, account_id: input.id, status: { $in: ['scheduled', 'sending', 'paused'] } }).lean();
    if (busy) throw new CuadraError('conflict', `Campaign ${busy._id} is ${busy.status} from this account; cancel it first.`);
    const after = await emailAccounts(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, removed_at: null },
      { $set: { removed_at: ctx.now, updated_at: ctx.now, smtp_password_sealed: null, imap_password_sealed: null, 'dkim.private_key_sealed': '' } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('not_found', `No e-mail account ${input.id} exists in this workspace.`);
    return { id: after._id, removed: true as const };
  },
});
