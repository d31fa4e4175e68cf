import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An outside OAuth 2 provider for the tests, as Google or Microsoft is to a mail account: a token
 * endpoint for the refresh grant (RFC 6749 §6; refresh tokens rotate, and a used one is refused as
 * a provider that detects reuse does) and a token introspection endpoint (RFC 7662) the mail
 * servers ask whether an access token is live and whose it is. Everything it was sent is kept, so a
 * test can say what reached it.
 */
export interface TestOAuthProvider {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  tokenUrl: string;
  introspectionUrl: string;
  clientId: string;
  clientSecret: string;
  /** Refresh grants answered with new tokens; refresh tokens presented twice (reuse). */
  refreshes: number;
  reused: number;
  /** Every request body it received, in order, with its path. */
  received: { path: string; body: string }[];
  /** Makes an access token live for `user` (it answers active: true for it). */
  issue(token: string, user: string): void;
  /** Ends an access token (expired or revoked at the provider). */
  expire(token: string): void;
  /** The live refresh token (the one a refresh must present). */
  refreshToken: string;
  stop(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

/**
 * Starts the provider. `prefix` names its tokens (`<prefix>-at-<n>`, `<prefix>-rt-<n>`); each
 * refresh issues access token n + 1 for `user`, valid `expiresIn` seconds, and rotates the refresh
 * token. A refresh answer waits `refreshDelayMs` (a real provider takes its time; two refreshes at
 * once would overlap).
 */
export async function startOAuthProvider(opts: { prefix: string; user: string; expiresIn?: number; refreshDelayMs?: number }): Promise<TestOAuthProvider> {
  const live = new Map<string, string>();
  let n = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    provider.received.push({ path: req.url ?? '', body });
    const form = new URLSearchParams(body);
    if (req.method === 'POST' && req.url === '/token') {
      if (form.get('grant_type') !== 'refresh_token') return json(res, 400, { error: 'unsupported_grant_type' });
      if (form.get('client_id') !== provider.clientId || form.get('client_secret') !== provider.clientSecret) return json(res, 401, { error: 'invalid_client' });
      const presented = form.get('refresh_token') ?? '';
      if (presented !== provider.refreshToken) {
        provider.reused++;
        return json(res, 400, { error: 'invalid_grant' });
      }
      n++;
      provider.refreshToken = `${opts.prefix}-rt-${n + 1}`;
      const access = `${opts.prefix}-at-${n}`;
      live.set(access, opts.user);
      await new Promise((r) => setTimeout(r, opts.refreshDelayMs ?? 0));
      provider.refreshes++;
      return json(res, 200, { access_token: access, token_type: 'Bearer', expires_in: opts.expiresIn ?? 3600, refresh_token: provider.refreshToken });
    }
    if (req.method === 'POST' && req.url === '/introspect') {
      const user = live.get(form.get('token') ?? '');
      // RFC 7662 §2.2: an inactive token is {active: false} and nothing more.
      return json(res, 200, user ? { active: true, username: user, token_type: 'Bearer' } : { active: false });
    }
    return json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider: TestOAuthProvider = {
    url, tokenUrl: `${url}/token`, introspectionUrl: `${url}/introspect`, clientId: `${opts.prefix}-client`, clientSecret: `${opts.prefix}-client-secret`,
    refreshes: 0, reused: 0, received: [], refreshToken: `${opts.prefix}-rt-1`,
    issue: (token, user) => void live.set(token, user),
    expire: (token) => void live.delete(token),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return provider;
}
