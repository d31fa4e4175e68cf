import { defineListTool, searchTerm } from '@cuadra/shared';
import { AI_MODEL_VIEW_SCHEMA, aiModelMatches, aiModels, aiModelView } from '../model.ts';

/** The workspace's models, newest first (the embedded one is `ai_models.get {id: "embedded"}`). */
export const list = defineListTool({
  name: 'ai_models.list',
  description: 'List the workspace\'s AI models, newest first, never their keys; filter by status or search name, model and base URL. The embedded model (id "embedded") is always available besides these.',
  model: aiModels,
  view: aiModelView,
  viewSchema: AI_MODEL_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'archived'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    return status || text ? (m) => (!status || m.status === status) && (!text || aiModelMatches(m, text)) : undefined;
  },
});
