import type { Approval, Logger, Principal } from '@cuadra/shared';
import express, { Router, type Request, type Response } from 'express';
import type { PeopleStore } from '../identity/people.ts';
import type { IdentityStore } from '../identity/store.ts';
import type { AccessTokens } from '../oauth/tokens.ts';
import { PipelineRefusal, type InvokePipeline } from '../pipeline.ts';
import { describeCall, wantedBy, type Names, type Wanted } from './describe.ts';
import { html, type CsrfGuard, type SafeHtml } from './html.ts';
import { langAsked, localeOf, type MessageKey, type Translator } from './i18n.ts';
import { APP_ASSET_PATH, sendAppPage, serveAppAsset } from './shell.ts';


interface Session { user: string; grant: string }

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,200}$/;
/** At most this many names are looked up for one view of the inbox (each a read through the tools). */
const MAX_LOOKUPS = 40;

/**
 * The approvals inbox (`/app/approvals`), for a person signed in on the app pages. It reads and
 * decides only through tools — `approvals.list` as a read, `approvals.decide` through the whole
 * invoke pipeline — with a one-hour access token minted for the person in the chosen workspace
 * (client `cuadra-web`), so the ledger records each decision as that person's. Decisions are
 * CSRF-guarded form posts (no script needed); a served script follows `/v1/events` and merges
 * new requests in without a reload.
 */
export function approvalPages(deps: {
  log: Logger; people: PeopleStore; identity: IdentityStore; tokens: AccessTokens; pipeline: InvokePipeline;
  session: (req: Request) => Promise<Session | null>; csrf: CsrfGuard; webClientId: string;
}): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 10 });

  router.get(`${APP_ASSET_PATH}/:name`, serveAppAsset);

  /** The person's workspaces, and the one this request is about (`?ws=`, else the first). */
  const context = async (s: Session, wanted: unknown) => {
    const memberships = await deps.people.memberships(s.user);
    const chosen = memberships.find((m) => m.workspace === wanted) ?? memberships[0];
    if (!chosen) return { memberships, chosen: null, token: '', principal: null };
    const { token } = deps.tokens.sign({ user: s.user, workspace: chosen.workspace, scope: 'tools', clientId: deps.webClientId, resource: deps.tokens.issuer, grant: s.grant });
    const principal = await deps.pipeline.authenticate(`Bearer ${token}`);
    return { memberships, chosen, token, principal };
  };

  /** Names for the ids the sentences use, and for who asked: each looked up through a read tool, at most {@link MAX_LOOKUPS}. */
  const lookUp = async (principal: Principal, workspace: string, rows: Approval[]): Promise<Looked> => {
    const wanted: Wanted = { parties: new Set(), invoices: new Set(), bills: new Set() };
    for (const r of rows) wantedBy(r.tool, r.input, wanted);
    const names: Looked = { parties: new Map<string, string>(), invoices: new Map<string, string>(), bills: new Map<string, string>(), actors: new Map<string, string>(), current: new Map() };
    let budget = MAX_LOOKUPS;
    const jobs: Promise<void>[] = [];
    // For a pending update: the record as it is now, read through its get tool, so the page shows before → after.
    for (const r of rows) {
      const get = updateReader(r.tool, r.input);
      if (r.status !== 'pending' || !get || budget-- <= 0) continue;
      jobs.push(deps.pipeline.invokeReadAs(principal, get.tool, get.input).then((o) => {
        const record = Object.values(o).find((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v));
        if (record) names.current.set(r.id, record);
      }, () => undefined));
    }
    const read = (tool: string, id: string, pick: (o: Record<string, any>) => string | undefined, into: Map<string, string>) => {
      if (budget-- <= 0 || !ID.test(id)) return;
      jobs.push(deps.pipeline.invokeReadAs(principal, tool, { id }).then((o) => {
        const name = pick(o);
        if (name) into.set(id, name);
      }, () => undefined));
    };
    for (const id of wanted.parties) read('parties.get', id, (o) => o.party?.name, names.parties);
    for (const id of wanted.invoices) read('invoices.get', id, (o) => o.invoice?.number ?? undefined, names.invoices);
    for (const id of wanted.bills) read('bills.get', id, (o) => o.bill?.number ?? o.bill?.supplier_number ?? undefined, names.bills);
    // Who asked: a key's name (agents act through keys), a person's name.
    const actors = new Map<string, { type: string; id: string }>();
    for (const r of rows) {
      actors.set(`${r.requested_by.type}:${r.requested_by.id}`, r.requested_by);
      if (r.requested_by.person) actors.set(`member:${r.requested_by.person}`, { type: 'member', id: r.requested_by.person });
      if (r.decided_by) actors.set(`${r.decided_by.type}:${r.decided_by.id}`, r.decided_by);
      if (r.decided_by?.person) actors.set(`member:${r.decided_by.person}`, { type: 'member', id: r.decided_by.person });
    }
    for (const [key, a] of [...actors].slice(0, MAX_LOOKUPS)) {
      if (a.type === 'agent' || a.type === 'api_key') {
        jobs.push(deps.identity.apiKeyView(workspace, a.id).then((k) => { if (k?.name) names.actors.set(key, k.name); }, () => undefined));
      } else if (a.type === 'member') {
        jobs.push(deps.people.user(a.id).then((u) => { if (u) names.actors.set(key, u.name ?? u.email); }, () => undefined));
      }
    }
    await Promise.all(jobs);
    return names;
  };

  /** One page of the inbox through `approvals.list`, split into pending and the rest. */
  const load = async (principal: Principal, cursor: string | undefined) => {
    const out = await deps.pipeline.invokeReadAs(principal, 'approvals.list', { limit: 100, ...(cursor ? { cursor } : {}) }) as { rows: Approval[]; next_cursor?: string };
    return { pending: out.rows.filter((r) => r.status === 'pending'), done: out.rows.filter((r) => r.status !== 'pending'), next: out.next_cursor };
  };

  const lists = async (req: Request, res: Response, t: Translator, ctx: { principal: Principal; workspace: string }, cursor: string | undefined): Promise<SafeHtml> => {
    const { pending, done, next } = await load(ctx.principal, cursor);
    const names = await lookUp(ctx.principal, ctx.workspace, [...pending, ...done]);
    const csrfToken = deps.csrf.issue(req, res, 'app-approvals-decide');
    const ws = ctx.workspace;
    return html`
<section aria-labelledby="pending-heading">
<h2 id="pending-heading" tabindex="-1">${t.t('inbox.pending')}</h2>
<p class="note" id="pending-empty" ${pending.length ? html`hidden` : ''}>${t.t('inbox.pending.none')}</p>
<ol class="approvals" id="pending-list">${pending.map((r) => item(t, r, names, { csrf: csrfToken, ws }))}</ol>
</section>
<section aria-labelledby="done-heading">
<h2 id="done-heading">${t.t('inbox.done')}</h2>
<p class="note" id="done-empty" ${done.length ? html`hidden` : ''}>${t.t('inbox.done.none')}</p>
<ol class="approvals" id="done-list">${done.map((r) => item(t, r, names, null))}</ol>
<p class="more" id="done-more">${next ? html`<a href="/app/approvals?ws=${encodeURIComponent(ws)}&amp;cursor=${encodeURIComponent(next)}">${t.t('inbox.more')}</a>` : ''}</p>
</section>`;
  };

  const fail = (req: Request, res: Response, t: Translator, err: unknown, signOutCsrf: string) => {
    deps.log.error({ err }, 'approvals page failed');
    sendAppPage(req, res, { t, status: 500, title: t.t('error.title'), current: 'approvals', signOutCsrf, body: html`<h1>${t.t('error.title')}</h1><p>${t.t('error.retry')}</p>` });
  };

  const page = async (req: Request, res: Response, extra: { status?: number; notice?: string; error?: string } = {}) => {
    const t = localeOf(req, res);
    const signOutCsrf = deps.csrf.issue(req, res, 'app-sign-out');
    try {
      const s = await deps.session(req);
      if (!s) return res.redirect(303, `/app/sign-in?next=${encodeURIComponent(req.originalUrl.slice(0, 500))}`);
      if (langAsked(req)) await deps.people.setLocale(s.user, t.locale);
      const ctx = await context(s, req.query.ws ?? req.body?.ws);
      if (!ctx.chosen || !ctx.principal) {
        return sendAppPage(req, res, { t, title: t.t('inbox.title'), current: 'approvals', signOutCsrf, body: html`<h1>${t.t('inbox.title')}</h1><p>${t.t('inbox.noWorkspace')}</p>` });
      }
      const workspaces = await Promise.all(ctx.memberships.map(async (m) => ({ id: m.workspace, name: (await deps.identity.workspace(m.workspace))?.name ?? m.workspace })));
      const current = workspaces.find((w) => w.id === ctx.chosen!.workspace)!;
      const cursor = typeof req.query.cursor === 'string' && CURSOR.test(req.query.cursor) ? req.query.cursor : undefined;
      let body: SafeHtml;
      try {
        body = await lists(req, res, t, { principal: ctx.principal, workspace: current.id }, cursor);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code !== 'forbidden' && code !== 'policy_denied' && code !== 'insufficient_scope') throw err;
        body = html`<p class="error" role="alert">${t.t('inbox.cannotRead', { code: code ?? '' })}</p>`;
      }
      sendAppPage(req, res, {
        t, status: extra.status, title: t.t('inbox.title'), current: 'approvals', signOutCsrf, script: 'inbox.js',
        meta: {
          'cuadra-token': ctx.token,
          'cuadra-inbox-list': `/app/approvals/lists?ws=${encodeURIComponent(current.id)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          'cuadra-say-new': t.t('inbox.live.new'),
          'cuadra-say-updated': t.t('inbox.live.updated'),
        },
        body: html`<h1>${t.t('inbox.heading', { workspace: current.name })}</h1>
${workspaces.length > 1 ? html`<p class="workspaces"><span>${t.t('inbox.workspace')}:</span> ${workspaces.map((w) => (w.id === current.id ? html`<strong>${w.name}</strong> ` : html`<a href="/app/approvals?ws=${encodeURIComponent(w.id)}">${w.name}</a> `))}</p>` : ''}
${extra.notice ? html`<p class="notice" role="status" id="notice">${extra.notice}</p>` : ''}
${extra.error ? html`<p class="error" role="alert" id="notice">${extra.error}</p>` : ''}
<p class="note">${t.t('inbox.live.connected')}</p>
<p id="live-status" class="sr-only" role="status" aria-live="polite"></p>
${body}`,
      });
    } catch (err) {
      fail(req, res, t, err, signOutCsrf);
    }
  };

  router.get('/app/approvals', (req, res) => {
    const decided = req.query.decided;
    const tool = typeof req.query.tool === 'string' && /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/.test(req.query.tool) ? req.query.tool : '';
    const t = localeOf(req, res);
    const notice = decided === 'approve' || decided === 'reject' ? t.t(`inbox.decided.${decided}` as MessageKey, { tool }) : undefined;
    return page(req, res, { notice });
  });

  // The lists alone, for the live script (same session, same rendering).
  router.get('/app/approvals/lists', async (req, res) => {
    const t = localeOf(req, res);
    try {
      const s = await deps.session(req);
      if (!s) return res.status(401).type('text').send('Sign in again.');
      const ctx = await context(s, req.query.ws);
      if (!ctx.chosen || !ctx.principal) return res.status(404).type('text').send('No workspace.');
      const cursor = typeof req.query.cursor === 'string' && CURSOR.test(req.query.cursor) ? req.query.cursor : undefined;
      const body = await lists(req, res, t, { principal: ctx.principal, workspace: ctx.chosen.workspace }, cursor);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      res.type('html').send(`<!doctype html><html lang="${t.lang}"><head><title>lists</title></head><body>${body.value}</body></html>`);
    } catch (err) {
      deps.log.error({ err }, 'approvals lists failed');
      res.status(500).type('text').send('Something went wrong.');
    }
  });

  router.post('/app/approvals/:id/decide', form, async (req, res) => {
    const t = localeOf(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const ws = typeof body.ws === 'string' && ID.test(body.ws) ? body.ws : '';
    try {
      const s = await deps.session(req);
      if (!s) return res.redirect(303, '/app/sign-in?next=%2Fapp%2Fapprovals');
      if (!deps.csrf.check(req, 'app-approvals-decide', body.csrf)) return page(req, res, { status: 403, error: t.t('inbox.expired') });
      const decision = body.decision === 'approve' || body.decision === 'reject' ? body.decision : null;
      const id = ID.test(req.params.id) ? req.params.id : null;
      const reason = typeof body.reason === 'string' ? body.reason.trim().slice(0, 1000) : '';
      if (!decision || !id) return page(req, res, { status: 400, error: t.t('inbox.refused', { error: 'decision', code: 'invalid_input' }) });
      const ctx = await context(s, ws);
      if (!ctx.chosen) return page(req, res, { status: 404, error: t.t('inbox.noWorkspace') });
      try {
        const answer = await deps.pipeline.invoke({
          authorization: `Bearer ${ctx.token}`, tool: 'approvals.decide',
          body: async () => ({ id, decision, ...(reason ? { reason } : {}) }),
        });
        const tool = (answer.body as { output?: { approval?: { tool?: string } } }).output?.approval?.tool ?? '';
        return res.redirect(303, `/app/approvals?ws=${encodeURIComponent(ctx.chosen.workspace)}&decided=${decision}&tool=${encodeURIComponent(tool)}`);
      } catch (err) {
        if (!(err instanceof PipelineRefusal)) throw err;
        const status = err.error.code === 'conflict' ? 409 : err.error.code === 'not_found' ? 404 : 403;
        return page(req, res, { status, error: t.t('inbox.refused', { error: err.error.message, code: err.error.code }) });
      }
    } catch (err) {
      fail(req, res, t, err, deps.csrf.issue(req, res, 'app-sign-out'));
    }
  });

  return router;
}

/** What the inbox looked up for a view: names by id, who asked, and the current record of each pending update. */
type Looked = Names & { actors: Map<string, string>; current: Map<string, Record<string, unknown>> };

/** The get tool (and its input) that reads the record an update tool would change: `x.update {id}` → `x.get {id}`. */
export function updateReader(tool: string, input: Record<string, unknown>): { tool: string; input: Record<string, unknown> } | null {
  const m = /^([a-z_]+)\.(update|patch)$/.exec(tool);
  if (!m) return null;
  if (typeof input.id === 'string' && ID.test(input.id)) return { tool: `${m[1]}.get`, input: { id: input.id } };
  if (typeof input.code === 'string' && /^[0-9A-Za-z_.-]{1,20}$/.test(input.code)) return { tool: `${m[1]}.get`, input: { code: input.code } };
  return null;
}

/** A value in brief, as the change tables show it (amounts, balances and values by name as money, long structures cut). */
function valueText(t: Translator, key: string, v: unknown, currency: string): string {
  if (v === undefined || v === null || v === '') return '—';
  if (typeof v === 'number' && Number.isSafeInteger(v) && /(^|_)(price|amount|total|salary|balance|paid|applied|unapplied|added|due|value)$/.test(key)) return t.money(v, currency);
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  const json = JSON.stringify(v);
  return json.length > 160 ? `${json.slice(0, 159)}…` : json;
}

/** The fields a pending update changes: before (the record now) → after (the input), only those that differ. */
function changeRows(t: Translator, r: Approval, current: Record<string, unknown> | undefined): SafeHtml {
  if (!current) return html``;
  const currency = typeof current.currency === 'string' ? current.currency : 'COP';
  const rows = Object.entries(r.input)
    .filter(([k]) => k !== 'id' && k !== 'code')
    .filter(([k, v]) => JSON.stringify(current[k] ?? null) !== JSON.stringify(v ?? null))
    .slice(0, 20);
  if (rows.length === 0) return html`<p class="note">${t.t('inbox.change.none')}</p>`;
  return html`<table class="change"><caption>${t.t('inbox.change')}</caption>
<thead><tr><th scope="col">${t.t('inbox.change.field')}</th><th scope="col">${t.t('inbox.change.before')}</th><th scope="col">${t.t('inbox.change.after')}</th></tr></thead>
<tbody>${rows.map(([k, v]) => html`<tr><th scope="row"><code>${k}</code></th><td class="before">${valueText(t, k, current[k], currency)}</td><td class="after">${valueText(t, k, v, currency)}</td></tr>`)}</tbody></table>`;
}

/**
 * What a held call would do if approved: its dry run (the tool's `preview`, computed by the same
 * path as the call when it was held) — the journal lines it would post and the records it would
 * change, each field before → after. Nothing when the tool has no preview.
 */
function dryRunRows(t: Translator, r: Approval): SafeHtml {
  const preview = r.preview;
  if (!preview) return html``;
  if (typeof preview.error === 'string') return html`<p class="note">${t.t('inbox.dry.failed', { error: preview.error })}</p>`;
  const changes = (Array.isArray(preview.changes) ? preview.changes : []) as { source?: unknown; id?: unknown; op?: unknown; before?: Record<string, unknown>; after?: Record<string, unknown> }[];
  const lines = (Array.isArray(preview.journal_lines) ? preview.journal_lines : []) as { account?: unknown; name?: unknown; debit?: unknown; credit?: unknown }[];
  const currency = String(changes.find((c) => typeof c.after?.currency === 'string')?.after?.currency ?? (typeof r.input.currency === 'string' ? r.input.currency : 'COP'));
  const amount = (v: unknown) => (typeof v === 'number' && v > 0 ? t.money(v, currency) : '');
  const fields = (c: (typeof changes)[number]) => Object.entries(c.after ?? {}).filter(([k]) => k !== 'lines').slice(0, 8);
  return html`<section class="dry-run" aria-labelledby="dry-${r.id}"><h4 id="dry-${r.id}">${t.t('inbox.dry')}</h4>
${lines.length ? html`<table class="change journal"><caption>${t.t('inbox.dry.lines')}</caption>
<thead><tr><th scope="col">${t.t('inbox.dry.account')}</th><th scope="col" class="num">${t.t('inbox.dry.debit')}</th><th scope="col" class="num">${t.t('inbox.dry.credit')}</th></tr></thead>
<tbody>${lines.slice(0, 40).map((l) => html`<tr><th scope="row"><code>${String(l.account ?? '')}</code> ${typeof l.name === 'string' ? l.name : ''}</th><td class="num">${amount(l.debit)}</td><td class="num">${amount(l.credit)}</td></tr>`)}</tbody></table>` : ''}
${changes.length ? html`<table class="change"><caption>${t.t('inbox.dry.records')}</caption>
<thead><tr><th scope="col">${t.t('inbox.change.field')}</th><th scope="col">${t.t('inbox.change.before')}</th><th scope="col">${t.t('inbox.change.after')}</th></tr></thead>
<tbody>${changes.slice(0, 12).map((c) => html`<tr class="record"><th scope="rowgroup" colspan="3"><code>${String(c.source ?? '')}</code> <code>${String(c.id ?? '')}</code> · ${c.op === 'insert' ? t.t('inbox.dry.insert') : t.t('inbox.dry.update')}</th></tr>
${fields(c).map(([k, v]) => html`<tr><th scope="row"><code>${k}</code></th><td class="before">${c.op === 'insert' ? '—' : valueText(t, k, c.before?.[k], currency)}</td><td class="after">${valueText(t, k, v, currency)}</td></tr>`)}`)}</tbody></table>` : ''}
</section>`;
}

function actorText(t: Translator, who: { type: string; id: string; person?: string }, names: Map<string, string>): string {
  // A person acting through an app (these pages included): the person's name, then the app.
  const person = who.person ? names.get(`member:${who.person}`) ?? who.person : null;
  if (person && who.type === 'oauth_app') return `${person} · ${who.id === 'cuadra-web' ? t.t('actor.web') : t.t('actor.oauth_app', { id: who.id })}`;
  const name = names.get(`${who.type}:${who.id}`);
  const known = ['agent', 'api_key', 'oauth_app', 'member', 'service', 'visitor'].includes(who.type);
  const label = name ? `${name} (${who.id})` : who.id;
  return known ? t.t(`actor.${who.type}` as MessageKey, { id: label }) : t.t('actor.other', { type: who.type, id: label });
}

/** One approval: the sentence, who asked, the policy, the input on demand; a decision form while pending, the result after. */
function item(t: Translator, r: Approval, names: Looked, decide: { csrf: string; ws: string } | null): SafeHtml {
  const sentence = describeCall(t, r.tool, r.input, names);
  const hid = `h-${r.id}`;
  const result = r.result;
  return html`<li class="approval ${r.status} mode-${r.mode}" id="${r.id}" data-version="${r.status}|${r.decided_at ?? ''}|${result ? result.status : ''}">
<h3 id="${hid}" tabindex="-1">${sentence}<span class="status ${r.status}">${t.t(`status.${r.status}` as MessageKey)}</span></h3>
<dl>
  <dt>${t.t('inbox.tool')}</dt><dd><code>${r.tool}</code></dd>
  <dt>${t.t('inbox.askedBy')}</dt><dd>${actorText(t, r.requested_by, names.actors)} · ${t.t('actor.role')} <code>${r.requested_by.role}</code></dd>
  <dt>${t.t('inbox.requestedAt')}</dt><dd><time datetime="${r.requested_at}">${t.dateTime(r.requested_at)}</time></dd>
  <dt>${t.t('inbox.policy')}</dt><dd>${r.policy ? html`«${r.policy.name}»` : t.t('inbox.policy.unknown')}</dd>
  ${r.status === 'pending' ? html`<dt>${t.t('inbox.expires')}</dt><dd><time datetime="${r.expires_at}">${t.dateTime(r.expires_at)}</time></dd>` : ''}
  ${r.decided_by ? html`<dt>${t.t('inbox.decidedBy')}</dt><dd>${actorText(t, r.decided_by, names.actors)}${r.decided_at ? html` · <time datetime="${r.decided_at}">${t.dateTime(r.decided_at)}</time>` : ''}</dd>` : ''}
  ${r.reason ? html`<dt>${t.t('inbox.reasonShown')}</dt><dd>${r.reason}</dd>` : ''}
  ${r.status !== 'pending' ? html`<dt>${t.t('inbox.result')}</dt><dd>${result ? resultText(result) : r.status === 'rejected' || r.status === 'expired' ? t.t('inbox.result.notRun') : t.t('inbox.result.none')}</dd>` : ''}
</dl>
${r.status === 'pending' && updateReader(r.tool, r.input) ? changeRows(t, r, names.current.get(r.id)) : ''}
${r.status === 'pending' ? dryRunRows(t, r) : ''}
<details><summary>${t.t('inbox.input')}</summary><pre>${JSON.stringify(r.input, null, 2)}</pre></details>
${result && result.status === 200 ? html`<details><summary>${t.t('inbox.result.show')}</summary><pre>${JSON.stringify(result.body, null, 2)}</pre></details>` : ''}
${decide ? html`<form method="post" action="/app/approvals/${r.id}/decide">
  <input type="hidden" name="csrf" value="${decide.csrf}"><input type="hidden" name="ws" value="${decide.ws}">
  <label for="reason-${r.id}">${t.t('inbox.reason')}</label>
  <textarea id="reason-${r.id}" name="reason" maxlength="1000" rows="2"></textarea>
  <div class="actions">
    <button type="submit" name="decision" value="approve" class="primary" aria-describedby="${hid}">${t.t('inbox.approve')}</button>
    <button type="submit" name="decision" value="reject" class="danger" aria-describedby="${hid}">${t.t('inbox.reject')}</button>
  </div>
</form>` : ''}
</li>`;
}

/** A result in brief: `200 ok` with the output's first record id, or the refusal's code and message. */
function resultText(result: { status: number; body: Record<string, unknown> }): SafeHtml {
  if (result.status === 200) {
    const output = (result.body.output ?? {}) as Record<string, unknown>;
    const first = Object.values(output).find((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v));
    const id = first && typeof first.id === 'string' ? first.id : null;
    return html`<code>${result.status}</code> ok${id ? html` · <code>${id}</code>` : ''}`;
  }
  return html`<code>${result.status}</code> <code>${String(result.body.code ?? '')}</code> ${String(result.body.error ?? '')}`;
}
