import { CuadraError, type Logger } from '@cuadra/shared';
import express from 'express';
import type { Redis } from 'ioredis';
import getRawBody from 'raw-body';
import { sendRefusal } from './http.ts';
import { Throttle, throttleQuotas } from './oauth/throttle.ts';
import type { AccessTokens } from './oauth/tokens.ts';
import { clientAddress } from './pages/html.ts';

/** Set by the sign-in route only: the marketing service answers a verified visitor to it alone. */
const SITE_LOGIN_HEADER = 'x-cuadra-site-login';

/** The cookie holding a site visitor's ID token (path-scoped to that site). */
const SITE_COOKIE = 'cuadra_site_visitor';

/** The site visitor cookie's value, if the browser sent one that looks like a JWT. */
function siteCookie(req: express.Request): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...rest] = part.trim().split('=');
    if (k === SITE_COOKIE) {
      const v = rest.join('=');
      return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(v) && v.length < 4096 ? v : null;
    }
  }
  return null;
}

/** Largest body a public marketing page takes (a lead form, an unsubscribe post). */
const MAX_BODY = 64 * 1024;

/**
 * Response headers passed back from the marketing service. No `set-cookie`: these pages share the
 * gateway's origin, and a cookie set here could shadow the app's session cookie.
 */
const PASSED = ['content-type', 'content-security-policy', 'cache-control', 'x-content-type-options', 'referrer-policy', 'location', 'x-frame-options', 'permissions-policy'];

/** Seconds a JSON post refused while the form limit's Redis is down is asked to wait (`Retry-After`). */
const FORM_OUTAGE_RETRY_SECONDS = 5;

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
export function marketingPublic(opts: { marketingUrl: string | undefined; log: Logger; publicUrl: string; redis: Redis; tokens: Pick<AccessTokens, 'signIdToken' | 'siteVisitorOf' | 'revokeIdToken'> }): express.Router {
  const router = express.Router();
  const quotas = throttleQuotas();
  const formThrottles = { address: new Throttle(opts.redis, 'site-form-addr', quotas.siteForm), site: new Throttle(opts.redis, 'site-form-site', quotas.siteFormSite) };
  /**
   * Posts to a hosted site's forms are counted before anything is read or forwarded, per visitor
   * address (all sites) and per site (all visitors), in Redis like every other limit of the gateway:
   * over either, the visitor gets 429 with Retry-After and the service never sees the post. Redis
   * unreachable: 503, never an unlimited post. A browser's form gets a page; a JSON post (an app
   * calling sign-in or the revocation endpoint) the contract's error, `rate_limited` or `unavailable`.
   */
  const limitForms: express.RequestHandler = async (req, res, next) => {
    const slug = /^\/s\/([a-z0-9-]+)/.exec(req.path)?.[1] ?? '';
    const json = (req.header('content-type') ?? '').startsWith('application/json');
    let wait: number | null;
    try {
      wait = (await formThrottles.address.hit(clientAddress(req))) ?? (await formThrottles.site.hit(slug));
    } catch (err) {
      opts.log.error({ err }, 'site form limit unreachable');
      if (json) return sendRefusal(res, new CuadraError('unavailable', 'The form limit cannot be checked right now; nothing was done. Try again shortly.', { extra: { headers: { 'Retry-After': String(FORM_OUTAGE_RETRY_SECONDS) } } }), opts);
      return formLimited(res, 503, null);
    }
    if (wait !== null) {
      if (json) return sendRefusal(res, new CuadraError('rate_limited', `Too many posts to this site's forms; wait ${wait} s and retry.`, { extra: { headers: { 'Retry-After': String(wait) } } }), opts);
      return formLimited(res, 429, wait);
    }
    next();
  };
  /** Sends the request on to the marketing service; null when a refusal was already answered. */
  const callService = async (req: express.Request, res: express.Response, extra: Record<string, string> = {}): Promise<Response | null> => {
    if (!opts.marketingUrl) {
      sendRefusal(res, new CuadraError('unavailable', 'The marketing service is not configured.'), opts);
      return null;
    }
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      try {
        body = await getRawBody(req, { limit: MAX_BODY });
      } catch {
        sendRefusal(res, new CuadraError('body_too_large', 'The form is too large.'), opts);
        return null;
      }
    }
    const headers: Record<string, string> = { 'x-cuadra-client-ip': req.socket.remoteAddress ?? '', ...extra };
    // Never the visitor's cookies: on this origin they are the app's session (a credential).
    for (const h of ['content-type', 'user-agent', 'accept-language']) {
      const v = req.header(h);
      if (v) headers[h] = v;
    }
    try {
      return await fetch(`${opts.marketingUrl}/public${req.originalUrl}`, { method: req.method === 'HEAD' ? 'GET' : req.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    } catch {
      sendRefusal(res, new CuadraError('unavailable', 'The page could not be reached; try again shortly.'), opts);
      return null;
    }
  };
  /** Sends the service's answer on to the visitor: its status, the headers a page may pass, its bytes. */
  const relay = async (answer: Response, res: express.Response): Promise<void> => {
    res.status(answer.status);
    for (const h of PASSED) {
      const v = answer.headers.get(h);
      if (v) res.setHeader(h, v);
    }
    res.end(Buffer.from(await answer.arrayBuffer()));
  };
  const forward: express.RequestHandler = async (req, res) => {
    const answer = await callService(req, res);
    if (!answer) return;
    await relay(answer, res);
  };
  /**
   * `sites.login`: the marketing service checks the visitor's e-mailed code and answers who was
   * verified — to this gateway only, which signs the ID token for that site with its one token key
   * (no second minter) and gives the visitor the token, never the service's answer.
   */
  const signIn: express.RequestHandler = async (req, res) => {
    const slug = /^\/s\/([a-z0-9-]+)\//.exec(req.path)![1];
    // Only this route says it will sign: the service answers who was verified to no other request.
    const answer = await callService(req, res, { [SITE_LOGIN_HEADER]: 'sign' });
    if (!answer) return;
    const text = await answer.text();
    res.setHeader('cache-control', 'no-store');
    if (answer.status !== 200) return res.status(answer.status).type('application/json').send(text);
    let verified: { slug?: unknown; email?: unknown; subject?: unknown } | undefined;
    try {
      verified = (JSON.parse(text) as { verified?: typeof verified }).verified;
    } catch { /* handled below */ }
    if (!verified || verified.slug !== slug || typeof verified.email !== 'string' || typeof verified.subject !== 'string') {
      opts.log.error({ status: answer.status }, 'site sign-in: the marketing service answered an unexpected body');
      return sendRefusal(res, new CuadraError('unavailable', 'Could not sign in; try again shortly.'), opts);
    }
    const { token, expiresIn } = opts.tokens.signIdToken({ site: slug, subject: verified.subject, email: verified.email, authTime: Math.floor(Date.now() / 1000) });
    // OpenID Connect: an ID token says who the visitor is to the site; it is no access token (RFC 8693's N_A).
    res.status(200).json({ id_token: token, token_type: 'N_A', scope: 'sites.login', expires_in: expiresIn });
  };
  /**
   * The sign-in pages for a visitor's browser (plain forms, no script): the e-mail form and the code
   * form are the service's; when the code is right the service answers who was verified to this
   * route alone, and the gateway keeps the site's ID token in an HttpOnly cookie scoped to that
   * site's path (never the app's: the name and path differ, and the service never sees cookies),
   * then sends the visitor to the signed-in page (303).
   */
  const cookieOf = (slug: string, value: string, maxAge: number) =>
    `${SITE_COOKIE}=${value}; Path=/s/${slug}/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${opts.publicUrl.startsWith('https:') ? '; Secure' : ''}`;
  const signInPage: express.RequestHandler = async (req, res) => {
    const slug = /^\/s\/([a-z0-9-]+)\//.exec(req.path)![1];
    const answer = await callService(req, res, { [SITE_LOGIN_HEADER]: 'sign' });
    if (!answer) return;
    res.setHeader('cache-control', 'no-store');
    const verified = answer.status === 200 && (answer.headers.get('content-type') ?? '').startsWith('application/json')
      ? ((await answer.json().catch(() => null)) as { verified?: { slug?: unknown; email?: unknown; subject?: unknown } } | null)?.verified
      : undefined;
    if (answer.status !== 200) {
      res.status(answer.status);
      for (const h of PASSED) {
        const v = answer.headers.get(h);
        if (v) res.setHeader(h, v);
      }
      return res.end(Buffer.from(await answer.arrayBuffer()));
    }
    if (!verified || verified.slug !== slug || typeof verified.email !== 'string' || typeof verified.subject !== 'string') {
      opts.log.error({ status: answer.status }, 'site sign-in: the marketing service answered an unexpected body');
      return formLimited(res, 503, null);
    }
    const { token, expiresIn } = opts.tokens.signIdToken({ site: slug, subject: verified.subject, email: verified.email, authTime: Math.floor(Date.now() / 1000) });
    res.append('Set-Cookie', cookieOf(slug, token, expiresIn));
    res.redirect(303, `/s/${slug}/login`);
  };
  /** The signed-in page: the visitor named by a valid ID token of this site (checked here), else the e-mail form. */
  const signedInPage: express.RequestHandler = async (req, res) => {
    const slug = /^\/s\/([a-z0-9-]+)\//.exec(req.path)![1];
    const token = siteCookie(req);
    const visitor = token ? await opts.tokens.siteVisitorOf(token, slug) : null;
    const answer = await callService(req, res, visitor ? { 'x-cuadra-site-visitor': visitor.email } : {});
    if (!answer) return;
    await relay(answer, res);
  };
  /** Signing out ends the token itself (revoked until it would expire), not only the browser's copy of it. */
  const signOut: express.RequestHandler = async (req, res) => {
    const slug = /^\/s\/([a-z0-9-]+)\//.exec(req.path)![1];
    res.setHeader('cache-control', 'no-store');
    const token = siteCookie(req);
    try {
      if (token) await opts.tokens.revokeIdToken(token, slug);
    } catch (err) {
      opts.log.error({ err }, 'site sign-out: the token could not be revoked');
      return sendRefusal(res, new CuadraError('unavailable', 'Could not sign out; try again shortly.'), opts);
    }
    res.append('Set-Cookie', cookieOf(slug, '', 0));
    res.redirect(303, `/s/${slug}/login`);
  };
  /**
   * Token revocation (RFC 7009) of a visitor's ID token, for the site or app that holds it:
   * `POST /s/<slug>/login/revoke` with `token` (JSON or a form). 200 whether or not it was a token
   * of this site (§2.2: an invalid token is no error); from then on the gateway takes it for no one.
   */
  const revoke: express.RequestHandler = async (req, res) => {
    const slug = /^\/s\/([a-z0-9-]+)\//.exec(req.path)![1];
    res.setHeader('cache-control', 'no-store');
    let token: unknown;
    try {
      const text = (await getRawBody(req, { limit: 8 * 1024, encoding: 'utf8' })) as string;
      token = (req.header('content-type') ?? '').startsWith('application/x-www-form-urlencoded') ? new URLSearchParams(text).get('token') : (JSON.parse(text || '{}') as { token?: unknown }).token;
    } catch {
      return sendRefusal(res, new CuadraError('invalid_input', 'Send {"token": "<the ID token>"} as JSON or a form.', { field: '/token' }), opts);
    }
    if (typeof token !== 'string' || token.length === 0 || token.length > 4096) return sendRefusal(res, new CuadraError('invalid_input', 'Give the ID token to revoke in `token`.', { field: '/token' }), opts);
    try {
      await opts.tokens.revokeIdToken(token, slug);
    } catch (err) {
      opts.log.error({ err }, 'site token revocation failed');
      return sendRefusal(res, new CuadraError('unavailable', 'The revocation could not be completed (a store is unreachable); it may be recorded only in part. Ask again shortly (asking again is always safe).'), opts);
    }
    res.status(200).end();
  };
  router.get(/^\/s\/[a-z0-9-]+\/login$/, signedInPage);
  router.post(/^\/s\/[a-z0-9-]+\/login\/code$/, limitForms, signInPage);
  router.post(/^\/s\/[a-z0-9-]+\/login\/out$/, signOut);
  router.post(/^\/s\/[a-z0-9-]+\/login\/revoke$/, limitForms, revoke);
  // GET (HEAD with it) and POST only: the gateway's 405 guard reads these routes' methods.
  router.get(/^\/(u|c)\/[^/]+$/, forward).post(/^\/(u|c)\/[^/]+$/, forward);
  router.post(/^\/s\/[a-z0-9-]+\/login\/verify$/, limitForms, signIn);
  router.get(/^\/s\/[a-z0-9-]+(\/.*)?$/, forward).post(/^\/s\/[a-z0-9-]+(\/.*)?$/, limitForms, forward);
  return router;
}
