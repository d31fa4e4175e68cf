import { defineListTool, searchTerm } from '@cuadra/shared';
import { MCP_SERVER_VIEW_SCHEMA, mcpServerMatches, mcpServers, mcpServerView } from '../model.ts';

/** The workspace's MCP servers and their tools. */
export const list = defineListTool({
  name: 'mcp_servers.list',
  description: 'List the outside MCP servers connected for agents, newest first, each with its tools as agents name them (mcp.<key>.<tool>); filter by status or search.',
  model: mcpServers,
  view: mcpServerView,
  viewSchema: MCP_SERVER_VIEW_SCHEMA,
  filters: { status: { enum: ['active', 'removed'] }, search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ status, search }) => {
    const text = searchTerm(search);
    return status || text ? (m) => (!status || m.status === status) && (!text || mcpServerMatches(m, text)) : undefined;
  },
});
