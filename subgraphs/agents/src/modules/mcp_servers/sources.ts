import { CuadraError, defineSource, type SourceReader } from '@cuadra/shared';
import { mcpServerMatches, mcpServers, type McpServerDoc } from './model.ts';

function mcpRow(m: McpServerDoc) {
  return { id: m._id, name: m.name, key: m.key, url: m.url, tools: m.tools.length, status: m.status, connection_id: m.connection_id, listed_at: new Date(m.listed_at).toISOString() };
}

const page = defineSource<McpServerDoc>({ model: mcpServers, search: mcpServerMatches, statuses: ['active', 'removed'], row: mcpRow });

/** records.list `mcp_servers`: newest first; search name, key and URL; status active or removed. */
export const mcpServersSource: SourceReader = (q, ctx) => {
  if (q.kind !== undefined) throw new CuadraError('invalid_input', 'The source mcp_servers takes no kind.', { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', 'The source mcp_servers takes no ref.', { field: '/ref' });
  return page(q, ctx);
};
