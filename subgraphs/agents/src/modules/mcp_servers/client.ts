import { CuadraError, type Sealer } from '@cuadra/shared';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Connection } from 'mongoose';
import { outboundFetch } from '../../lib/outbound.ts';
import { authorizationOf } from '../connections/credential.ts';

/** How long one request to an outside MCP server may take. */
const MCP_TIMEOUT_MS = 30_000;

/**
 * A session with an outside MCP server through the official client (Streamable HTTP), its
 * `Authorization` taken from the server's connection (refreshed when due), requests only to
 * public addresses (lib/outbound.ts). The session is closed after `work`.
 */
export async function withMcpClient<T>(db: Connection, workspace: string, server: { url: string; connection_id: string | null }, sealer: Sealer | null, work: (client: Client) => Promise<T>): Promise<T> {
  const authorization = server.connection_id ? await authorizationOf(db, workspace, server.connection_id, sealer) : null;
  const client = new Client({ name: 'cuadra-agents', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    fetch: outboundFetch() as never,
    requestInit: authorization ? { headers: { authorization } } : {},
  });
  try {
    await client.connect(transport, { timeout: MCP_TIMEOUT_MS });
  } catch (err) {
    // No session, so no call was made: the caller may try again (nothing to reconcile).
    throw new CuadraError('unavailable', `The MCP server at ${server.url} could not be reached or refused the session (${String((err as Error).message).slice(0, 200)}); nothing was done.`, { beforeAnyEffect: true });
  }
  try {
    return await work(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}
