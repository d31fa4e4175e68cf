import { anyPatternMatches } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { mcpServers } from './model.ts';

/** The Cuadra tool every outside MCP tool call goes through (policies, approvals, idempotency, ledger). */
export const MCP_CALL_TOOL = 'mcp_servers.call';

/** An outside tool as the runtime offers it to a model. */
export interface OfferedMcpTool { server_id: string; tool: string; function_name: string; description: string; input_schema: Record<string, unknown> }

/** `mcp.<key>.<tool>`: how agents' patterns and policies name an outside tool. */
export function mcpToolName(key: string, tool: string): string {
  return `mcp.${key}.${tool}`;
}

/** The outside tools of the workspace's active MCP servers that `patterns` select (`mcp.files.%`, `mcp.%:read`). */
export async function mcpToolsFor(db: Connection, workspace: string, patterns: readonly string[]): Promise<OfferedMcpTool[]> {
  if (!patterns.some((p) => p.startsWith('mcp.') || p.startsWith('%'))) return [];
  const servers = await mcpServers(db).find({ workspace, status: 'active' }).limit(50).lean();
  const out: OfferedMcpTool[] = [];
  for (const s of servers) {
    for (const t of s.tools) {
      if (!anyPatternMatches(patterns, { name: mcpToolName(s.key, t.name), risk: t.read_only ? 'read' : 'external' })) continue;
      out.push({
        server_id: s._id, tool: t.name, function_name: `mcp__${s.key}__${t.name}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64),
        description: `[${s.name}, outside MCP server] ${t.description}`.slice(0, 1000), input_schema: t.input_schema,
      });
    }
  }
  return out;
}
