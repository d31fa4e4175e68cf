import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { MCP_SERVER_VIEW_SCHEMA, mcpServers, mcpServerView } from '../model.ts';

/** Disconnects an MCP server: no agent can call its tools any more; its key is free again. */
export const remove = defineTool({
  name: 'mcp_servers.remove',
  description: 'Remove an outside MCP server: its tools are offered to no agent and mcp_servers.call refuses them; its namespace key is free again. Past calls stay on the ledger.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('mcp_server', MCP_SERVER_VIEW_SCHEMA),
  async handler(input, ctx) {
    const existing = await mcpServers(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!existing) throw new CuadraError('not_found', `No MCP server ${input.id} exists in this workspace.`);
    const after = await mcpServers(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: 'active' },
      { $set: { status: 'removed', key: `removed:${input.id}:${existing.key}`, updated_at: ctx.now } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) throw new CuadraError('conflict', 'This MCP server is removed already.');
    return { mcp_server: mcpServerView(after) };
  },
});
