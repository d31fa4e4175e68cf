import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { ACCOUNT_VIEW_SCHEMA, accountView, emailAccounts } from '../model.ts';
import { signInProblem } from '../sign-in.ts';

/** Verifies an account by connecting: SMTP (greeting, STARTTLS, login) and, when it has one, its IMAP mailbox. */
export const verify = defineTool({
  name: 'email_accounts.verify',
  description: 'Check an e-mail account by connecting to its SMTP server (and signing in) and to its IMAP mailbox, if it has one. The account is marked verified, or failed with the reason; campaigns send only from verified accounts.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA } },
  output: recordOutput('account', ACCOUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const account = await emailAccounts(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace, removed_at: null }).lean();
    if (!account) throw new CuadraError('not_found', `No e-mail account ${input.id} exists in this workspace.`);
    const problem = (await signInProblem(account))?.problem ?? null;
    // Written only over the revision it checked: an account changed meanwhile (email_accounts.update checks its own) keeps the newer answer.
    const after = await emailAccounts(ctx.db).findOneAndUpdate(
      { _id: account._id, workspace: ctx.workspace, removed_at: null, revision: account.revision ?? null },
      { $set: problem ? { status: 'failed', last_error: problem, updated_at: ctx.now } : { status: 'verified', verified_at: ctx.now, last_error: null, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean() ?? await emailAccounts(ctx.db).findOne({ _id: account._id, workspace: ctx.workspace, removed_at: null }).lean();
    if (!after) throw new CuadraError('not_found', `No e-mail account ${input.id} exists in this workspace.`);
    return { account: accountView(after) };
  },
});
