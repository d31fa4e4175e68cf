import express, { Router, type Request, type Response } from 'express';
import type { Logger, Principal } from '@cuadra/shared';
import type { IdentityStore } from '../identity/store.ts';
import type { PeopleStore } from '../identity/people.ts';
import type { AccessTokens } from '../oauth/tokens.ts';
import { PipelineRefusal, type InvokePipeline } from '../pipeline.ts';
import { renderBoard, type BoardView } from './board.ts';
import { html, type CsrfGuard, type SafeHtml } from './html.ts';
import { langAsked, localeOf, type MessageKey, type Translator } from './i18n.ts';
import { APP_PAGES, sendAppPage, type AppPageKey } from './shell.ts';

interface Session { user: string; grant: string }

/** What every board page is given by the pages' router. */
export interface BoardPageDeps {
  log: Logger; people: PeopleStore; identity: IdentityStore; tokens: AccessTokens; pipeline: InvokePipeline;
  session: (req: Request) => Promise<Session | null>; csrf: CsrfGuard; webClientId: string;
}

/** One board as its page shows it: the heading, the board (its moves' target and fallback are the page's), and which board it is. */
export interface BoardRead {
  heading: string;
  /** The board shown (pipeline key, project id): kept in the page's links and forms. */
  which: string;
  view: Omit<BoardView, 'refreshUrl' | 'fallback' | 'moveTool' | 'columnArg' | 'placeArgs'>;
}

/** What makes one board page (the sales pipeline, a project's tasks) different from another. */
export interface BoardPageSpec {
  /** The page in the navigation; its address is `APP_PAGES[key]`. */
  key: AppPageKey;
  title: MessageKey;
  /** The query parameter choosing the board (`pipeline`, `project`) and the shape of its value. */
  param: { name: string; pattern: RegExp };
  /** The tool a move calls, the argument naming the column, and those placing the card (BoardView's). */
  move: Pick<BoardView, 'moveTool' | 'columnArg' | 'placeArgs'>;
  /** The shape of a column's id as the no-script form posts it. */
  column: RegExp;
  /** Reads the board as the signed-in person (through the pipeline); `wanted` is '' for the default board. */
  read(deps: BoardPageDeps, principal: Principal, wanted: string, t: Translator): Promise<BoardRead>;
  /** The move tool's input for a card moved to a column by the no-script form. */
  moveInput(id: string, column: string): Record<string, unknown>;
  /** The page's notice after a move, and its sentences for a refused move and an unreadable board. */
  moved: MessageKey;
  refused: MessageKey;
  cannotRead(t: Translator, code: string): string;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A signed-in board page (the CRM's sales board, a project's task board): the board drawn on the
 * server by {@link renderBoard} as the signed-in person; cards move by drag and drop or by keyboard
 * (board.js, through REST with the person's token and an Idempotency-Key), or without script through
 * each card's form (POST `<page>/move` → the same tool through the same pipeline). Policies,
 * approvals and the ledger apply as to any caller: a move a policy holds says so.
 */
export function boardPage(spec: BoardPageSpec, deps: BoardPageDeps): Router {
  const router = Router();
  const path = APP_PAGES[spec.key];
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const csrfName = `app-${spec.key}-move`;

  const context = async (s: Session, wanted: unknown): Promise<{ workspace: string; token: string; principal: Principal } | null> => {
    const memberships = await deps.people.memberships(s.user);
    const chosen = memberships.find((m) => m.workspace === wanted) ?? memberships[0];
    if (!chosen) return null;
    const { token } = deps.tokens.sign({ user: s.user, workspace: chosen.workspace, scope: 'tools', clientId: deps.webClientId, resource: deps.tokens.issuer, grant: s.grant });
    return { workspace: chosen.workspace, token, principal: await deps.pipeline.authenticate(`Bearer ${token}`) };
  };
  const wantedOf = (v: unknown) => (typeof v === 'string' && spec.param.pattern.test(v) ? v : '');

  const boardHtml = (t: Translator, b: BoardRead, ws: string, csrf: string): SafeHtml => renderBoard(t, {
    ...b.view, ...spec.move,
    refreshUrl: `${path}/board?ws=${encodeURIComponent(ws)}&${spec.param.name}=${encodeURIComponent(b.which)}`,
    fallback: { action: `${path}/move`, fields: { csrf, ws, [spec.param.name]: b.which } },
  });

  const page = async (req: Request, res: Response, extra: { status?: number; notice?: string; error?: string } = {}) => {
    const t = localeOf(req, res);
    const signOutCsrf = deps.csrf.issue(req, res, 'app-sign-out');
    const s = await deps.session(req);
    if (!s) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.originalUrl.slice(0, 500))}`);
    if (langAsked(req)) await deps.people.setLocale(s.user, t.locale);
    const ctx = await context(s, req.query.ws ?? req.body?.ws);
    if (!ctx) return sendAppPage(req, res, { t, title: t.t(spec.title), current: spec.key, signOutCsrf, body: html`<h1>${t.t(spec.title)}</h1><p>${t.t('inbox.noWorkspace')}</p>` });
    let body: SafeHtml;
    try {
      const b = await spec.read(deps, ctx.principal, wantedOf(req.query[spec.param.name]) || wantedOf(req.body?.[spec.param.name]), t);
      body = html`<h1>${b.heading}</h1>
${extra.notice ? html`<p class="notice" role="status" id="notice">${extra.notice}</p>` : ''}${extra.error ? html`<p class="error" role="alert" id="notice">${extra.error}</p>` : ''}
${boardHtml(t, b, ctx.workspace, deps.csrf.issue(req, res, csrfName))}`;
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'internal';
      if (code === 'internal') deps.log.error({ err }, `${spec.key} board failed`);
      body = html`<h1>${t.t(spec.title)}</h1><p class="error" role="alert">${spec.cannotRead(t, code)}</p>`;
    }
    sendAppPage(req, res, { t, status: extra.status, title: t.t(spec.title), current: spec.key, signOutCsrf, script: 'board.js', ws: ctx.workspace, meta: { 'cuadra-token': ctx.token }, body });
  };

  router.get(path, (req, res) => {
    const t = localeOf(req, res);
    const moved = req.query.moved;
    page(req, res, { notice: moved === 'held' ? t.t('board.say.held') : moved === 'ok' ? t.t(spec.moved) : undefined }).catch((err) => {
      deps.log.error({ err }, `${spec.key} page failed`);
      res.status(500).type('text').send('Something went wrong.');
    });
  });

  // The board alone, for the script after a move (same session, same rendering).
  router.get(`${path}/board`, async (req, res) => {
    const t = localeOf(req, res);
    try {
      const s = await deps.session(req);
      if (!s) return res.status(401).type('text').send('Sign in again.');
      const ctx = await context(s, req.query.ws);
      if (!ctx) return res.status(404).type('text').send('No workspace.');
      const b = await spec.read(deps, ctx.principal, wantedOf(req.query[spec.param.name]), t);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      res.type('html').send(`<!doctype html><html lang="${t.lang}"><head><title>board</title></head><body>${boardHtml(t, b, ctx.workspace, deps.csrf.issue(req, res, csrfName)).value}</body></html>`);
    } catch (err) {
      deps.log.error({ err }, `${spec.key} board failed`);
      res.status(500).type('text').send('Something went wrong.');
    }
  });

  // Without script: each card's form moves it through the same pipeline.
  router.post(`${path}/move`, form, async (req, res) => {
    const t = localeOf(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const s = await deps.session(req);
      if (!s) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(path)}`);
      if (!deps.csrf.check(req, csrfName, body.csrf)) return page(req, res, { status: 403, error: t.t('inbox.expired') });
      const id = typeof body.id === 'string' && ID.test(body.id) ? body.id : null;
      const column = typeof body.column === 'string' && spec.column.test(body.column) ? body.column : null;
      if (!id || !column) return page(req, res, { status: 400, error: t.t('board.say.failed') });
      const ctx = await context(s, body.ws);
      if (!ctx) return page(req, res, { status: 404, error: t.t('inbox.noWorkspace') });
      const which = wantedOf(body[spec.param.name]);
      try {
        const answer = await deps.pipeline.invoke({ authorization: `Bearer ${ctx.token}`, tool: spec.move.moveTool, body: async () => spec.moveInput(id, column) });
        return res.redirect(303, `${path}?ws=${encodeURIComponent(ctx.workspace)}&${spec.param.name}=${encodeURIComponent(which)}&moved=${answer.status === 202 ? 'held' : 'ok'}`);
      } catch (err) {
        if (!(err instanceof PipelineRefusal)) throw err;
        return page(req, res, { status: err.error.code === 'invalid_input' ? 422 : 409, error: t.t(spec.refused, { error: err.error.message }) });
      }
    } catch (err) {
      deps.log.error({ err }, `${spec.key} move failed`);
      res.status(500).type('text').send('Something went wrong.');
    }
  });

  return router;
}
