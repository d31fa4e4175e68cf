import { CuadraError, defineTool } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, findAccount } from '../../../accounting/chart.ts';
import { accountUsage } from '../../../books/general-ledger.ts';
import { CODE_SCHEMA } from '../model.ts';

/** One account of the chart, with how many journal lines it has. */
export const get = defineTool({
  name: 'accounts.get',
  description: 'Get one account of the chart of accounts by its PUC code: class, level, type, normal balance, status, and how many journal lines were posted to it.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['code'], properties: { code: CODE_SCHEMA } },
  output: {
    type: 'object', additionalProperties: false, required: ['account', 'lines_posted'],
    properties: { account: ACCOUNT_VIEW_SCHEMA, lines_posted: { type: 'integer', minimum: 0 } },
  },
  async handler(input, ctx) {
    const account = await findAccount(ctx.db, ctx.workspace, input.code);
    if (!account) throw new CuadraError('not_found', `There is no account ${input.code} in this workspace's chart of accounts.`);
    return { account, lines_posted: await accountUsage(ctx.db, ctx.workspace, input.code) };
  },
});
