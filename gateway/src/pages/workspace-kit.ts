import type { Logger, Principal } from '@cuadra/shared';
import type { Request, Response } from 'express';
import type { PeopleStore } from '../identity/people.ts';
import type { IdentityStore } from '../identity/store.ts';
import type { AccessTokens } from '../oauth/tokens.ts';
import { PipelineRefusal, type InvokePipeline } from '../pipeline.ts';
import { html, type CsrfGuard, type SafeHtml } from './html.ts';
import { langAsked, localeOf, type MessageKey, type Translator } from './i18n.ts';
import { sendAppPage, type AppPageKey } from './shell.ts';

/** A signed-in browser's session (the app's cookie). */
export interface Session { user: string; grant: string }

/** What a page's action answered: done (with the output), held for approval, or refused. */
export type Outcome =
  | { kind: 'ok'; output: Record<string, any> }
  | { kind: 'held'; approval: string }
  | { kind: 'refused'; code: string; message: string; field?: string };

/** The signed-in page's context: who, which workspace, a token minted for the person there. */
export interface Ctx {
  user: string;
  workspace: string;
  workspaceName: string;
  workspaces: { id: string; name: string }[];
  token: string;
  principal: Principal;
}

/** What the workspace's pages are built with. */
export interface WorkspacePageDeps {
  log: Logger; people: PeopleStore; identity: IdentityStore; tokens: AccessTokens; pipeline: InvokePipeline;
  session: (req: Request) => Promise<Session | null>; csrf: CsrfGuard; webClientId: string;
}

/** A page's content for the person in a workspace. */
export type Body = (t: Translator, ctx: Ctx, csrf: string, req: Request) => Promise<SafeHtml>;

/**
 * The pieces every signed-in workspace page is made of (the workspace pages, the marketing pages):
 * the person's context with a one-hour token minted for them in the chosen workspace (client
 * `cuadra-web`), reads through read tools, changes through the whole invoke pipeline (so the
 * ledger records them as theirs and the workspace's policies and roles apply), CSRF-guarded form
 * posts answered by the page again with the outcome on top.
 */
export function workspacePageKit(deps: WorkspacePageDeps, options: { scope?: string } = {}) {
  // The person's own first-party pages: the tool scopes their role allows (sites.* need `sites.edit`, CONTRACT §1).
  const scope = options.scope ?? 'tools';
  const context = async (s: Session, wanted: unknown): Promise<Ctx | null> => {
    const memberships = await deps.people.memberships(s.user);
    const chosen = memberships.find((m) => m.workspace === wanted) ?? memberships[0];
    if (!chosen) return null;
    const { token } = deps.tokens.sign({ user: s.user, workspace: chosen.workspace, scope, clientId: deps.webClientId, resource: deps.tokens.issuer, grant: s.grant });
    const principal = await deps.pipeline.authenticate(`Bearer ${token}`);
    const workspaces = await Promise.all(memberships.map(async (m) => ({ id: m.workspace, name: (await deps.identity.workspace(m.workspace))?.name ?? m.workspace })));
    return { user: s.user, workspace: chosen.workspace, workspaceName: workspaces.find((w) => w.id === chosen.workspace)!.name, workspaces, token, principal };
  };

  /** A change, through the whole pipeline as the person. */
  const act = async (ctx: Ctx, tool: string, input: Record<string, unknown>): Promise<Outcome> => {
    try {
      const answer = await deps.pipeline.invoke({ authorization: `Bearer ${ctx.token}`, tool, body: async () => input });
      if (answer.status === 202) return { kind: 'held', approval: (answer.body as { approval_id: string }).approval_id };
      return { kind: 'ok', output: (answer.body as { output: Record<string, any> }).output };
    } catch (err) {
      if (!(err instanceof PipelineRefusal)) throw err;
      return { kind: 'refused', code: err.error.code, message: err.error.message, field: err.error.field };
    }
  };

  /** A read through the read tools; a refusal (the role does not reach it) becomes a message on the page. */
  const read = async <T = Record<string, any>>(ctx: Ctx, tool: string, input: Record<string, unknown> = {}): Promise<T | { refused: string }> => {
    try {
      return (await deps.pipeline.invokeReadAs(ctx.principal, tool, input)) as T;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'forbidden' || code === 'policy_denied' || code === 'insufficient_scope' || code === 'not_found') return { refused: code };
      throw err;
    }
  };
  const refusedRead = (t: Translator, r: { refused: string }) => html`<p class="error" role="alert">${t.t('ws.cannotRead', { code: r.refused })}</p>`;
  const isRefused = (r: unknown): r is { refused: string } => typeof r === 'object' && r !== null && 'refused' in r;

  /** The message after an action: done, held (with a link to the inbox), refused (code and field). */
  const outcomeText = (t: Translator, ctx: Ctx, o: Outcome, done: string): SafeHtml => {
    if (o.kind === 'ok') return html`<p class="notice" role="status" id="notice">${done}</p>`;
    if (o.kind === 'held') return html`<p class="notice" role="status" id="notice">${t.t('ws.held')} <a href="/app/approvals?ws=${encodeURIComponent(ctx.workspace)}#${o.approval}">${t.t('ws.held.link')}</a></p>`;
    return html`<p class="error" role="alert" id="notice">${t.t('ws.refused', { error: o.message, code: o.code })}${o.field ? html` <code>${o.field}</code>` : ''}</p>`;
  };


  /** Sends a page: signed in, in a workspace; `body` builds the content. */
  const show = async (req: Request, res: Response, key: AppPageKey, body: Body, extra: { status?: number; top?: SafeHtml; frames?: boolean } = {}) => {
    const t = localeOf(req, res);
    const signOutCsrf = deps.csrf.issue(req, res, 'app-sign-out');
    const title = t.t(`nav.${key}` as MessageKey);
    try {
      const s = await deps.session(req);
      if (!s) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.originalUrl.slice(0, 500))}`);
      // The person's choice of language is remembered for them too (their e-mails follow it).
      if (langAsked(req)) await deps.people.setLocale(s.user, t.locale);
      const ctx = await context(s, req.query.ws ?? (req.body as Record<string, unknown> | undefined)?.ws);
      if (!ctx) return sendAppPage(req, res, { t, title, current: key, signOutCsrf, body: html`<h1>${title}</h1><p>${t.t('inbox.noWorkspace')}</p>` });
      const csrf = deps.csrf.issue(req, res, `app-${key}`);
      const content = await body(t, ctx, csrf, req);
      sendAppPage(req, res, {
        t, status: extra.status, title, current: key, signOutCsrf, ws: ctx.workspace, frames: extra.frames,
        body: html`<h1>${t.t(`ws.${key}.heading` as MessageKey, { workspace: ctx.workspaceName })}</h1>
${ctx.workspaces.length > 1 ? html`<p class="workspaces"><span>${t.t('inbox.workspace')}:</span> ${ctx.workspaces.map((w) => (w.id === ctx.workspace ? html`<strong>${w.name}</strong> ` : html`<a href="${req.path}?ws=${encodeURIComponent(w.id)}">${w.name}</a> `))}</p>` : ''}
${extra.top ?? ''}
${content}`,
      });
    } catch (err) {
      deps.log.error({ err }, `${key} page failed`);
      sendAppPage(req, res, { t, status: 500, title: t.t('error.title'), current: key, signOutCsrf, body: html`<h1>${t.t('error.title')}</h1><p>${t.t('error.retry')}</p>` });
    }
  };

  /**
   * A form post: signed in, CSRF checked for this page's purpose, then `run` acts through a tool;
   * the page is shown again with the outcome on top (never a redirect carrying a secret).
   */
  const post = (key: AppPageKey, body: Body, run: (t: Translator, ctx: Ctx, fields: Record<string, unknown>, req: Request) => Promise<{ status?: number; top: SafeHtml }>, page: { frames?: boolean } = {}) =>
    async (req: Request, res: Response) => {
      const t = localeOf(req, res);
      const fields = (req.body ?? {}) as Record<string, unknown>;
      try {
        const s = await deps.session(req);
        if (!s) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.path)}`);
        if (!deps.csrf.check(req, `app-${key}`, fields.csrf)) return show(req, res, key, body, { ...page, status: 403, top: html`<p class="error" role="alert" id="notice">${t.t('inbox.expired')}</p>` });
        const ctx = await context(s, fields.ws);
        if (!ctx) return show(req, res, key, body, { ...page, status: 404 });
        const done = await run(t, ctx, fields, req);
        return show(req, res, key, body, { ...page, ...done });
      } catch (err) {
        deps.log.error({ err }, `${key} action failed`);
        return show(req, res, key, body, { ...page, status: 500, top: html`<p class="error" role="alert" id="notice">${t.t('error.title')}. ${t.t('error.retry')}</p>` });
      }
    };
  const statusOf = (o: Outcome) => (o.kind === 'refused' ? (o.code === 'not_found' ? 404 : o.code === 'invalid_input' ? 400 : o.code === 'conflict' ? 409 : 403) : o.kind === 'held' ? 202 : 200);
  const hidden = (csrf: string, ctx: Ctx) => html`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="ws" value="${ctx.workspace}">`;
  const text = (v: unknown, max: number) => (typeof v === 'string' ? v.trim().slice(0, max) : '');

  return { context, act, read, refusedRead, isRefused, outcomeText, show, post, statusOf, hidden, text };
}

/** The kit's functions (for a page module's helpers). */
export type WorkspacePageKit = ReturnType<typeof workspacePageKit>;
