import { createPositioned, CuadraError, defineTool, newId, recordOutput, sealerFromEnv } from '@cuadra/shared';
import { checkOutboundUrl } from '../../../lib/outbound.ts';
import { connections } from '../../connections/model.ts';
import { withMcpClient } from '../client.ts';
import { MCP_SERVER_VIEW_SCHEMA, mcpServers, mcpServerView, type McpServerDoc, type McpToolDoc } from '../model.ts';

const sealer = sealerFromEnv();
/** Tools kept of one server at most (a model is offered only those its agent's patterns select). */
const MAX_TOOLS = 200;

/** Connects an outside MCP server: opens a session, lists its tools, keeps them under the server's namespace. */
export const connect = defineTool({
  name: 'mcp_servers.connect',
  description: 'Connect an outside MCP server (Streamable HTTP) for the workspace\'s agents: its URL, a namespace key (a-z, 0-9, _) and optionally the connection whose credential it takes. '
    + 'Its tools are listed now and named mcp.<key>.<tool> in agents\' patterns (mcp.files.%); each call of one goes through mcp_servers.call, so policies, approvals, idempotency and the ledger apply as to any tool.',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'key', 'url'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
      key: { type: 'string', pattern: '^[a-z0-9_]{1,24}$' },
      url: { type: 'string', minLength: 8, maxLength: 500 },
      connection_id: { type: 'string', minLength: 1, maxLength: 64 },
    },
  },
  output: recordOutput('mcp_server', MCP_SERVER_VIEW_SCHEMA),
  async handler(input, ctx) {
    const url = checkOutboundUrl(input.url, '/url');
    if (input.connection_id && !(await connections(ctx.db).exists({ _id: input.connection_id, workspace: ctx.workspace, status: 'active' }))) {
      throw new CuadraError('invalid_input', `No active connection ${input.connection_id} exists in this workspace.`, { field: '/connection_id' });
    }
    if (await mcpServers(ctx.db).exists({ workspace: ctx.workspace, key: input.key })) throw new CuadraError('conflict', `An MCP server with the key "${input.key}" is connected already.`);
    const server = { url, connection_id: input.connection_id ?? null };
    const listed = await withMcpClient(ctx.db, ctx.workspace, server, sealer, async (client) => {
      const tools: McpToolDoc[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        for (const t of page.tools) {
          if (tools.length >= MAX_TOOLS || !/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) continue;
          tools.push({
            name: t.name, description: String(t.description ?? '').slice(0, 2000), input_schema: (t.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
            read_only: t.annotations?.readOnlyHint === true,
          });
        }
        cursor = page.nextCursor;
      } while (cursor && tools.length < MAX_TOOLS);
      const info = client.getServerVersion();
      return { tools, server_info: info ? { name: String(info.name), version: String(info.version) } : null, protocol_version: client.getNegotiatedProtocolVersion?.() ?? null };
    });
    const doc: McpServerDoc = {
      _id: newId('mcp'), workspace: ctx.workspace, name: input.name.trim(), key: input.key, url, connection_id: server.connection_id, tools: listed.tools,
      server_info: listed.server_info, protocol_version: listed.protocol_version ?? null, status: 'active', listed_at: ctx.now, created_at: ctx.now, updated_at: ctx.now,
    };
    try {
      await createPositioned(mcpServers(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `An MCP server with the key "${input.key}" is connected already.`);
      throw err;
    }
    return { mcp_server: mcpServerView(doc) };
  },
});
