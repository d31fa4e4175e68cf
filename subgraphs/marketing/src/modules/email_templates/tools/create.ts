import { createPositioned, defineTool, newId, recordOutput } from '@cuadra/shared';
import { compileTemplate } from '../compile.ts';
import { DEFAULT_TEMPLATE, emailTemplates, TEMPLATE_VIEW_SCHEMA, templateView, type EmailTemplateDoc } from '../model.ts';

/** The fields of a template (create and update). */
export const TEMPLATE_FIELDS = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  subject: { type: 'string', minLength: 1, maxLength: 300, description: 'Liquid merge fields allowed: {{ party.first_name }}, {{ party.name }}, {{ sender.name }}.' },
  mjml: { type: 'string', minLength: 1, maxLength: 200_000, description: 'MJML markup; must carry {{ unsubscribe_url }}.' },
  text: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The plain-text alternative; must carry {{ unsubscribe_url }}.' },
} as const;

/** Creates a template (Spanish defaults for what is not given). */
export const create = defineTool({
  name: 'email_templates.create',
  description: 'Create an e-mail template: MJML compiled to HTML, a plain-text alternative and a subject, with merge fields in Liquid ({{ party.first_name }}, {{ party.name }}, {{ party.email }}, {{ sender.name }}, {{ unsubscribe_url }} — required in both bodies). Nothing in a template runs as code. Parts not given start from the Spanish defaults.',
  risk: 'write',
  maxInputBytes: 400_000,
  input: { type: 'object', additionalProperties: false, required: ['name'], properties: TEMPLATE_FIELDS },
  output: recordOutput('template', TEMPLATE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const parts = { subject: input.subject ?? DEFAULT_TEMPLATE.subject, mjml: input.mjml ?? DEFAULT_TEMPLATE.mjml, text: input.text ?? DEFAULT_TEMPLATE.text };
    const html = await compileTemplate(parts);
    const doc: EmailTemplateDoc = { _id: newId('etp'), workspace: ctx.workspace, name: input.name.trim(), name_lc: input.name.trim().toLowerCase(), ...parts, html, version: 1, created_at: ctx.now, updated_at: ctx.now };
    await createPositioned(emailTemplates(ctx.db), doc);
    return { template: templateView(doc) };
  },
});
