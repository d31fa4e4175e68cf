import { defineModule } from '@cuadra/shared';
import { mcpServers } from './model.ts';
import { mcpServersSource } from './sources.ts';
import { call } from './tools/call.ts';
import { connect } from './tools/connect.ts';
import { list } from './tools/list.ts';
import { remove } from './tools/remove.ts';

/** Outside MCP servers the workspace's agents may use, their tools namespaced; every call through the pipeline. */
export const mcpServersModule = defineModule({
  name: 'mcp_servers',
  tools: [connect, list, remove, call],
  models: [mcpServers],
  listed: [{ model: mcpServers }],
  reads: { sources: { mcp_servers: mcpServersSource } },
});
