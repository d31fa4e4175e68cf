import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { marketingNow } from '../../../lib/clock.ts';
import { CAMPAIGN_VIEW_SCHEMA, campaignView, emailCampaigns } from '../model.ts';
import { placeInWindow } from '../window.ts';

/** Schedules a campaign for a moment, moved into the next Ley 2300 window when it falls outside one. */
export const schedule = defineTool({
  name: 'email_campaigns.schedule',
  description: 'Set when a campaign goes out. Ley 2300 de 2023 allows commercial messages Monday–Friday 7:00–19:00 and Saturday 8:00–15:00 (Bogotá), never on Sundays or holidays: a time outside those windows is moved to the next opening (a Sunday → Monday 7:00), and the answer says so. The campaign still needs email_campaigns.send (approved by a person) to go.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id', 'at'], properties: { id: ID_SCHEMA, at: { type: 'string', format: 'date-time', description: 'RFC 3339, e.g. 2026-11-29T10:00:00-05:00.' } } },
  output: {
    type: 'object', additionalProperties: false, required: ['campaign', 'moved'],
    properties: { campaign: CAMPAIGN_VIEW_SCHEMA, moved: { type: 'boolean' }, reason: { type: 'string' } },
  },
  async handler(input, ctx) {
    const at = new Date(input.at);
    const now = await marketingNow(ctx.db, ctx.workspace);
    if (at.getTime() < now.getTime() - 60_000) throw new CuadraError('invalid_input', 'That moment has passed; give a time from now on.', { field: '/at' });
    const placed = placeInWindow(at);
    const after = await emailCampaigns(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: { $in: ['draft', 'scheduled'] } },
      { $set: { status: 'scheduled', requested_at: at, send_at: placed.start, moved_reason: placed.reason, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) {
      const c = await emailCampaigns(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
      if (!c) throw new CuadraError('not_found', `No e-mail campaign ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Campaign ${input.id} is ${c.status}; only a draft or scheduled campaign can be scheduled.`);
    }
    return { campaign: campaignView(after), moved: placed.reason !== null, ...(placed.reason ? { reason: placed.reason } : {}) };
  },
});
