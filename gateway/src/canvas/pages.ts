import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { redisAnswers, type Logger } from '@cuadra/shared';
import express, { Router, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import type { PeopleStore } from '../identity/people.ts';
import type { IdentityStore } from '../identity/store.ts';
import type { AccessTokens } from '../oauth/tokens.ts';
import { Throttle, throttleQuotas } from '../oauth/throttle.ts';
import { clientAddress, CsrfGuard, escapeHtml, html, sendPage, type SafeHtml } from '../pages/html.ts';
import type { DashboardStore } from './store.ts';
import type { InvokePipeline } from '../pipeline.ts';
import { approvalPages } from '../pages/approvals.ts';
import { workspacePages } from '../pages/workspace.ts';
import { crmPages } from '../pages/crm.ts';
import { marketingPages } from '../pages/marketing.ts';
import { projectPages } from '../pages/projects.ts';
import { isOutage, sendUnavailablePage } from '../pages/unavailable.ts';
import { hasLangCookie, langAsked, localeOf, pageChrome, setLangCookie, switchHref, type Translator } from '../pages/i18n.ts';
import { APP_PAGES, sendAppPage, type AppPageKey } from '../pages/shell.ts';
import { PipelineRefusal } from '../pipeline.ts';
import { buildProducts } from '../catalog.ts';
import { homeDashboards } from './home.ts';
import { API_CATALOG_PATH, apiCatalogLink } from '../discovery/linkset.ts';

/** A browser session lasts 12 hours; the page's access token (minted per page view) one hour. */
const SESSION_TTL_SECONDS = 12 * 3600;
const SESSION_COOKIE = 'cuadra_session';
/** The OAuth client id the first-party pages act as (the ledger's actor id for their calls). */
export const WEB_CLIENT_ID = 'cuadra-web';
const sessionKey = (token: string) => `web:session:${createHash('sha256').update(token).digest('hex')}`;

interface Session { user: string; grant: string }

/** The page's own files, served from this origin with a content hash (no inline script, strict CSP). */
function loadAssets(): Map<string, { body: string; type: string; etag: string }> {
  const assets = new Map<string, { body: string; type: string; etag: string }>();
  for (const [name, type] of [['canvas.js', 'text/javascript'], ['canvas.css', 'text/css']] as const) {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}

function signInPage(t: Translator, input: { csrf: string; next: string; email?: string; error?: string; lead?: string }): SafeHtml {
  return html`
<h1>${t.t('signIn.heading')}</h1>
${input.lead ? html`<p>${input.lead}</p>` : ''}
${input.error ? html`<p class="error" role="alert" id="form-error">${input.error}</p>` : ''}
<form method="post" action="/app/sign-in" ${input.error ? html`aria-describedby="form-error"` : ''}>
  <input type="hidden" name="csrf" value="${input.csrf}">
  <input type="hidden" name="next" value="${input.next}">
  <label for="email">${t.t('signIn.email')}</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}">
  <label for="password">${t.t('signIn.password')}</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit" class="primary">${t.t('signIn.submit')}</button>
</form>`;
}

/** Only local paths are followed after sign-in (no open redirect). */
function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[\x21-\x7e]{0,500}$/.test(value) ? value : '/';
}

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...rest] = part.trim().split('=');
    if (k === name) return rest.join('=');
  }
  return undefined;
}

/**
 * The pages people view dashboards on. There was no browser session for first-party pages (the
 * OAuth side signs people in for apps only), so this adds a minimal one on the same people store:
 * `/app/sign-in` checks the password (throttled like /oauth/authorize, CSRF-guarded), keeps a
 * session in Redis behind an HttpOnly SameSite=Lax cookie, and each `GET /dashboards/{id}` mints
 * a one-hour access token (client `cuadra-web`, scope `tools`, the person's role in the
 * dashboard's workspace) that the page's script uses against the REST API and `/v1/events` like
 * any app. Signing out revokes the session's tokens at once.
 */
export function dashboardPages(deps: { db: Connection; redis: Redis; log: Logger; people: PeopleStore; identity: IdentityStore; tokens: AccessTokens; dashboards: DashboardStore; signingKey: string; publicUrl: string; pipeline?: InvokePipeline }): Router {
  const router = Router();
  const secure = deps.publicUrl.startsWith('https://');
  const csrf = new CsrfGuard(createHmac('sha256', deps.signingKey).update('cuadra app pages csrf').digest(), secure);
  const quotas = throttleQuotas();
  const throttles = { login: new Throttle(deps.redis, 'app-login', quotas.login), address: new Throttle(deps.redis, 'app-login-addr', quotas.loginAddress) };
  const assets = loadAssets();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });

  const session = async (req: Request): Promise<Session | null> => {
    const token = readCookie(req, SESSION_COOKIE);
    if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const stored = await deps.redis.get(sessionKey(token));
    return stored ? (JSON.parse(stored) as Session) : null;
  };

  router.get('/app/assets/:name', (req, res) => {
    const asset = assets.get(req.params.name);
    if (!asset) return res.status(404).type('text').send('Not found');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', asset.etag);
    if (req.header('if-none-match') === asset.etag) return res.status(304).end();
    res.type(asset.type).send(asset.body);
  });

  // The approvals inbox (gateway/src/pages/approvals.ts) shares this session and CSRF guard.
  if (deps.pipeline) router.use(approvalPages({ log: deps.log, people: deps.people, identity: deps.identity, tokens: deps.tokens, pipeline: deps.pipeline, session, csrf, webClientId: WEB_CLIENT_ID }));
  // The workspace's own pages (keys, policies, members, e-invoicing, ledger): same session, same guard, acting through tools.
  if (deps.pipeline) router.use(crmPages({ log: deps.log, people: deps.people, identity: deps.identity, tokens: deps.tokens, pipeline: deps.pipeline, session, csrf, webClientId: WEB_CLIENT_ID }));
  if (deps.pipeline) router.use(projectPages({ log: deps.log, people: deps.people, identity: deps.identity, tokens: deps.tokens, pipeline: deps.pipeline, session, csrf, webClientId: WEB_CLIENT_ID }));
  if (deps.pipeline) router.use(workspacePages({ log: deps.log, people: deps.people, identity: deps.identity, tokens: deps.tokens, pipeline: deps.pipeline, session, csrf, webClientId: WEB_CLIENT_ID }));
  if (deps.pipeline) router.use(marketingPages({ log: deps.log, people: deps.people, identity: deps.identity, tokens: deps.tokens, pipeline: deps.pipeline, session, csrf, webClientId: WEB_CLIENT_ID }));

  // The front door: a person who is signed in goes to the workspace's home (its dashboards), anyone
  // else gets the sign-in form, with the way in for programs and agents (RFC 9727's Link as well).
  router.get('/', async (req, res) => {
    const t = localeOf(req, res);
    try {
      res.setHeader('Link', apiCatalogLink(deps.publicUrl));
      if (await session(req)) return res.redirect(303, '/dashboards');
      const form = signInPage(t, { csrf: csrf.issue(req, res, 'app-sign-in'), next: '/', lead: t.t('front.lead') });
      sendPage(res, {
        title: t.t('front.title'), ...pageChrome(req, t),
        body: html`${form}
<h2>${t.t('front.developers')}</h2>
<ul>
  <li><a href="/llms.txt" type="text/markdown">${t.t('front.llms')}</a></li>
  <li><a href="/openapi.json" type="application/json">${t.t('front.openapi')}</a></li>
  <li><a href="${API_CATALOG_PATH}" rel="api-catalog">${t.t('front.catalog')}</a></li>
  <li>${t.t('front.mcp')}: <code>${deps.publicUrl}/mcp</code></li>
</ul>`,
      });
    } catch (err) {
      deps.log.error({ err }, 'front page failed');
      sendPage(res, { status: 500, title: t.t('error.title'), ...pageChrome(req, t), body: html`<h1>${t.t('error.title')}</h1><p>${t.t('error.retry')}</p>` });
    }
  });

  router.get('/app/sign-in', async (req, res) => {
    // Sessions and sign-in throttles live in Redis: without it the form could only fail.
    if (!(await redisAnswers(deps.redis))) return sendUnavailablePage(req, res);
    const t = localeOf(req, res);
    sendPage(res, { title: t.t('signIn.title'), ...pageChrome(req, t), body: signInPage(t, { csrf: csrf.issue(req, res, 'app-sign-in'), next: safeNext(req.query.next) }) });
  });

  router.post('/app/sign-in', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = safeNext(body.next);
    const email = typeof body.email === 'string' ? body.email.trim().toLowerCase().slice(0, 320) : '';
    const t = localeOf(req, res);
    const again = (status: number, error: string) => sendPage(res, { status, title: t.t('signIn.title'), ...pageChrome(req, t), body: signInPage(t, { csrf: csrf.issue(req, res, 'app-sign-in'), next, email, error }) });
    try {
      if (!(await redisAnswers(deps.redis))) return sendUnavailablePage(req, res);
      if (!csrf.check(req, 'app-sign-in', body.csrf)) return again(403, t.t('signIn.expired'));
      const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : '';
      if (!email || !password) return again(400, t.t('signIn.missing'));
      const address = clientAddress(req);
      const wait = (await throttles.address.hit(address)) ?? (await throttles.login.hit(`${address}|${email}`));
      if (wait !== null) {
        res.setHeader('Retry-After', String(wait));
        return again(429, t.t('signIn.throttled', { minutes: Math.ceil(wait / 60) }));
      }
      const user = await deps.people.checkPassword(email, password);
      if (!user) return again(401, t.t('signIn.wrong'));
      await throttles.login.reset(`${address}|${email}`);
      // The language the person chose before (another browser) comes with them; a choice made here is kept.
      if (!hasLangCookie(req) && !langAsked(req) && user.locale) setLangCookie(req, res, user.locale);
      else if (langAsked(req) || hasLangCookie(req)) await deps.people.setLocale(user._id, t.locale);
      const token = randomBytes(32).toString('base64url');
      const record: Session = { user: user._id, grant: `web_${randomBytes(12).toString('base64url')}` };
      await deps.redis.set(sessionKey(token), JSON.stringify(record), 'EX', SESSION_TTL_SECONDS);
      res.append('Set-Cookie', `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${SESSION_TTL_SECONDS}${secure ? '; Secure' : ''}`);
      res.redirect(303, next);
    } catch (err) {
      deps.log.error({ err }, 'app sign-in failed');
      if (isOutage(err)) return sendUnavailablePage(req, res);
      again(500, `${t.t('error.title')}. ${t.t('error.retry')}`);
    }
  });

  router.post('/app/sign-out', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!csrf.check(req, 'app-sign-out', body.csrf)) return res.redirect(303, '/app/sign-in');
    const token = readCookie(req, SESSION_COOKIE);
    const current = await session(req);
    if (token && current) {
      await deps.redis.del(sessionKey(token));
      await deps.tokens.revokeGrantTokens(current.grant);
    }
    res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`);
    res.redirect(303, '/app/sign-in');
  });

  router.get('/dashboards', async (req, res) => {
    const t = localeOf(req, res);
    try {
      const current = await session(req);
      if (!current) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent('/dashboards')}`);
      if (langAsked(req)) await deps.people.setLocale(current.user, t.locale);
      const memberships = await deps.people.memberships(current.user);
      // A workspace's module homes are made on the first visit of this page (once per workspace).
      for (const m of memberships) await makeHomes(current.user, current.grant, m.workspace, true);
      const groups = await Promise.all(memberships.map(async (m) => ({
        id: m.workspace,
        name: (await deps.identity.workspace(m.workspace))?.name ?? m.workspace,
        // The 100 most recently changed of each workspace (one bounded page).
        boards: (await deps.dashboards.list(m.workspace, { limit: 100 }, (d) => ({ _id: d._id, title: d.title, handle: (d as { handle?: string }).handle }))).rows,
      }))).then((gs) => gs.map((g) => ({ ...g, homes: g.boards.some((b) => typeof b.handle === 'string' && b.handle.startsWith('home-')) })));
      const homeCsrf = csrf.issue(req, res, 'app-dashboards-home');
      const notice = req.query.homes === 'made' ? html`<p class="notice" role="status" id="notice">${t.t('dashboards.homes.made')}</p>`
        : req.query.homes === 'held' ? html`<p class="notice" role="status" id="notice">${t.t('ws.held')}</p>`
        : req.query.homes === 'refused' ? html`<p class="error" role="alert" id="notice">${t.t('dashboards.homes.refused')}</p>` : '';
      sendAppPage(req, res, {
        t, title: t.t('dashboards.title'), current: 'dashboards', signOutCsrf: csrf.issue(req, res, 'app-sign-out'),
        body: html`<h1>${t.t('dashboards.title')}</h1>${notice}${groups.map((g) => html`<h2>${g.name}</h2>${g.boards.length
          ? html`<ul class="tiles">${g.boards.map((d) => html`<li><a href="/dashboards/${d._id}">${d.title}</a></li>`)}</ul>`
          : html`<p class="note">${t.t('dashboards.none')}</p>`}
${g.homes ? '' : html`<form method="post" action="/app/home-dashboards" class="card"><input type="hidden" name="csrf" value="${homeCsrf}"><input type="hidden" name="ws" value="${g.id}"><p class="note">${t.t('dashboards.homes.note')}</p><button type="submit" class="primary">${t.t('dashboards.homes.make')}</button></form>`}`)}`,
      });
    } catch (err) {
      deps.log.error({ err }, 'dashboards list page failed');
      sendPage(res, { status: 500, title: t.t('error.title'), ...pageChrome(req, t), body: html`<h1>${t.t('error.title')}</h1><p>${t.t('error.retry')}</p>` });
    }
  });

  /**
   * The module home dashboards of `workspace`, each missing one saved through dashboards.save as the person (the
   * whole pipeline: role, policies, ledger). `firstVisit`: once per workspace (a Redis mark taken first, given back
   * when the homes could not be saved, so a viewer's first visit does not use up an owner's), and quietly — a
   * refusal or a hold leaves the page's button to do it. True when held.
   */
  async function makeHomes(user: string, grant: string, workspace: string, firstVisit: boolean): Promise<boolean> {
    if (!deps.pipeline) return false;
    if (firstVisit && (await deps.redis.set(`cuadra:homes-made:${workspace}`, '1', 'NX')) !== 'OK') return false;
    const { token } = deps.tokens.sign({ user, workspace, scope: 'tools', clientId: WEB_CLIENT_ID, resource: deps.tokens.issuer, grant });
    const reads = buildProducts().reads as unknown as Record<'metrics' | 'sources' | 'agenda', Record<string, unknown>>;
    let held = false;
    for (const home of homeDashboards({ metrics: new Set(Object.keys(reads.metrics ?? {})), sources: new Set(Object.keys(reads.sources ?? {})), agenda: new Set(Object.keys(reads.agenda ?? {})) }).reverse()) {
      if (await deps.dashboards.get(workspace, home.key)) continue;
      try {
        const answer = await deps.pipeline.invoke({ authorization: `Bearer ${token}`, tool: 'dashboards.save', body: async () => home });
        held ||= answer.status === 202;
      } catch (err) {
        if (!firstVisit) throw err;
        if (!(err instanceof PipelineRefusal)) deps.log.warn({ err, workspace }, 'home dashboards on first visit failed');
        // Not made (a role that may not save, a refusal, a failure): the mark goes, so the next visit of
        // someone who may save makes them; the homes already saved are skipped then.
        await deps.redis.del(`cuadra:homes-made:${workspace}`);
        return false;
      }
    }
    return held;
  }

  // The module home dashboards, made through dashboards.save as the person (one call per missing module home).
  router.post('/app/home-dashboards', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const t = localeOf(req, res);
    try {
      const current = await session(req);
      if (!current) return res.redirect(303, '/app/sign-in?next=%2Fdashboards');
      if (!csrf.check(req, 'app-dashboards-home', body.csrf) || !deps.pipeline) return res.redirect(303, '/dashboards?homes=refused');
      const memberships = await deps.people.memberships(current.user);
      const chosen = memberships.find((m) => m.workspace === body.ws);
      if (!chosen) return res.redirect(303, '/dashboards?homes=refused');
      const held = await makeHomes(current.user, current.grant, chosen.workspace, false);
      res.redirect(303, `/dashboards?homes=${held ? 'held' : 'made'}`);
    } catch (err) {
      if (err instanceof PipelineRefusal) return res.redirect(303, '/dashboards?homes=refused');
      deps.log.error({ err }, 'home dashboards failed');
      res.redirect(303, '/dashboards?homes=refused');
    }
    void t;
  });

  router.get('/dashboards/:id', async (req, res) => {
    const t = localeOf(req, res);
    try {
      const current = await session(req);
      if (!current) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
      const doc = /^[A-Za-z0-9_-]{1,64}$/.test(req.params.id) ? await deps.dashboards.byId(req.params.id) : null;
      const role = doc ? await deps.people.roleIn(doc.workspace, current.user) : null;
      // Another workspace's dashboard is as unknown as a missing one.
      if (!doc || !role) return sendPage(res, { status: 404, title: t.t('dashboards.missing.title'), ...pageChrome(req, t), body: html`<h1>${t.t('dashboards.missing.title')}</h1><p>${t.t('dashboards.missing.text')}</p>` });
      const { token } = deps.tokens.sign({ user: current.user, workspace: doc.workspace, scope: 'tools', clientId: WEB_CLIENT_ID, resource: deps.tokens.issuer, grant: current.grant });
      sendDashboardPage(res, { t, langHref: switchHref(req, t.locale), id: doc._id, title: doc.title, token, signOutCsrf: csrf.issue(req, res, 'app-sign-out'), assets });
    } catch (err) {
      deps.log.error({ err }, 'dashboard page failed');
      sendPage(res, { status: 500, title: t.t('error.title'), ...pageChrome(req, t), body: html`<h1>${t.t('error.title')}</h1><p>${t.t('error.retry')}</p>` });
    }
  });

  return router;
}

/** The `canvas.*` messages of the page's locale as JSON safe inside a <script> data block. */
export function canvasTexts(t: Translator): string {
  const keys = ['unexpected', 'chart', 'periods', 'empty', 'waitingRow', 'waitingParams', 'unavailable', 'total', 'table', 'records', 'nOfTotal', 'overdue', 'nothingDue', 'notShown', 'nothingNext', 'done', 'waitingApproval', 'working', 'section', 'tabs', 'tab', 'refreshFailed', 'updated', 'updated1', 'selected', 'up', 'down', 'selectRow', 'columns', 'moveTo', 'move'] as const;
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = t.t(`canvas.${k}`);
  return JSON.stringify(out).replace(/</g, '\\u003c');
}

/** The dashboard page: a shell the served script fills from `dashboards.render`. */
function sendDashboardPage(res: Response, input: { t: Translator; langHref: string; id: string; title: string; token: string; signOutCsrf: string; assets: ReturnType<typeof loadAssets> }): void {
  const v = (name: string) => encodeURIComponent(input.assets.get(name)!.etag.replace(/"/g, ''));
  const t = (key: Parameters<Translator['t']>[0]) => input.t.t(key);
  const other = input.t.locale === 'en' ? 'es' : 'en';
  res.setHeader('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.type('html').send(
    `<!doctype html>\n<html lang="${input.t.lang}"><head>` + '<meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
      `<title>${escapeHtml(input.title)} · Cuadra</title><link rel="icon" href="data:,">` +
      `<meta name="cuadra-dashboard" content="${escapeHtml(input.id)}"><meta name="cuadra-token" content="${escapeHtml(input.token)}">` +
      `<meta name="cuadra-locale" content="${escapeHtml(input.t.lang)}">` +
      // The blocks' own words, from the pages' catalog (a data block, not a script: the CSP stays 'self').
      `<script type="application/json" id="cuadra-text">${canvasTexts(input.t)}</script>` +
      `<link rel="stylesheet" href="/app/assets/canvas.css?v=${v('canvas.css')}"><script src="/app/assets/canvas.js?v=${v('canvas.js')}" defer></script></head>` +
      `<body><a class="skip" href="#canvas">${escapeHtml(t('dashboard.skip'))}</a>` +
      `<header class="top" role="banner"><span class="brand">Cuadra</span><h1 id="dash-title">${escapeHtml(input.title)}</h1>` +
      `<nav aria-label="${escapeHtml(t('nav.label'))}">${(Object.keys(APP_PAGES) as AppPageKey[]).map((k) => `<a href="${APP_PAGES[k]}">${escapeHtml(t(`nav.${k}`))}</a>`).join(' · ')} · ` +
      `<a href="${escapeHtml(input.langHref)}" lang="${other}" hreflang="${other}">${escapeHtml(t('lang.switch'))}</a></nav>` +
      `<form method="post" action="/app/sign-out"><input type="hidden" name="csrf" value="${escapeHtml(input.signOutCsrf)}"><button type="submit" class="btn ghost">${escapeHtml(t('signOut'))}</button></form></header>` +
      '<p id="live-status" class="sr-only" role="status" aria-live="polite"></p>' +
      `<main id="canvas" class="grid" aria-busy="true" tabindex="-1"><p class="loading">${escapeHtml(t('dashboard.loading'))}</p></main>` +
      `<noscript><p class="note">${escapeHtml(t('dashboard.noscript'))}</p></noscript></body></html>`,
  );
}
