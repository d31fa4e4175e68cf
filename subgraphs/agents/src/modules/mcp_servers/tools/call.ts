import { anyPatternMatches, CuadraError, defineTool, ID_SCHEMA, sealerFromEnv } from '@cuadra/shared';
import { redactSecrets } from '../../../lib/redact.ts';
import { mcpToolName } from '../catalog.ts';
import { withMcpClient } from '../client.ts';
import { mcpServers } from '../model.ts';

const sealer = sealerFromEnv();

/**
 * Calls one tool of an outside MCP server. Being a tool of ours, every call passes the pipeline
 * like any other (scope, role, key patterns, policies — risk `external` —, approvals,
 * Idempotency-Key, the ledger); an agent must also name the outside tool in its patterns
 * (`mcp.<key>.<tool>`). What the server answers is data: secret-looking fields read "[redacted]".
 */
export const call = defineTool({
  name: 'mcp_servers.call',
  description: 'Call a tool of a connected outside MCP server with its arguments. Answers whether the server reported an error, its text content and its structured content '
    + '(secret-looking fields read "[redacted]"). Agents reach only the outside tools their patterns name (mcp.<key>.<tool>).',
  risk: 'external',
  input: {
    type: 'object', additionalProperties: false, required: ['server_id', 'tool'],
    properties: { server_id: ID_SCHEMA, tool: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, arguments: { type: 'object' } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['server', 'tool', 'is_error', 'text'],
    properties: { server: { type: 'string' }, tool: { type: 'string' }, is_error: { type: 'boolean' }, text: { type: 'string' }, structured_content: { type: 'object' } },
  },
  async handler(input, ctx) {
    const server = await mcpServers(ctx.db).findOne({ _id: input.server_id, workspace: ctx.workspace, status: 'active' }).lean();
    if (!server) throw new CuadraError('invalid_input', `No connected MCP server ${input.server_id} exists in this workspace.`, { field: '/server_id' });
    const listed = server.tools.find((t) => t.name === input.tool);
    if (!listed) throw new CuadraError('invalid_input', `The MCP server "${server.name}" lists no tool ${input.tool}.`, { field: '/tool' });
    if (ctx.principal.actor.type === 'agent' && !anyPatternMatches(ctx.principal.patterns ?? [], { name: mcpToolName(server.key, listed.name), risk: listed.read_only ? 'read' : 'external' })) {
      throw new CuadraError('policy_denied', `This agent's patterns do not include ${mcpToolName(server.key, listed.name)}.`);
    }
    const result = await withMcpClient(ctx.db, ctx.workspace, server, sealer, (client) => client.callTool({ name: listed.name, arguments: input.arguments ?? {} }, { timeout: 30_000 }));
    const content = Array.isArray(result.content) ? result.content : [];
    const text = content.map((c) => (c && typeof c === 'object' && (c as { type?: string }).type === 'text' ? String((c as { text?: unknown }).text ?? '') : '')).join('\n');
    const structured = result.structuredContent && typeof result.structuredContent === 'object' ? (redactSecrets(result.structuredContent) as Record<string, unknown>) : undefined;
    return {
      server: server.name, tool: listed.name, is_error: result.isError === true, text: String(redactSecrets(text.slice(0, 64_000))),
      ...(structured ? { structured_content: structured } : {}),
    };
  },
});
