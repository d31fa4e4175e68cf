import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { readParty } from '../../../lib/crm.ts';
import { firstName, renderMessage } from '../../../lib/render.ts';
import { emailAccounts } from '../../email_accounts/model.ts';
import { emailTemplates } from '../model.ts';

/** JSON Schema of a rendered message. */
export const RENDERED_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['subject', 'html', 'text'],
  properties: { subject: { type: 'string' }, html: { type: 'string' }, text: { type: 'string' } },
} as const;

/** Renders a template for one real party of the workspace (read from crm), as that party would receive it. */
export const preview = defineTool({
  name: 'email_templates.preview',
  description: 'Render a template for one real party of the workspace (read from crm) as it would receive it: subject, HTML and plain text with the merge fields filled; the sender is the account given (default: the template\'s workspace name is shown as "Cuadra"). The unsubscribe link is a sample that unsubscribes no one.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id', 'party_id'], properties: { id: ID_SCHEMA, party_id: ID_SCHEMA, account_id: ID_SCHEMA } },
  output: RENDERED_SCHEMA,
  async handler(input, ctx) {
    const template = await emailTemplates(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!template) throw new CuadraError('not_found', `No e-mail template ${input.id} exists in this workspace.`);
    const account = input.account_id ? await emailAccounts(ctx.db).findOne({ _id: input.account_id, workspace: ctx.workspace, removed_at: null }).lean() : null;
    if (input.account_id && !account) throw new CuadraError('invalid_input', `No e-mail account ${input.account_id} exists in this workspace.`, { field: '/account_id' });
    const party = await readParty(ctx.graph, input.party_id);
    if (!party) throw new CuadraError('invalid_input', `No party ${input.party_id} exists in this workspace.`, { field: '/party_id' });
    return renderMessage(template, {
      party: { id: party.id, name: party.name, first_name: firstName(party.name), email: party.email },
      sender: { name: account?.from_name ?? 'Cuadra', email: account?.from_email ?? '' },
      unsubscribe_url: 'https://example.invalid/preview-unsubscribe',
    });
  },
});
