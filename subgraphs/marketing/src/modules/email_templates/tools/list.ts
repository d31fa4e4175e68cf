import { defineListTool } from '@cuadra/shared';
import { emailTemplates, TEMPLATE_VIEW_SCHEMA, templateView } from '../model.ts';

/** Lists templates, newest first. */
export const list = defineListTool({
  name: 'email_templates.list',
  description: 'List the workspace\'s e-mail templates, newest first; search their names.',
  model: emailTemplates,
  view: templateView,
  viewSchema: TEMPLATE_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ search }) => (search ? (t) => t.name_lc.includes(search.toLowerCase()) : undefined),
});
