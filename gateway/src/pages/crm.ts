import express, { Router, type Request, type Response } from 'express';
import type { Logger, Principal } from '@cuadra/shared';
import type { IdentityStore } from '../identity/store.ts';
import type { PeopleStore } from '../identity/people.ts';
import type { AccessTokens } from '../oauth/tokens.ts';
import { PipelineRefusal, type InvokePipeline } from '../pipeline.ts';
import { renderBoard, type BoardView } from './board.ts';
import { html, type CsrfGuard, type SafeHtml } from './html.ts';
import { langAsked, localeOf, type Translator } from './i18n.ts';
import { sendAppPage } from './shell.ts';

interface Session { user: string; grant: string }

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[a-z0-9-]{1,64}$/;

interface Board {
  pipeline: { id: string; key: string; name: string; currency: string };
  columns: { stage_id: string; name: string; kind: string; count: number; amount: number; weighted_amount: number; more: boolean; deals: { id: string; title: string; party_name: string | null; amount: number; expected_close: string | null; rotting: boolean; days_in_stage: number }[] }[];
}

/**
 * `/app/crm`: the sales pipeline's board (the default pipeline, or `?pipeline=<key>`), read through
 * `dashboards.render`'s kanban block as the signed-in person; cards move by drag and drop or by
 * keyboard (board.js, through REST `deals.move` with the person's token and an Idempotency-Key), or
 * without script through each card's form (POST `/app/crm/move` → `deals.move` through the same
 * pipeline). Policies, approvals and the ledger apply as to any caller: a move a policy holds says so.
 */
export function crmPages(deps: {
  log: Logger; people: PeopleStore; identity: IdentityStore; tokens: AccessTokens; pipeline: InvokePipeline;
  session: (req: Request) => Promise<Session | null>; csrf: CsrfGuard; webClientId: string;
}): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });

  const context = async (s: Session, wanted: unknown): Promise<{ workspace: string; token: string; principal: Principal } | null> => {
    const memberships = await deps.people.memberships(s.user);
    const chosen = memberships.find((m) => m.workspace === wanted) ?? memberships[0];
    if (!chosen) return null;
    const { token } = deps.tokens.sign({ user: s.user, workspace: chosen.workspace, scope: 'tools', clientId: deps.webClientId, resource: deps.tokens.issuer, grant: s.grant });
    return { workspace: chosen.workspace, token, principal: await deps.pipeline.authenticate(`Bearer ${token}`) };
  };

  const readBoard = async (principal: Principal, pipeline: string): Promise<Board> => {
    const out = await deps.pipeline.invokeReadAs(principal, 'dashboards.render', { blocks: [{ type: 'kanban', board: { pipeline, limit: 50 } }] }) as { blocks: { board_data?: Board; error?: { code: string; error: string } }[] };
    const block = out.blocks[0];
    if (block.error) throw Object.assign(new Error(block.error.error), { code: block.error.code });
    return block.board_data!;
  };

  const boardHtml = (t: Translator, b: Board, ws: string, csrf: string): SafeHtml => {
    const money = (n: number) => t.money(n, b.pipeline.currency);
    // A calendar date (YYYY-MM-DD) is that day wherever it is read: noon in Bogotá keeps it from moving.
    const view: BoardView = {
      label: t.t('crm.board', { pipeline: b.pipeline.name }), moveTool: 'deals.move', columnArg: 'stage_id',
      refreshUrl: `/app/crm/board?ws=${encodeURIComponent(ws)}&pipeline=${encodeURIComponent(b.pipeline.key)}`,
      fallback: { action: '/app/crm/move', fields: { csrf, ws, pipeline: b.pipeline.key } },
      columns: b.columns.map((c) => ({
        id: c.stage_id, title: c.name, kind: c.kind === 'open' ? undefined : t.t(c.kind === 'won' ? 'crm.kind.won' : 'crm.kind.lost'),
        summary: t.t(c.count === 1 ? 'crm.summary.one' : 'crm.summary', { count: c.count, amount: money(c.amount), weighted: money(c.weighted_amount) }), more: c.count - c.deals.length,
        cards: c.deals.map((d) => ({
          id: d.id, title: d.title, flag: d.rotting ? t.t('crm.rotting', { days: d.days_in_stage }) : undefined,
          details: [d.party_name ?? '', money(d.amount), d.expected_close ? t.t('crm.closes', { date: t.date(`${d.expected_close}T12:00:00-05:00`) }) : ''].filter(Boolean),
        })),
      })),
    };
    return renderBoard(t, view);
  };

  const page = async (req: Request, res: Response, extra: { status?: number; notice?: string; error?: string } = {}) => {
    const t = localeOf(req, res);
    const signOutCsrf = deps.csrf.issue(req, res, 'app-sign-out');
    const s = await deps.session(req);
    if (!s) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.originalUrl.slice(0, 500))}`);
    if (langAsked(req)) await deps.people.setLocale(s.user, t.locale);
    const ctx = await context(s, req.query.ws ?? req.body?.ws);
    if (!ctx) return sendAppPage(req, res, { t, title: t.t('crm.title'), current: 'crm', signOutCsrf, body: html`<h1>${t.t('crm.title')}</h1><p>${t.t('inbox.noWorkspace')}</p>` });
    const wanted = typeof req.query.pipeline === 'string' && KEY.test(req.query.pipeline) ? req.query.pipeline : typeof req.body?.pipeline === 'string' && KEY.test(req.body.pipeline) ? req.body.pipeline : '';
    let body: SafeHtml;
    try {
      const b = await readBoard(ctx.principal, wanted);
      body = html`<h1>${t.t('crm.heading', { pipeline: b.pipeline.name })}</h1>
${extra.notice ? html`<p class="notice" role="status" id="notice">${extra.notice}</p>` : ''}${extra.error ? html`<p class="error" role="alert" id="notice">${extra.error}</p>` : ''}
${boardHtml(t, b, ctx.workspace, deps.csrf.issue(req, res, 'app-crm-move'))}`;
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'internal';
      if (code === 'internal') deps.log.error({ err }, 'crm board failed');
      body = html`<h1>${t.t('crm.title')}</h1><p class="error" role="alert">${t.t(code === 'not_found' ? 'crm.none' : 'crm.cannotRead', { code })}</p>`;
    }
    sendAppPage(req, res, { t, status: extra.status, title: t.t('crm.title'), current: 'crm', signOutCsrf, script: 'board.js', ws: ctx.workspace, meta: { 'cuadra-token': ctx.token }, body });
  };

  router.get('/app/crm', (req, res) => {
    const t = localeOf(req, res);
    const moved = req.query.moved;
    page(req, res, { notice: moved === 'held' ? t.t('board.say.held') : moved === 'ok' ? t.t('crm.moved') : undefined }).catch((err) => {
      deps.log.error({ err }, 'crm page failed');
      res.status(500).type('text').send('Something went wrong.');
    });
  });

  // The board alone, for the script after a move (same session, same rendering).
  router.get('/app/crm/board', async (req, res) => {
    const t = localeOf(req, res);
    try {
      const s = await deps.session(req);
      if (!s) return res.status(401).type('text').send('Sign in again.');
      const ctx = await context(s, req.query.ws);
      if (!ctx) return res.status(404).type('text').send('No workspace.');
      const b = await readBoard(ctx.principal, typeof req.query.pipeline === 'string' && KEY.test(req.query.pipeline) ? req.query.pipeline : '');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      res.type('html').send(`<!doctype html><html lang="${t.lang}"><head><title>board</title></head><body>${boardHtml(t, b, ctx.workspace, deps.csrf.issue(req, res, 'app-crm-move')).value}</body></html>`);
    } catch (err) {
      deps.log.error({ err }, 'crm board failed');
      res.status(500).type('text').send('Something went wrong.');
    }
  });

  // Without script: each card's form moves it through the same pipeline.
  router.post('/app/crm/move', form, async (req, res) => {
    const t = localeOf(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    try {
      const s = await deps.session(req);
      if (!s) return res.redirect(303, '/app/sign-in?next=%2Fapp%2Fcrm');
      if (!deps.csrf.check(req, 'app-crm-move', body.csrf)) return page(req, res, { status: 403, error: t.t('inbox.expired') });
      const id = typeof body.id === 'string' && ID.test(body.id) ? body.id : null;
      const column = typeof body.column === 'string' && ID.test(body.column) ? body.column : null;
      if (!id || !column) return page(req, res, { status: 400, error: t.t('board.say.failed') });
      const ctx = await context(s, body.ws);
      if (!ctx) return page(req, res, { status: 404, error: t.t('inbox.noWorkspace') });
      const pipeline = typeof body.pipeline === 'string' && KEY.test(body.pipeline) ? body.pipeline : '';
      try {
        const answer = await deps.pipeline.invoke({ authorization: `Bearer ${ctx.token}`, tool: 'deals.move', body: async () => ({ id, stage_id: column }) });
        return res.redirect(303, `/app/crm?ws=${encodeURIComponent(ctx.workspace)}&pipeline=${encodeURIComponent(pipeline)}&moved=${answer.status === 202 ? 'held' : 'ok'}`);
      } catch (err) {
        if (!(err instanceof PipelineRefusal)) throw err;
        return page(req, res, { status: err.error.code === 'invalid_input' ? 422 : 409, error: t.t('crm.refused', { error: err.error.message }) });
      }
    } catch (err) {
      deps.log.error({ err }, 'crm move failed');
      res.status(500).type('text').send('Something went wrong.');
    }
  });

  return router;
}
