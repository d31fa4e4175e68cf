import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { accountId, ACCOUNT_VIEW_SCHEMA, chartAccount, findAccount, MAX_WORKSPACE_ACCOUNTS, workspaceAccounts } from '../../../accounting/chart.ts';
import { CODE_SCHEMA } from '../model.ts';

/**
 * Opens a sub-account under an existing account: its code is the parent's plus two digits (the
 * PUC's structure: 1105 → 110505 → 11050501).
 */
export const create = defineTool({
  name: 'accounts.create',
  description: 'Open a sub-account in the chart of accounts under an existing active account of four digits or more; its code is the parent\'s code plus two digits (e.g. 5135 → 513525, 110505 → 11050501). Its type and normal balance follow its class.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['parent', 'code', 'name'],
    properties: { parent: CODE_SCHEMA, code: CODE_SCHEMA, name: { type: 'string', minLength: 1, maxLength: 120 } },
  },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const parent = await findAccount(ctx.db, ctx.workspace, input.parent);
    if (!parent) throw new CuadraError('invalid_input', `There is no account ${input.parent} in this workspace's chart of accounts.`, { field: '/parent' });
    if (parent.level === 'class' || parent.level === 'group') throw new CuadraError('invalid_input', `${input.parent} is a PUC ${parent.level}: its accounts are the PUC's own; open sub-accounts under an account of four digits or more.`, { field: '/parent' });
    if (parent.status !== 'active') throw new CuadraError('conflict', `Account ${input.parent} is archived; restore it before opening sub-accounts under it.`);
    if (!(input.code.length === input.parent.length + 2 && input.code.startsWith(input.parent))) {
      throw new CuadraError('invalid_input', `A sub-account of ${input.parent} has its code plus two digits (${input.parent}01 to ${input.parent}99).`, { field: '/code' });
    }
    if (await findAccount(ctx.db, ctx.workspace, input.code)) throw new CuadraError('conflict', `Account ${input.code} already exists in this chart of accounts.`);
    if (await workspaceAccounts(ctx.db).countDocuments({ workspace: ctx.workspace }) >= MAX_WORKSPACE_ACCOUNTS) {
      throw new CuadraError('conflict', `This workspace already has ${MAX_WORKSPACE_ACCOUNTS} accounts of its own, the most a chart holds.`);
    }
    const doc = { _id: accountId(ctx.workspace, input.code), workspace: ctx.workspace, code: input.code, name: input.name, default: false, status: 'active' as const, created_at: ctx.now, updated_at: ctx.now };
    try {
      await workspaceAccounts(ctx.db).create(doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `Account ${input.code} already exists in this chart of accounts.`);
      throw err;
    }
    return { account: chartAccount(input.code, doc)! };
  },
});
