import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { compileTemplate } from '../compile.ts';
import { emailTemplates, TEMPLATE_VIEW_SCHEMA, templateView } from '../model.ts';
import { TEMPLATE_FIELDS } from './create.ts';

/** Changes a template; the version rises, so a campaign names the version it sends. */
export const update = defineTool({
  name: 'email_templates.update',
  description: 'Change a template\'s name, subject, MJML or plain text (checked and compiled as on create). Its version rises by one; campaigns already sending keep what they were approved with.',
  risk: 'write',
  maxInputBytes: 400_000,
  input: { type: 'object', additionalProperties: false, required: ['id'], minProperties: 2, properties: { id: ID_SCHEMA, ...TEMPLATE_FIELDS } },
  output: recordOutput('template', TEMPLATE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const t = await emailTemplates(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!t) throw new CuadraError('not_found', `No e-mail template ${input.id} exists in this workspace.`);
    const parts = { subject: input.subject ?? t.subject, mjml: input.mjml ?? t.mjml, text: input.text ?? t.text };
    const html = await compileTemplate(parts);
    const name = input.name?.trim() ?? t.name;
    // On the version read: two updates at once cannot both build on the same one.
    const after = await emailTemplates(ctx.db).findOneAndUpdate(
      { _id: t._id, workspace: ctx.workspace, version: t.version },
      { $set: { ...parts, html, name, name_lc: name.toLowerCase(), version: t.version + 1, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('conflict', `Template ${input.id} changed meanwhile; read it again and retry.`);
    return { template: templateView(after) };
  },
});
