import { addPositions, containsText, DATE_TIME_SCHEMA as DATE_TIME, modelOn, NULLABLE_TEXT_SCHEMA as NULLABLE_TEXT, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** One tool an outside MCP server lists, as kept. */
export interface McpToolDoc { name: string; description: string; input_schema: Record<string, unknown>; read_only: boolean }

/** An outside MCP server a workspace's agents may use (issue 37), as stored. `_id` is `mcp_…`. */
export interface McpServerDoc {
  _id: string;
  workspace: string;
  name: string;
  /** Its namespace (`files`): its tools are `mcp.<key>.<tool>` in agents' patterns and `mcp__<key>__<tool>` to a model. Unique per workspace. */
  key: string;
  url: string;
  /** The connection whose credential authenticates to it; null: none sent. */
  connection_id: string | null;
  tools: McpToolDoc[];
  /** What the server says it is (`serverInfo`), and the protocol revision agreed. */
  server_info: { name: string; version: string } | null;
  protocol_version: string | null;
  status: 'active' | 'removed';
  listed_at: Date;
  created_at: Date;
  updated_at: Date;
}

const mcpSchema = new Schema<McpServerDoc>(
  {
    _id: String, workspace: { type: String, required: true }, name: { type: String, required: true }, key: { type: String, required: true }, url: { type: String, required: true },
    connection_id: { type: String, default: null }, tools: { type: Schema.Types.Mixed, default: [] }, server_info: { type: Schema.Types.Mixed, default: null },
    protocol_version: { type: String, default: null }, status: { type: String, required: true }, listed_at: { type: Date, required: true },
    created_at: { type: Date, required: true }, updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// One active server per namespace: the key of a removed one is freed (`removed:<id>`).
mcpSchema.index({ workspace: 1, key: 1 }, { unique: true });
addPositions(mcpSchema);

/** The mcp_servers collection. */
export function mcpServers(db: Connection): Model<McpServerDoc> {
  return modelOn<McpServerDoc>(db, 'McpServer', mcpSchema, 'mcp_servers');
}

/** JSON Schema of {@link mcpServerView}. */
export const MCP_SERVER_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'name', 'key', 'url', 'connection_id', 'tools', 'server_info', 'protocol_version', 'status', 'listed_at', 'created_at'],
  properties: {
    id: TEXT, name: TEXT, key: TEXT, url: TEXT, connection_id: NULLABLE_TEXT,
    tools: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'pattern', 'description', 'read_only', 'input_schema'],
        properties: { name: TEXT, pattern: TEXT, description: TEXT, read_only: { type: 'boolean' }, input_schema: { type: 'object' } },
      },
    },
    server_info: { anyOf: [{ type: 'null' }, { type: 'object', additionalProperties: false, required: ['name', 'version'], properties: { name: TEXT, version: TEXT } }] },
    protocol_version: NULLABLE_TEXT, status: { enum: ['active', 'removed'] }, listed_at: DATE_TIME, created_at: DATE_TIME,
  },
} as const;

/** The public shape of an MCP server, with its tools as agents name them. */
export function mcpServerView(m: McpServerDoc) {
  return {
    id: m._id, name: m.name, key: m.key.startsWith('removed:') ? m.key.split(':')[2] ?? m.key : m.key, url: m.url, connection_id: m.connection_id,
    tools: m.tools.map((t) => ({ name: t.name, pattern: `mcp.${m.key}.${t.name}`, description: t.description, read_only: t.read_only, input_schema: t.input_schema })),
    server_info: m.server_info, protocol_version: m.protocol_version, status: m.status, listed_at: new Date(m.listed_at).toISOString(), created_at: new Date(m.created_at).toISOString(),
  };
}

/** Search over name, key and URL. */
export function mcpServerMatches(m: McpServerDoc, needle: string): boolean {
  return containsText(m.name, needle) || containsText(m.key, needle) || containsText(m.url, needle);
}
