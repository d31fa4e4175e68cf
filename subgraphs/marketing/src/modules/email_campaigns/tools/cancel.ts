import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { CAMPAIGN_VIEW_SCHEMA, campaignView, emailCampaigns, sendingCampaigns } from '../model.ts';

/** Cancels a campaign: nothing more is sent; messages already handed over stay sent. */
export const cancel = defineTool({
  name: 'email_campaigns.cancel',
  description: 'Cancel a draft, scheduled, sending or paused campaign: no further message leaves (a message being handed to the server at that moment finishes). What was sent stays sent.',
  risk: 'destructive',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: recordOutput('campaign', CAMPAIGN_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await emailCampaigns(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: { $in: ['draft', 'scheduled', 'sending', 'paused'] } },
      { $set: { status: 'cancelled', cancelled_at: ctx.now, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) {
      const c = await emailCampaigns(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
      if (!c) throw new CuadraError('not_found', `No e-mail campaign ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Campaign ${input.id} is already ${c.status}.`);
    }
    // The sender checks the campaign's status before every message; its work list forgets it too.
    await sendingCampaigns(ctx.db).deleteOne({ _id: after._id });
    return { campaign: campaignView(after) };
  },
});
