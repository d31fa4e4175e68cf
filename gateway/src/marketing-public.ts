import { CuadraError, type Logger } from '@cuadra/shared';
import express from 'express';
import getRawBody from 'raw-body';
import { sendRefusal } from './http.ts';

/** Largest body a public marketing page takes (a lead form, an unsubscribe post). */
const MAX_BODY = 64 * 1024;

/**
 * Response headers passed back from the marketing service. No `set-cookie`: these pages share the
 * gateway's origin, and a cookie set here could shadow the app's session cookie.
 */
const PASSED = ['content-type', 'content-security-policy', 'cache-control', 'x-content-type-options', 'referrer-policy', 'location', 'x-frame-options', 'permissions-policy'];

/**
 * The public pages the marketing service serves, reached through the gateway (the one public
 * address): `/u/<token>` (one-click unsubscribe, RFC 8058), `/c/<token>` (double opt-in), and
 * `/s/<site>/…` (hosted sites). No credential is read or forwarded: the `Authorization` header and
 * the gateway's own cookies never reach the service, and the visitor's address goes as
 * `x-cuadra-client-ip` (set here, never taken from the request).
 */
export function marketingPublic(opts: { marketingUrl: string | undefined; log: Logger; publicUrl: string }): express.Router {
  const router = express.Router();
  const forward: express.RequestHandler = async (req, res) => {
    if (!opts.marketingUrl) return sendRefusal(res, new CuadraError('unavailable', 'The marketing service is not configured.'), opts);
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      try {
        body = await getRawBody(req, { limit: MAX_BODY });
      } catch {
        return sendRefusal(res, new CuadraError('body_too_large', 'The form is too large.'), opts);
      }
    }
    const headers: Record<string, string> = { 'x-cuadra-client-ip': req.socket.remoteAddress ?? '' };
    // Never the visitor's cookies: on this origin they are the app's session (a credential).
    for (const h of ['content-type', 'user-agent', 'accept-language']) {
      const v = req.header(h);
      if (v) headers[h] = v;
    }
    let answer: Response;
    try {
      answer = await fetch(`${opts.marketingUrl}/public${req.originalUrl}`, { method: req.method === 'HEAD' ? 'GET' : req.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    } catch {
      return sendRefusal(res, new CuadraError('unavailable', 'The page could not be reached; try again shortly.'), opts);
    }
    res.status(answer.status);
    for (const h of PASSED) {
      const v = answer.headers.get(h);
      if (v) res.setHeader(h, v);
    }
    res.end(Buffer.from(await answer.arrayBuffer()));
  };
  // GET (HEAD with it) and POST only: the gateway's 405 guard reads these routes' methods.
  router.get(/^\/(u|c)\/[^/]+$/, forward).post(/^\/(u|c)\/[^/]+$/, forward);
  router.get(/^\/s\/[a-z0-9-]+(\/.*)?$/, forward).post(/^\/s\/[a-z0-9-]+(\/.*)?$/, forward);
  return router;
}
