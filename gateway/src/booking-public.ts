import { CuadraError, toCuadraError, type Logger, type Principal, type ToolAnswer } from '@cuadra/shared';
import express from 'express';
import type { Redis } from 'ioredis';
import getRawBody from 'raw-body';
import { sendRefusal } from './http.ts';
import type { IdentityStore } from './identity/store.ts';
import { formLimited } from './marketing-public.ts';
import { Throttle, throttleQuotas } from './oauth/throttle.ts';
import { clientAddress } from './pages/html.ts';
import { PipelineRefusal, type InvokePipeline } from './pipeline.ts';

/** A workspace's id as `newId('ws')` makes it (never a slug: slugs have no `_` or capitals). */
const WORKSPACE_ID = /^ws_[A-Za-z0-9_-]{16}$/;
/** Largest booking form accepted (a name, an e-mail, a few answers). */
const MAX_BODY = 16 * 1024;
/** Response headers passed back from the projects service (never a cookie: these pages share the app's origin). */
const PASSED = ['content-type', 'content-security-policy', 'cache-control', 'x-content-type-options', 'referrer-policy', 'location', 'x-frame-options'];

/** The one tool the booking page's visitor reaches. */
const VISITOR_TOOLS = ['bookings.create'];

/**
 * The principal a visitor of a workspace's booking page acts as: role `visitor`, reaching
 * `bookings.create` alone, with no person behind it (it decides nothing) and one credential per
 * workspace (`visitor:booking-page`: the namespace of the forms' one-time tokens). Made here for
 * one call and never handed to anyone, so its calls pass the pipeline like any other: policies
 * select it by tool, by role `visitor` or by actor type `visitor`; the ledger names it.
 */
export function bookingVisitor(workspace: string, typeSlug: string, country?: string | null): Principal {
  return {
    workspace, role: 'visitor', role_patterns: VISITOR_TOOLS, actor: { type: 'visitor', id: `booking-page/${typeSlug}` },
    credential_id: 'visitor:booking-page', scopes: null, patterns: VISITOR_TOOLS, person: null,
    // The workspace's country, as every other principal states it: the booking's invoice is made under its tax regime.
    ...(country ? { country } : {}),
  };
}

/**
 * The public booking page `/book/<workspace slug>/<booking type slug>` (issue 35): no sign-in. The
 * gateway owns workspaces, so it turns the slug into the workspace and forwards to the projects
 * service's `/public/book/<workspace id>/<type>` with the visitor's address (set here, never read
 * from the request); no credential or cookie is forwarded. Bookings (POST) are counted before the
 * body is read, per visitor address and per workspace, like the site forms: over either, 429 with
 * Retry-After; Redis unreachable, 503 — never an unlimited post. A booking is `bookings.create` run
 * through the invoke pipeline as {@link bookingVisitor}, its Idempotency-Key the form's one-time
 * token: the projects service turns the form into the input, the pipeline runs it, and the service
 * draws the page of the outcome.
 */
export function bookingPublic(opts: { projectsUrl: string | undefined; identity: IdentityStore; log: Logger; publicUrl: string; redis: Redis; pipeline: InvokePipeline }): express.Router {
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
    const page = `${opts.projectsUrl}/public/book/${encodeURIComponent(ws.id)}/${encodeURIComponent(String(req.params.type))}`;
    const call = (url: string, init: { method: string; body?: Buffer | string; headers?: Record<string, string> }) =>
      fetch(url, { ...init, headers: { ...headers, ...init.headers }, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    let answer: Response;
    try {
      if (req.method !== 'POST') {
        answer = await call(`${page}${query}`, { method: 'GET' });
      } else {
        answer = await call(`${page}/input`, { method: 'POST', body });
        // The form made an input (JSON); anything else is the service's own page (unknown type, a form to correct).
        if (answer.status === 200 && (answer.headers.get('content-type') ?? '').startsWith('application/json')) {
          const { input, token } = (await answer.json()) as { input: Record<string, unknown>; token: string };
          const outcome = await bookAsVisitor(ws.id, String(req.params.type), input, token, ws.country);
          const form = Object.fromEntries(new URLSearchParams(body!.toString('utf8')));
          answer = await call(`${page}/outcome`, { method: 'POST', body: JSON.stringify({ form, outcome }), headers: { 'content-type': 'application/json' } });
        }
      }
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

  /** Runs the page's bookings.create through the pipeline; answers what the page needs to say of it. */
  const bookAsVisitor = async (workspace: string, typeSlug: string, input: Record<string, unknown>, token: string, country: string | null) => {
    try {
      const result = await opts.pipeline.invoke({
        authorization: undefined, principal: bookingVisitor(workspace, typeSlug, country), tool: 'bookings.create', body: async () => input,
        idempotencyKey: `booking-form:${token}`,
        // Counted already, before the form was read: per visitor address and per workspace (above).
        counted: { headers: {} },
      });
      if (result.status === 202) return { status: 202 };
      return { status: 200, booking: (result.body as ToolAnswer).output.booking };
    } catch (err) {
      const error = err instanceof PipelineRefusal ? err.error : toCuadraError(err);
      if (!(err instanceof PipelineRefusal)) opts.log.error({ err }, 'public booking failed');
      return { status: 400, error: { code: error.code, ...(error.field !== undefined ? { field: error.field } : {}) } };
    }
  };
  router.get('/book/:slug/:type', forward).post('/book/:slug/:type', forward);
  return router;
}
