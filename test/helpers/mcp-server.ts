import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';

/**
 * A real outside MCP server for the tests, built with the official SDK (Streamable HTTP, both
 * protocol eras): it asks for `Authorization: Bearer <token>` (one token, or any a test accepts), lists two tools and counts each
 * call. `lookup_customer` (read-only) answers a record carrying a secret; `slow_note` waits until
 * the test releases it (to stop a process while a call is on its way).
 */
export async function startTestMcpServer(token: string | ((presented: string) => boolean)) {
  const accepts = typeof token === 'string' ? (t: string) => t === token : token;
  const calls: { tool: string; arguments: Record<string, unknown> }[] = [];
  const waiting: (() => void)[] = [];
  let onSlow: (() => void) | null = null;
  const newServer = () => {
    const server = new Server({ name: 'test-files', version: '1.2.3' }, { capabilities: { tools: {} } });
    const lookup = {
      name: 'lookup_customer', description: 'Look up a customer by e-mail.', annotations: { readOnlyHint: true },
      inputSchema: { type: 'object' as const, properties: { email: { type: 'string' } }, required: ['email'] },
    };
    const slow = {
      name: 'slow_note', description: 'Write a note (slowly).', annotations: { readOnlyHint: false },
      inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] },
    };
    server.setRequestHandler('tools/list', async () => ({ tools: [lookup, slow] }));
    server.setRequestHandler('tools/call', async (request) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      calls.push({ tool: request.params.name, arguments: args });
      if (request.params.name === 'lookup_customer') {
        const record = { name: 'Tienda Andina', email: String(args.email), api_token: 'sk-live-0123456789abcdefSECRET', portal_password: 'hunter2-portal' };
        return { content: [{ type: 'text', text: `Customer ${record.name}` }], structuredContent: record };
      }
      if (request.params.name === 'slow_note') {
        onSlow?.();
        await new Promise<void>((resolve) => waiting.push(resolve));
        return { content: [{ type: 'text', text: 'noted' }] };
      }
      return { content: [{ type: 'text', text: 'unknown tool' }], isError: true };
    });
    return server;
  };
  const handler = createMcpHandler(() => newServer(), { legacy: 'stateless' });
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const http = createServer(async (req, res) => {
    const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!presented || !accepts(presented)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const body = req.method === 'POST' ? await read(req) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    /** Resolves when a slow_note call arrives. */
    slowArrived: () => new Promise<void>((resolve) => { onSlow = resolve; }),
    releaseSlow: () => waiting.splice(0).forEach((r) => r()),
    close: () => new Promise<void>((resolve) => {
      waiting.splice(0).forEach((r) => r());
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}
