import { defineListTool, searchTerm } from '@cuadra/shared';
import { CONNECTION_VIEW_SCHEMA, connectionMatches, connections, connectionView } from '../model.ts';

/** The workspace's connections, newest first, never a secret. */
export const list = defineListTool({
  name: 'connections.list',
  description: 'List the workspace\'s connections to outside services, newest first: name, service, kind, scopes, state, token expiry and refresh state — never a key or token. Filter by status or search.',
  model: connections,
  view: connectionView,
  viewSchema: CONNECTION_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'revoked'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    return status || text ? (c) => (!status || c.status === status) && (!text || connectionMatches(c, text)) : undefined;
  },
});
