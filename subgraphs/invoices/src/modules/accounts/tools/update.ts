import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { accountId, ACCOUNT_VIEW_SCHEMA, chartAccount, findAccount, workspaceAccounts } from '../../../accounting/chart.ts';
import { CODE_SCHEMA } from '../model.ts';

/** Renames a sub-account the workspace opened, or restores an archived account. */
export const update = defineTool({
  name: 'accounts.update',
  description: 'Rename a sub-account the workspace opened (PUC accounts keep the names Decreto 2650 gives them), or restore an archived account with status "active".',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['code'], minProperties: 2,
    properties: { code: CODE_SCHEMA, name: { type: 'string', minLength: 1, maxLength: 120 }, status: { enum: ['active'] } },
  },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const account = await findAccount(ctx.db, ctx.workspace, input.code);
    if (!account) throw new CuadraError('not_found', `There is no account ${input.code} in this workspace's chart of accounts.`);
    if (input.name !== undefined && account.default) throw new CuadraError('conflict', `Account ${input.code} is a PUC account; its name (${account.name}) is fixed by Decreto 2650 de 1993. Open a sub-account to name it your way.`);
    if (input.status === 'active' && account.parent) {
      const parent = await findAccount(ctx.db, ctx.workspace, account.parent);
      if (parent?.status === 'archived') throw new CuadraError('conflict', `Its parent account ${account.parent} is archived; restore that first.`);
    }
    const set: Record<string, unknown> = { updated_at: ctx.now };
    if (input.name !== undefined) set.name = input.name;
    if (input.status) set.status = input.status;
    const after = await workspaceAccounts(ctx.db).findOneAndUpdate(
      { _id: accountId(ctx.workspace, input.code), workspace: ctx.workspace },
      { $set: set, $setOnInsert: { code: input.code, default: account.default, created_at: ctx.now, ...(input.name === undefined ? { name: account.name } : {}) } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    return { account: chartAccount(input.code, after)! };
  },
});
