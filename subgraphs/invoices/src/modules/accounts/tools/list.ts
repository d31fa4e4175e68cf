import { CURSOR_SCHEMA, defineTool, pageOutput } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA } from '../../../accounting/chart.ts';
import { ACCOUNT_FILTERS, chartPage } from '../model.ts';

/** Lists the workspace's chart of accounts by code. */
export const list = defineTool({
  name: 'accounts.list',
  description: 'List the chart of accounts (the Colombian PUC, Decreto 2650 de 1993, with the sub-accounts the workspace opened), in code order: each with its class, level, type, normal balance and status. Filter by class, type, status, parent (everything below it) or search (code or name). Pages: pass next_cursor back as cursor until it is absent; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: { ...ACCOUNT_FILTERS, limit: { type: 'integer', minimum: 1, maximum: 500 }, cursor: CURSOR_SCHEMA },
  },
  output: pageOutput(ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { limit, cursor, ...filters } = input;
    return chartPage(ctx.db, ctx.workspace, filters, limit ?? 100, cursor);
  },
});
