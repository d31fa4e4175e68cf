import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { accountId, ACCOUNT_VIEW_SCHEMA, chartAccount, findAccount, wholeChart, workspaceAccounts } from '../../../accounting/chart.ts';
import { accountUsage } from '../../../books/general-ledger.ts';
import { CODE_SCHEMA } from '../model.ts';

/**
 * Archives an account nothing was ever posted to: it leaves the lists of active accounts and
 * takes no postings. An account with journal lines stays (its history is the books): `conflict`.
 */
export const archive = defineTool({
  name: 'accounts.archive',
  description: 'Archive an account of the chart that has never been posted to and has no active sub-accounts: it takes no further postings. An account with journal entries, or one the automatic postings use, cannot be archived (conflict). Restore with accounts.update status "active".',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['code'], properties: { code: CODE_SCHEMA } },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const account = await findAccount(ctx.db, ctx.workspace, input.code);
    if (!account) throw new CuadraError('not_found', `There is no account ${input.code} in this workspace's chart of accounts.`);
    if (account.status === 'archived') return { account };
    if (account.level === 'class' || account.level === 'group') throw new CuadraError('conflict', `${input.code} is a PUC ${account.level}; only accounts and sub-accounts are archived.`);
    if (account.system) throw new CuadraError('conflict', `Account ${input.code} (${account.name}) is one the automatic postings write to; it cannot be archived.`);
    const lines = await accountUsage(ctx.db, ctx.workspace, input.code);
    if (lines > 0) throw new CuadraError('conflict', `Account ${input.code} (${account.name}) has ${lines} journal line${lines === 1 ? '' : 's'}; an account with entries cannot be archived or deleted.`);
    const child = (await wholeChart(ctx.db, ctx.workspace)).find((a) => a.parent === input.code && a.status === 'active');
    if (child) throw new CuadraError('conflict', `Account ${input.code} has the active sub-account ${child.code}; archive that first.`);
    const after = await workspaceAccounts(ctx.db).findOneAndUpdate(
      { _id: accountId(ctx.workspace, input.code), workspace: ctx.workspace },
      { $set: { status: 'archived', updated_at: ctx.now }, $setOnInsert: { code: input.code, name: account.name, default: account.default, created_at: ctx.now } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    return { account: chartAccount(input.code, after)! };
  },
});
