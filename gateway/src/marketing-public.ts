import { CuadraError, type Logger } from '@cuadra/shared';
import express from 'express';
import type { Redis } from 'ioredis';
import getRawBody from 'raw-body';
import { sendRefusal } from './http.ts';
import { Throttle, throttleQuotas } from './oauth/throttle.ts';
import { clientAddress } from './pages/html.ts';

/** Largest body a public marketing page takes (a lead form, an unsubscribe post). */
const MAX_BODY = 64 * 1024;

/**
 * Response headers passed back from the marketing service. No `set-cookie`: these pages share the
 * gateway's origin, and a cookie set here could shadow the app's session cookie.
 */
const PASSED = ['content-type', 'content-security-policy', 'cache-control', 'x-content-type-options', 'referrer-policy', 'location', 'x-frame-options', 'permissions-policy'];

/** The page a visitor gets when a public form's posts are over their limit (nothing of the post was kept). */
export function formLimited(res: express.Response, status: 429 | 503, wait: number | null): void {
  const [title, text] = status === 429
    ? ['Demasiados envíos', `Recibimos demasiados formularios en poco tiempo. Espera ${Math.ceil((wait ?? 60) / 60)} minuto(s) y vuelve a intentarlo.`]
    : ['No pudimos recibir tus datos', 'Inténtalo de nuevo en unos minutos.'];
  if (wait !== null) res.setHeader('Retry-After', String(wait));
  res.status(status).set({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'", 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' })
    .send(`<!doctype html>\n<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`);
}

/**
 * The public pages the marketing service serves, reached through the gateway (the one public
 * address): `/u/<token>` (one-click unsubscribe, RFC 8058), `/c/<token>` (double opt-in), and
 * `/s/<site>/…` (hosted sites). No credential is read or forwarded: the `Authorization` header and
 * the gateway's own cookies never reach the service, and the visitor's address goes as
 * `x-cuadra-client-ip` (set here, never taken from the request).
 */
export function marketingPublic(opts: { marketingUrl: string | undefined; log: Logger; publicUrl: string; redis: Redis }): express.Router {
  const router = express.Router();
  const quotas = throttleQuotas();
  const formThrottles = { address: new Throttle(opts.redis, 'site-form-addr', quotas.siteForm), site: new Throttle(opts.redis, 'site-form-site', quotas.siteFormSite) };
  /**
   * Posts to a hosted site's forms are counted before anything is read or forwarded, per visitor
   * address (all sites) and per site (all visitors), in Redis like every other limit of the gateway:
   * over either, the visitor gets 429 with Retry-After and the service never sees the post. Redis
   * unreachable: 503, never an unlimited post.
   */
  const limitForms: express.RequestHandler = async (req, res, next) => {
    const slug = /^\/s\/([a-z0-9-]+)/.exec(req.path)?.[1] ?? '';
    let wait: number | null;
    try {
      wait = (await formThrottles.address.hit(clientAddress(req))) ?? (await formThrottles.site.hit(slug));
    } catch (err) {
      opts.log.error({ err }, 'site form limit unreachable');
      return formLimited(res, 503, null);
    }
    if (wait !== null) return formLimited(res, 429, wait);
    next();
  };
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
  router.get(/^\/s\/[a-z0-9-]+(\/.*)?$/, forward).post(/^\/s\/[a-z0-9-]+(\/.*)?$/, limitForms, forward);
  return router;
}
