/** Headers of a raw 2025-11-25 MCP request as `credential`. */
function mcpHeaders(credential: string, session?: string): Record<string, string> {
  return {
    authorization: `Bearer ${credential}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25',
    ...(session ? { 'mcp-session-id': session } : {}),
  };
}

/**
 * Opens a 2025-11-25 MCP session of `credential` at the gateway `base` with raw JSON-RPC posts
 * (initialize, then notifications/initialized). Answers the session id, or the refusal of the
 * initialize post (its status and body) when the gateway refused the credential.
 */
export async function mcpSession(base: string, credential: string): Promise<{ session: string } | { status: number; body: any }> {
  const init = await fetch(`${base}/mcp`, { method: 'POST', headers: mcpHeaders(credential), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }) });
  const text = await init.text();
  if (init.status !== 200) return { status: init.status, body: JSON.parse(text) };
  const session = init.headers.get('mcp-session-id')!;
  await fetch(`${base}/mcp`, { method: 'POST', headers: mcpHeaders(credential, session), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }).then((r) => r.text());
  return { session };
}

/** One raw JSON-RPC request in an MCP session; `paramsText` is sent as given (JSON text). `body` is the whole answer (a refusal has no `result`). */
export async function mcpRequest(base: string, credential: string, session: string, method: string, paramsText: string): Promise<{ status: number; result: any; body: any }> {
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers: mcpHeaders(credential, session), body: `{"jsonrpc":"2.0","id":7,"method":${JSON.stringify(method)},"params":${paramsText}}` });
  const text = await res.text();
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  const body = JSON.parse(data);
  return { status: res.status, result: body.result, body };
}
