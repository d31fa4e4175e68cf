import { CuadraError, type Logger } from '@cuadra/shared';
import express from 'express';
import type { Redis } from 'ioredis';
import getRawBody from 'raw-body';
import { sendRefusal } from './http.ts';
import type { IdentityStore } from './identity/store.ts';
import { formLimited } from './marketing-public.ts';
import { Throttle, throttleQuotas } from './oauth/throttle.ts';
import { clientAddress } from './pages/html.ts';

/** A workspace's id as `newId('ws')` makes it (never a slug: slugs have no `_` or capitals). */
const WORKSPACE_ID = /^ws_[A-Za-z0-9_-]{16}$/;
/** Largest booking form accepted (a name, an e-mail, a few answers). */
const MAX_BODY = 16 * 1024;
/** Response headers passed back from the projects service (never a cookie: these pages share the app's origin). */
const PASSED = ['content-type', 'content-security-policy', 'cache-control', 'x-content-type-options', 'referrer-policy', 'location', 'x-frame-options'];

/**
 * The public booking page `/book/<workspace slug>/<booking type slug>` (issue 35): no sign-in. The
 * gateway owns workspaces, so it turns the slug into the workspace and forwards to the projects
 * service's `/public/book/<workspace id>/<type>` with the visitor's address (set here, never read
 * from the request); no credential or cookie is forwarded. Bookings (POST) are counted before the
 * body is read, per visitor address and per workspace, like the site forms: over either, 429 with
 * Retry-After; Redis unreachable, 503 — never an unlimited post.
 */
export function bookingPublic(opts: { projectsUrl: string | undefined; identity: IdentityStore; log: Logger; publicUrl: string; redis: Redis }): express.Router {
  const router = express.Router();
  const quotas = throttleQuotas();
  const throttles = { address: new Throttle(opts.redis, 'booking-form-addr', quotas.bookingForm), workspace: new Throttle(opts.redis, 'booking-form-ws', quotas.bookingFormWorkspace) };
  const notFound = (res: express.Response) => res.status(404).set({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'", 'cache-control': 'no-store' })
    .send('<!doctype html>\n<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Página no encontrada</title></head><body><main><h1>Página no encontrada</h1><p>Esta página de reservas no existe.</p></main></body></html>');

  const forward: express.RequestHandler = async (req, res) => {
    if (!opts.projectsUrl) return sendRefusal(res, new CuadraError('unavailable', 'The booking service is not configured.'), opts);
    const ws = await opts.identity.workspaceBySlug(String(req.params.slug)).catch(() => undefined);
    if (ws === undefined) return sendRefusal(res, new CuadraError('unavailable', 'The page could not be reached; try again shortly.'), opts);
    if (!ws) {
      // A site's booking block links by the workspace's id (the marketing service does not hold slugs,
      // which are the gateway's): send the visitor on to the page's own address, the slug's.
      const slug = WORKSPACE_ID.test(String(req.params.slug)) ? await opts.identity.slugOf(String(req.params.slug)).catch(() => undefined) : null;
      if (slug === undefined) return sendRefusal(res, new CuadraError('unavailable', 'The page could not be reached; try again shortly.'), opts);
      if (!slug || req.method === 'POST') return notFound(res);
      const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
      return res.status(308).set({ location: `/book/${encodeURIComponent(slug)}/${encodeURIComponent(String(req.params.type))}${query}`, 'cache-control': 'no-store' }).end();
    }
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      let wait: number | null;
      try {
        wait = (await throttles.address.hit(clientAddress(req))) ?? (await throttles.workspace.hit(ws.id));
      } catch (err) {
        opts.log.error({ err }, 'booking form limit unreachable');
        return formLimited(res, 503, null);
      }
      if (wait !== null) return formLimited(res, 429, wait);
      try {
        body = await getRawBody(req, { limit: MAX_BODY });
      } catch {
        return sendRefusal(res, new CuadraError('body_too_large', 'The form is too large.'), opts);
      }
    }
    const headers: Record<string, string> = { 'x-cuadra-client-ip': req.socket.remoteAddress ?? '', 'x-cuadra-public-path': `/book/${req.params.slug}/${req.params.type}` };
    for (const h of ['content-type', 'user-agent', 'accept-language']) {
      const v = req.header(h);
      if (v) headers[h] = v;
    }
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    let answer: Response;
    try {
      answer = await fetch(`${opts.projectsUrl}/public/book/${encodeURIComponent(ws.id)}/${encodeURIComponent(String(req.params.type))}${query}`, {
        method: req.method === 'HEAD' ? 'GET' : req.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(15_000),
      });
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
  router.get('/book/:slug/:type', forward).post('/book/:slug/:type', forward);
  return router;
}
