import {
  assertReachesSomeTool, CuadraError, DEFAULT_MAX_INPUT_BYTES, scopeFor, scopesReach, toCuadraError,
  type Logger, type Principal,
} from '@cuadra/shared';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, type AuthInfo } from '@modelcontextprotocol/server';
import { Router, type Request as ExpressRequest, type Response as ExpressResponse } from 'express';
import getRawBody from 'raw-body';
import type { Catalog } from '../catalog.ts';
import { sendRefusal, type Challenge } from '../http.ts';
import { InvokePipeline, type RateCount } from '../pipeline.ts';
import { createMcpServer, type McpCaller } from './server.ts';
import { McpSessions } from './sessions.ts';
import { sendWebResponse, toWebRequest } from './web.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS-rebinding guard: a browser page may reach `/mcp` only from the service's own origin or
 * from loopback. Requests without `Origin` (programs, not browsers) are allowed.
 */
export function originAllowed(origin: string | undefined, publicUrl: string): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // includes the opaque origin "null"
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return url.origin === new URL(publicUrl).origin || LOOPBACK_HOSTS.has(url.hostname);
}

/** Where the MCP endpoint's protected-resource metadata lives (RFC 9728, path-aware). */
export function mcpResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource/mcp`;
}

function jsonRpcError(res: ExpressResponse, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** JSON-RPC requests in a POST body (one, or a batch). */
function requestsIn(body: unknown): { method?: unknown; params?: { name?: unknown } }[] {
  const list = Array.isArray(body) ? body : [body];
  return list.filter((m): m is { method?: unknown; params?: { name?: unknown } } => typeof m === 'object' && m !== null);
}

/**
 * `/mcp`: the one pipeline for AI assistants (CONTRACT.md §7), over Streamable HTTP, for
 * protocol revision 2026-07-28 (stateless: every request carries its own envelope) and
 * 2025-11-25 (`initialize`, sessions). Also answers the gateway's own catalog tools
 * (`tools.search`, `tools.describe`) on REST.
 *
 * Every HTTP request is checked here before the SDK sees it: Origin, credential (401 with the
 * OAuth challenge), the rate limit (one count per HTTP request, whatever its method — `initialize`,
 * `tools/list`, a notification, a GET stream — with the same limiter as REST; over it, 429
 * `rate_limited` with `Retry-After`, except that a body of only `tools/call`s gets the refusal as
 * their tool result, CONTRACT.md §7; the RateLimit headers on every answer), `X-Tenant-Id`, the
 * endpoint's scope, the body's size, and — for OAuth
 * tokens — a `tools/call` whose tool needs a scope the token lacks is answered 403
 * `insufficient_scope` with a step-up challenge, as the MCP authorization spec asks.
 */
export function mcpRouter(deps: { pipeline: InvokePipeline; catalog: Catalog; publicUrl: string; log: Logger }): Router {
  const { pipeline, catalog, publicUrl, log } = deps;
  const router = Router();
  const sessions = new McpSessions();
  const newServer = () => createMcpServer({ pipeline, catalog, log, publicUrl });
  const modern = createMcpHandler(() => newServer(), {
    legacy: 'reject',
    onerror: (err) => log.debug({ err }, 'mcp request refused by the protocol layer'),
  });
  const mcpUrl = `${publicUrl}/mcp`;
  const metadataUrl = mcpResourceMetadataUrl(publicUrl);
  // The largest tool input, plus room for the JSON-RPC envelope around it.
  const bodyLimit = Math.max(DEFAULT_MAX_INPUT_BYTES, ...catalog.entries.map((e) => e.max_input_bytes)) + 64 * 1024;

  // `scope` names the narrowest scope that serves MCP (listing and reads); writes step up to `tools`.
  const challenge: Challenge = (error) => {
    if (error.code === 'unauthenticated') return `Bearer resource_metadata="${metadataUrl}", scope="tools:read"`;
    if (error.code === 'insufficient_scope') {
      const scope = (error.extra as { scope?: string }).scope ?? 'tools:read';
      return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${metadataUrl}", error_description="${error.message.replace(/"/g, "'")}"`;
    }
    return undefined;
  };
  const refuse = (res: ExpressResponse, err: unknown): void => sendRefusal(res, err, { publicUrl, log, challenge });

  /** The scope a `tools/call` in this body needs and the token lacks, if any. */
  function missingScope(principal: Principal, body: unknown): string | undefined {
    if (principal.scopes === null) return undefined; // API keys are limited by role and patterns instead
    for (const message of requestsIn(body)) {
      if (message.method !== 'tools/call' || typeof message.params?.name !== 'string') continue;
      const entry = catalog.get(message.params.name);
      if (entry && !scopesReach(principal, scopeFor(entry))) return scopeFor(entry);
    }
    return undefined;
  }

  async function readBody(req: ExpressRequest): Promise<string> {
    try {
      return await getRawBody(req, { limit: bodyLimit, encoding: 'utf8' });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw new CuadraError('body_too_large', `The request is larger than ${bodyLimit} bytes.`);
      throw new CuadraError('invalid_input', 'The request body could not be read.', { field: '', cause: err });
    }
  }

  // GET, POST and DELETE only (Streamable HTTP), as routes: the gateway's 405 (with `Allow`) answers any other method.
  const serve = async (req: ExpressRequest, res: ExpressResponse) => {
    if (!originAllowed(req.header('origin'), publicUrl)) return jsonRpcError(res, 403, -32600, 'Origin not allowed.');

    const authorization = req.header('authorization');
    let principal: Principal;
    let counted: RateCount;
    try {
      // Counted once per HTTP request (with the credential check in one round trip when it can be); a tools/call in it spends this count, not another.
      const checked = await pipeline.authenticateCounted(authorization);
      principal = checked.principal;
      counted = checked.count;
      const rateHeaders = 'headers' in counted ? counted.headers : (toCuadraError(counted.refusal).extra as { headers?: Record<string, string> }).headers ?? {};
      for (const [k, v] of Object.entries(rateHeaders)) res.setHeader(k, v);
      for (const [k, v] of Object.entries(await pipeline.versionFor(principal, req.header('cuadra-version')))) res.setHeader(k, v);
      InvokePipeline.checkTenant(principal, req.header('x-tenant-id'));
      // A `sites.edit` token reaches the sites tools here as on REST; `sites.login` alone reaches none.
      assertReachesSomeTool(principal);
    } catch (err) {
      return refuse(res, err);
    }

    let raw: string | undefined;
    let parsed: unknown;
    if (req.method === 'POST') {
      try {
        raw = await readBody(req);
      } catch (err) {
        return refuse(res, err);
      }
      try {
        parsed = JSON.parse(raw);
      } catch {
        parsed = undefined; // the SDK answers the JSON-RPC parse error
      }
      const scope = missingScope(principal, parsed);
      if (scope) return refuse(res, new CuadraError('insufficient_scope', `This tool needs the "${scope}" scope.`, { extra: { scope } }));
    }
    if ('refusal' in counted) {
      // Over the limit: tools/call answers the refusal as its tool result (and is on the ledger); anything else is refused here.
      const messages = requestsIn(parsed);
      if (messages.length === 0 || messages.some((m) => m.method !== 'tools/call')) return refuse(res, counted.refusal);
    }

    // The SDK reads the request's signal only while an answer is still being written (a `subscriptions/listen`
    // stream, the legacy stateless leg's teardown): the caller hanging up before the end aborts it; an answered
    // response closes too, and aborting then would only build a DOMException with its stack trace per call (issue
    // 33, the hop — as the REST invoke).
    const aborted = new AbortController();
    res.once('close', () => {
      if (!res.writableEnded) aborted.abort();
    });
    const caller: McpCaller = {
      principal,
      authorization: authorization!,
      tenant: req.header('x-tenant-id'),
      idempotencyKey: req.header('idempotency-key'),
      approvalId: req.header('x-approval-id'),
      counted,
    };
    const authInfo: AuthInfo = {
      token: /^Bearer\s+(\S+)/i.exec(authorization!)![1],
      clientId: principal.actor.id,
      scopes: principal.scopes ?? [],
      extra: { caller },
    };
    try {
      const request = toWebRequest(req, mcpUrl, raw, aborted.signal);
      const options = { authInfo, parsedBody: parsed };
      let response: Response;
      if (!(await isLegacyRequest(request, parsed))) {
        response = await modern.fetch(request, options);
      } else {
        const sessionId = req.header('mcp-session-id');
        if (sessionId !== undefined) {
          const transport = sessions.find(sessionId, principal.credential_id);
          if (!transport) return jsonRpcError(res, 404, -32001, 'Session not found: send initialize again.');
          response = await transport.handleRequest(request, options);
        } else if (req.method === 'POST' && requestsIn(parsed).some((m) => isInitializeRequest(m))) {
          const server = newServer();
          const transport = await sessions.open(principal.credential_id, server);
          response = await transport.handleRequest(request, options);
          if (!transport.sessionId) await server.close(); // the handshake failed: no session was opened
        } else {
          return jsonRpcError(res, 400, -32600, 'Send initialize first (protocol 2025-11-25), then the Mcp-Session-Id header; or use protocol 2026-07-28, which needs no session.');
        }
      }
      await sendWebResponse(res, response);
    } catch (err) {
      log.error({ err }, 'mcp request failed');
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal error.');
      else res.end();
    }
  };
  router.route('/mcp').get(serve).post(serve).delete(serve);

  return router;
}
