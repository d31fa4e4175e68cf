import { defineModule, defineSource, searchIn } from '@cuadra/shared';
import { emailTemplates, type EmailTemplateDoc } from './model.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';
import { preview } from './tools/preview.ts';
import { update } from './tools/update.ts';

/** E-mail templates: MJML, a plain-text alternative, Liquid merge fields, previews for real parties. */
export const emailTemplatesModule = defineModule({
  name: 'email_templates',
  tools: [create, update, preview, list],
  models: [emailTemplates],
  listed: [{ model: emailTemplates }],
  reads: {
    sources: {
      email_templates: defineSource<EmailTemplateDoc>({
        model: emailTemplates,
        search: searchIn<EmailTemplateDoc>('name_lc'),
        row: (t) => ({ id: t._id, name: t.name, subject: t.subject, version: t.version, updated_at: t.updated_at.toISOString() }),
      }),
    },
  },
});
