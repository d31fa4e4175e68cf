import { CuadraError, defineTool, ID_SCHEMA, listNewestFirst, pageOutput, PAGING_NOTE, CURSOR_SCHEMA } from '@cuadra/shared';
import { emailCampaigns } from '../../email_campaigns/model.ts';
import { emailRows, ROW_STATUSES, ROW_VIEW_SCHEMA, rowSeries, rowView, type RowDoc } from '../model.ts';

/** Lists a campaign's messages, one row per recipient, last recipient first. */
export const list = defineTool({
  name: 'email_rows.list',
  description: `List the messages of a campaign, one row per recipient (queued, sending, sent, delivered, bounced hard or soft, complained, unsubscribed, replied, failed, in doubt, cancelled), with the Message-ID each carries.${PAGING_NOTE}`,
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['campaign_id'],
    properties: { campaign_id: ID_SCHEMA, status: { enum: [...ROW_STATUSES] }, limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA },
  },
  output: pageOutput(ROW_VIEW_SCHEMA),
  async handler(input, ctx) {
    const campaign = await emailCampaigns(ctx.db).exists({ _id: input.campaign_id, workspace: ctx.workspace });
    if (!campaign) throw new CuadraError('invalid_input', `No e-mail campaign ${input.campaign_id} exists in this workspace.`, { field: '/campaign_id' });
    const status = input.status;
    return listNewestFirst<RowDoc, ReturnType<typeof rowView>>(emailRows(ctx.db), {
      workspace: ctx.workspace, series: rowSeries(input.campaign_id), cursor: input.cursor, limit: input.limit ?? 20, ...(status ? { match: (r: RowDoc) => r.status === status } : {}),
    }, rowView);
  },
});
