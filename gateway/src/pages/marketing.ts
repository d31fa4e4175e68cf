import express, { Router, type Request, type Response } from 'express';
import { html, type SafeHtml } from './html.ts';
import { parseDateField, type MessageKey, type Translator } from './i18n.ts';
import { workspacePageKit, type Body, type Ctx, type Outcome, type WorkspacePageDeps } from './workspace-kit.ts';

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const TAG = /^[a-z0-9_:-]{1,40}$/;
/** The row statuses a campaign's results count, in the order the page shows them. */
const RESULT_STATUSES = ['queued', 'sent', 'delivered', 'bounced_hard', 'bounced_soft', 'complained', 'unsubscribed', 'replied', 'failed', 'in_doubt', 'cancelled'] as const;

type Row = Record<string, any>;

/**
 * `/app/marketing`: the e-mail accounts (connect, test, their rate), templates (edit with a preview
 * rendered for a real party), campaigns (compose, the audience counted by the send's dry run,
 * schedule, send — held for approval by default —, results by status) and sites (pages, publish).
 * Every read is a read tool and every change a tool call through the whole pipeline as the person
 * (workspace-kit.ts), so roles, policies, approvals and the ledger apply as to any caller.
 */
export function marketingPages(deps: WorkspacePageDeps): Router {
  const router = Router();
  // Templates are long (MJML up to 200 kB): the editor's form takes that, nothing else does.
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 40 });
  const templateForm = express.urlencoded({ extended: false, limit: '320kb', parameterLimit: 10 });
  const { context, act, read, refusedRead, isRefused, outcomeText, show, post, statusOf, hidden, text } = workspacePageKit(deps, { scope: 'tools sites.edit' });
  const idParam = (req: Request) => (ID.test(String(req.params.id)) ? String(req.params.id) : 'invalid');
  const wsQuery = (ctx: Ctx) => `ws=${encodeURIComponent(ctx.workspace)}`;
  const refusedTop = (t: Translator, ctx: Ctx, o: Outcome, done: string) => ({ status: statusOf(o), top: outcomeText(t, ctx, o, done) });

  // ——— the overview: accounts, templates, campaigns, sites ———
  const accountsSection = (t: Translator, ctx: Ctx, csrf: string, accounts: Row[]): SafeHtml => html`
<section aria-labelledby="mkt-accounts"><h2 id="mkt-accounts">${t.t('mkt.accounts')}</h2>
${accounts.length === 0 ? html`<p class="note">${t.t('mkt.accounts.none')}</p>` : html`<table class="grid" id="accounts-table"><caption class="sr-only">${t.t('mkt.accounts')}</caption>
<thead><tr><th scope="col">${t.t('mkt.name')}</th><th scope="col">${t.t('mkt.account.from')}</th><th scope="col">${t.t('mkt.account.transport')}</th><th scope="col">${t.t('mkt.account.rate')}</th><th scope="col">${t.t('mkt.state')}</th></tr></thead>
<tbody>${accounts.map((a) => html`<tr id="${a.id}"><th scope="row">${a.name}</th><td>${a.from_name} &lt;${a.from_email}&gt;</td>
<td>${a.transport === 'system' ? t.t('mkt.account.system') : html`<code>${a.smtp?.host}:${a.smtp?.port}</code>`}</td>
<td class="num">${t.t('mkt.account.perMinute', { n: a.rate_per_minute })}</td>
<td><span class="badge ${a.status === 'verified' ? 'ok' : a.status === 'failed' ? 'bad' : ''}">${t.t(`mkt.account.status.${a.status}` as MessageKey)}</span>${a.last_error ? html` <span class="note">${a.last_error}</span>` : ''}
<form method="post" action="/app/marketing/accounts/${a.id}/verify">${hidden(csrf, ctx)}<button type="submit" class="secondary small" aria-label="${t.t('mkt.account.verify.label', { name: a.name })}">${t.t('mkt.account.verify')}</button></form>
${a.dns_records?.length ? html`<details><summary>${t.t('mkt.account.dns')}</summary><ul>${a.dns_records.map((r: Row) => html`<li>${r.purpose}: <code>${r.name}</code> TXT <code>${r.value}</code></li>`)}</ul></details>` : ''}</td></tr>`)}</tbody></table>`}
<form class="card" method="post" action="/app/marketing/accounts" aria-labelledby="mkt-connect">${hidden(csrf, ctx)}
<h3 id="mkt-connect">${t.t('mkt.account.connect')}</h3><p class="note">${t.t('mkt.account.connect.note')}</p>
<div class="row"><div><label for="acc-name">${t.t('mkt.name')}</label><input id="acc-name" name="name" type="text" required maxlength="100"></div>
<div><label for="acc-from">${t.t('mkt.account.fromEmail')}</label><input id="acc-from" name="from_email" type="email" required maxlength="254"></div>
<div><label for="acc-from-name">${t.t('mkt.account.fromName')}</label><input id="acc-from-name" name="from_name" type="text" maxlength="100"></div></div>
<fieldset><legend>${t.t('mkt.account.smtp')}</legend>
<div class="row"><div><label for="smtp-host">${t.t('mkt.account.host')}</label><input id="smtp-host" name="smtp_host" type="text" maxlength="253"></div>
<div><label for="smtp-port">${t.t('mkt.account.port')}</label><input id="smtp-port" name="smtp_port" type="number" min="1" max="65535"></div></div>
<div class="row"><div><label for="smtp-user">${t.t('mkt.account.user')}</label><input id="smtp-user" name="smtp_user" type="text" maxlength="254" autocomplete="off"></div>
<div><label for="smtp-password">${t.t('mkt.account.password')}</label><input id="smtp-password" name="smtp_password" type="password" maxlength="1024" autocomplete="new-password"></div></div>
<label class="choice"><input type="checkbox" name="smtp_secure" value="1"> <span>${t.t('mkt.account.secure')}</span></label></fieldset>
<button type="submit" class="primary">${t.t('mkt.account.connect.submit')}</button></form></section>`;

  const templatesSection = (t: Translator, ctx: Ctx, csrf: string, templates: Row[]): SafeHtml => html`
<section aria-labelledby="mkt-templates"><h2 id="mkt-templates">${t.t('mkt.templates')}</h2>
${templates.length === 0 ? html`<p class="note">${t.t('mkt.templates.none')}</p>` : html`<table class="grid" id="templates-table"><caption class="sr-only">${t.t('mkt.templates')}</caption>
<thead><tr><th scope="col">${t.t('mkt.name')}</th><th scope="col">${t.t('mkt.template.subject')}</th><th scope="col">${t.t('mkt.template.version')}</th><th scope="col">${t.t('mkt.updated')}</th></tr></thead>
<tbody>${templates.map((x) => html`<tr id="${x.id}"><th scope="row"><a href="/app/marketing/templates/${x.id}?${wsQuery(ctx)}">${x.name}</a></th><td>${x.subject}</td><td class="num">${x.version}</td><td class="date">${t.date(x.updated_at)}</td></tr>`)}</tbody></table>`}
<form class="card" method="post" action="/app/marketing/templates" aria-labelledby="mkt-new-template">${hidden(csrf, ctx)}
<h3 id="mkt-new-template">${t.t('mkt.template.new')}</h3><p class="note">${t.t('mkt.template.new.note')}</p>
<label for="tpl-name">${t.t('mkt.name')}</label><input id="tpl-name" name="name" type="text" required maxlength="200">
<button type="submit" class="primary">${t.t('mkt.template.create')}</button></form></section>`;

  const countsText = (t: Translator, counts: Record<string, number> | undefined): SafeHtml => {
    const shown = RESULT_STATUSES.filter((s) => (counts?.[s] ?? 0) > 0);
    return shown.length ? html`${shown.map((s, i) => html`${i ? ' · ' : ''}${t.t(`mkt.row.${s}` as MessageKey)} ${t.number(counts![s])}`)}` : html`<span class="note">—</span>`;
  };

  const campaignsSection = (t: Translator, ctx: Ctx, csrf: string, campaigns: Row[], templates: Row[], accounts: Row[]): SafeHtml => html`
<section aria-labelledby="mkt-campaigns"><h2 id="mkt-campaigns">${t.t('mkt.campaigns')}</h2>
${campaigns.length === 0 ? html`<p class="note">${t.t('mkt.campaigns.none')}</p>` : html`<table class="grid" id="campaigns-table"><caption class="sr-only">${t.t('mkt.campaigns')}</caption>
<thead><tr><th scope="col">${t.t('mkt.name')}</th><th scope="col">${t.t('mkt.state')}</th><th scope="col">${t.t('mkt.campaign.sendAt')}</th><th scope="col">${t.t('mkt.campaign.results')}</th></tr></thead>
<tbody>${campaigns.map((c) => html`<tr id="${c.id}"><th scope="row"><a href="/app/marketing/campaigns/${c.id}?${wsQuery(ctx)}">${c.name}</a></th>
<td><span class="badge">${t.t(`mkt.campaign.status.${c.status}` as MessageKey)}</span></td><td class="date">${c.send_at ? t.dateTime(c.send_at) : '—'}</td><td>${countsText(t, c.counts)}</td></tr>`)}</tbody></table>`}
${templates.length && accounts.length ? html`<form class="card" method="post" action="/app/marketing/campaigns" aria-labelledby="mkt-new-campaign">${hidden(csrf, ctx)}
<h3 id="mkt-new-campaign">${t.t('mkt.campaign.new')}</h3>
<div class="row"><div><label for="cmp-name">${t.t('mkt.name')}</label><input id="cmp-name" name="name" type="text" required maxlength="200"></div>
<div><label for="cmp-template">${t.t('mkt.campaign.template')}</label><select id="cmp-template" name="template_id">${templates.map((x) => html`<option value="${x.id}">${x.name}</option>`)}</select></div>
<div><label for="cmp-account">${t.t('mkt.campaign.account')}</label><select id="cmp-account" name="account_id">${accounts.map((a) => html`<option value="${a.id}">${a.name} (${a.from_email})</option>`)}</select></div></div>
<div class="row"><div><label for="cmp-kind">${t.t('mkt.campaign.kind')}</label><select id="cmp-kind" name="kind"><option value="">${t.t('mkt.campaign.kind.any')}</option>
<option value="customer">${t.t('mkt.campaign.kind.customer')}</option><option value="vendor">${t.t('mkt.campaign.kind.vendor')}</option><option value="both">${t.t('mkt.campaign.kind.both')}</option></select></div>
<div><label for="cmp-tags">${t.t('mkt.campaign.tags')}</label><input id="cmp-tags" name="tags" type="text" maxlength="900" aria-describedby="cmp-tags-help"><p class="note" id="cmp-tags-help">${t.t('mkt.campaign.tags.help')}</p></div></div>
<button type="submit" class="primary">${t.t('mkt.campaign.create')}</button></form>` : html`<p class="note">${t.t('mkt.campaign.needs')}</p>`}</section>`;

  const sitesSection = (t: Translator, ctx: Ctx, csrf: string, sites: Row[]): SafeHtml => html`
<section aria-labelledby="mkt-sites"><h2 id="mkt-sites">${t.t('mkt.sites')}</h2>
${sites.length === 0 ? html`<p class="note">${t.t('mkt.sites.none')}</p>` : html`<table class="grid" id="sites-table"><caption class="sr-only">${t.t('mkt.sites')}</caption>
<thead><tr><th scope="col">${t.t('mkt.name')}</th><th scope="col">${t.t('mkt.site.pages')}</th><th scope="col">${t.t('mkt.site.published')}</th></tr></thead>
<tbody>${sites.map((s) => html`<tr id="${s.id}"><th scope="row">${s.name}<br><a href="${s.url}">${s.url}</a><br><a href="/app/marketing/sites/${s.id}?${wsQuery(ctx)}">${t.t('mkt.site.edit')}<span class="sr-only"> · ${s.name}</span></a></th>
<td><ul class="plain">${(s.pages as Row[]).map((p) => html`<li><code>${p.path}</code> ${p.title ?? ''}</li>`)}</ul></td>
<td>${s.published_version ? html`<span class="badge ok">${t.t('mkt.site.version', { version: s.published_version, versions: s.versions })}</span>` : html`<span class="badge">${t.t('mkt.site.unpublished')}</span>`}
<form method="post" action="/app/marketing/sites/${s.id}/publish">${hidden(csrf, ctx)}<button type="submit" class="secondary small" aria-label="${t.t('mkt.site.publish.label', { name: s.name })}">${t.t('mkt.site.publish')}</button></form></td></tr>`)}</tbody></table>`}
</section>`;

  /** Reads a list tool's first page (up to 100 rows), or the refusal shown in its place. */
  const rows = async (ctx: Ctx, tool: string, input: Record<string, unknown> = {}): Promise<Row[] | { refused: string }> => {
    const out = await read<{ rows: Row[] }>(ctx, tool, { limit: 100, ...input });
    return isRefused(out) ? out : out.rows;
  };
  const overview: Body = async (t, ctx, csrf) => {
    const [accounts, templates, campaigns, sites] = await Promise.all([rows(ctx, 'email_accounts.list'), rows(ctx, 'email_templates.list'), rows(ctx, 'email_campaigns.list'), rows(ctx, 'sites.list')]);
    const listed = (r: Row[] | { refused: string }) => (isRefused(r) ? [] : r);
    return html`${isRefused(accounts) ? refusedRead(t, accounts) : accountsSection(t, ctx, csrf, accounts)}
${isRefused(templates) ? refusedRead(t, templates) : templatesSection(t, ctx, csrf, templates)}
${isRefused(campaigns) ? refusedRead(t, campaigns) : campaignsSection(t, ctx, csrf, campaigns, listed(templates), listed(accounts))}
${isRefused(sites) ? refusedRead(t, sites) : sitesSection(t, ctx, csrf, sites)}`;
  };

  router.get('/app/marketing', (req, res) => show(req, res, 'marketing', overview));
  router.post('/app/marketing/accounts', form, post('marketing', overview, async (t, ctx, f) => {
    const input: Record<string, unknown> = { name: text(f.name, 100), from_email: text(f.from_email, 254) };
    if (text(f.from_name, 100)) input.from_name = text(f.from_name, 100);
    // An own server when a host is given; else the deployment's SMTP server (the tool's default).
    if (text(f.smtp_host, 253)) {
      input.smtp = { host: text(f.smtp_host, 253), port: Number(text(f.smtp_port, 5)) || 587, secure: f.smtp_secure === '1', user: text(f.smtp_user, 254), password: typeof f.smtp_password === 'string' ? f.smtp_password.slice(0, 1024) : '' };
    }
    const o = await act(ctx, 'email_accounts.connect', input);
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.account.connected', { name: o.output.account.name }) : '');
  }));
  router.post('/app/marketing/accounts/:id/verify', form, post('marketing', overview, async (t, ctx, _f, req) => {
    const o = await act(ctx, 'email_accounts.verify', { id: idParam(req) });
    if (o.kind === 'ok' && o.output.account.status !== 'verified') {
      return { status: 502, top: html`<p class="error" role="alert" id="notice">${t.t('mkt.account.verify.failed', { name: o.output.account.name, error: o.output.account.last_error ?? '' })}</p>` };
    }
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.account.verified', { name: o.output.account.name }) : '');
  }));
  router.post('/app/marketing/templates', form, post('marketing', overview, async (t, ctx, f) => {
    const o = await act(ctx, 'email_templates.create', { name: text(f.name, 200) });
    if (o.kind === 'ok') {
      return { status: 201, top: html`<p class="notice" role="status" id="notice">${t.t('mkt.template.created')} <a href="/app/marketing/templates/${o.output.template.id}?${wsQuery(ctx)}">${t.t('mkt.template.edit', { name: o.output.template.name })}</a></p>` };
    }
    return refusedTop(t, ctx, o, '');
  }));
  router.post('/app/marketing/campaigns', form, post('marketing', overview, async (t, ctx, f) => {
    const audience: Record<string, unknown> = {};
    const kind = text(f.kind, 10);
    if (kind) audience.kind = kind;
    // Tags as typed go to the tool, which refuses a malformed one at its field.
    const tags = text(f.tags, 900).split(/[\s,]+/).filter(Boolean);
    if (tags.length) audience.tags = tags.map((x) => (TAG.test(x) ? x : x.slice(0, 41)));
    const o = await act(ctx, 'email_campaigns.create', { name: text(f.name, 200), template_id: text(f.template_id, 64), account_id: text(f.account_id, 64), audience });
    if (o.kind === 'ok') {
      return { status: 201, top: html`<p class="notice" role="status" id="notice">${t.t('mkt.campaign.created')} <a href="/app/marketing/campaigns/${o.output.campaign.id}?${wsQuery(ctx)}">${o.output.campaign.name}</a></p>` };
    }
    return refusedTop(t, ctx, o, '');
  }));
  router.post('/app/marketing/sites/:id/publish', form, post('marketing', overview, async (t, ctx, _f, req) => {
    const o = await act(ctx, 'sites.publish', { id: idParam(req) });
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.site.publishedNow', { name: o.output.site.name, version: o.output.site.published_version }) : '');
  }));

  // ——— a site's pages: edited one at a time through sites.pages.* (each change a new draft revision) ———
  const pageForm = express.urlencoded({ extended: false, limit: '640kb', parameterLimit: 10 });
  const siteBody: Body = async (t, ctx, csrf, req) => {
    const id = idParam(req);
    const [all, out] = await Promise.all([rows(ctx, 'sites.list'), read<{ revision: number; rows: Row[] }>(ctx, 'sites.pages.list', { site_id: id })]);
    if (isRefused(all)) return refusedRead(t, all);
    if (isRefused(out)) return refusedRead(t, out);
    const site = all.find((r) => r.id === id);
    if (!site) return html`<p class="error" role="alert">${t.t('mkt.site.missing')}</p>`;
    const action = (what: string) => `/app/marketing/sites/${id}/pages/${what}`;
    const keep = (p: Row) => html`${hidden(csrf, ctx)}<input type="hidden" name="path" value="${p.path}"><input type="hidden" name="revision" value="${out.revision}">`;
    return html`<p><a href="/app/marketing?${wsQuery(ctx)}">${t.t('mkt.back')}</a></p>
<h2 id="site-pages-h">${t.t('mkt.site.pages.heading', { name: site.name })}</h2><p class="note" id="site-revision">${t.t('mkt.site.pages.note', { revision: out.revision })}</p>
<ol id="site-pages">${out.rows.map((p, i) => html`<li><form class="card" method="post" action="${action('update')}" aria-labelledby="pg${i}-h">${keep(p)}
<h3 id="pg${i}-h"><code>${p.path}</code> ${p.title}</h3>
<div class="row"><div><label for="pg${i}-path">${t.t('mkt.site.page.path')}</label><input id="pg${i}-path" name="new_path" type="text" required maxlength="310" value="${p.path}"></div>
<div><label for="pg${i}-title">${t.t('mkt.site.page.title')}</label><input id="pg${i}-title" name="title" type="text" required maxlength="200" value="${p.title}"></div></div>
<label for="pg${i}-blocks">${t.t('mkt.site.page.blocks')}</label><textarea id="pg${i}-blocks" name="blocks" rows="8" class="code" aria-describedby="pg-blocks-help">${JSON.stringify(p.blocks, null, 2)}</textarea>
<button type="submit" class="primary" aria-label="${t.t('mkt.site.page.save.label', { path: p.path })}">${t.t('mkt.site.page.save')}</button></form>
<div class="row">${i > 0 ? html`<form method="post" action="${action('up')}">${keep(p)}<button type="submit" class="secondary small" aria-label="${t.t('mkt.site.page.up.label', { path: p.path })}">${t.t('mkt.site.page.up')}</button></form>` : ''}
${out.rows.length > 1 ? html`<form method="post" action="${action('delete')}">${keep(p)}<button type="submit" class="secondary small" aria-label="${t.t('mkt.site.page.delete.label', { path: p.path })}">${t.t('mkt.site.page.delete')}</button></form>` : ''}</div></li>`)}</ol>
<p class="note" id="pg-blocks-help">${t.t('mkt.site.page.blocks.help')}</p>
<form class="card" method="post" action="${action('create')}" aria-labelledby="pg-new-h">${hidden(csrf, ctx)}<input type="hidden" name="revision" value="${out.revision}">
<h3 id="pg-new-h">${t.t('mkt.site.page.new')}</h3>
<div class="row"><div><label for="pg-new-path">${t.t('mkt.site.page.path')}</label><input id="pg-new-path" name="path" type="text" required maxlength="310" placeholder="/contacto"></div>
<div><label for="pg-new-title">${t.t('mkt.site.page.title')}</label><input id="pg-new-title" name="title" type="text" required maxlength="200"></div></div>
<button type="submit" class="primary">${t.t('mkt.site.page.create')}</button></form>`;
  };
  /** The draft revision the form was made from: a change made meanwhile by someone else is then refused, not overwritten. */
  const revisionOf = (f: Record<string, unknown>) => (/^\d{1,9}$/.test(text(f.revision, 9)) ? Number(text(f.revision, 9)) : undefined);
  router.get('/app/marketing/sites/:id', (req, res) => show(req, res, 'marketing', siteBody));
  router.post('/app/marketing/sites/:id/pages/create', form, post('marketing', siteBody, async (t, ctx, f, req) => {
    const o = await act(ctx, 'sites.pages.create', { site_id: idParam(req), path: text(f.path, 310), title: text(f.title, 200), revision: revisionOf(f) });
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.site.page.created', { path: o.output.page.path, revision: o.output.revision }) : '');
  }));
  router.post('/app/marketing/sites/:id/pages/update', pageForm, post('marketing', siteBody, async (t, ctx, f, req) => {
    let blocks: unknown;
    try {
      blocks = JSON.parse(typeof f.blocks === 'string' ? f.blocks.slice(0, 600_000) : '[]');
    } catch (err) {
      return { status: 400, top: html`<p class="error" role="alert" id="notice">${t.t('mkt.site.page.badJson', { error: (err as Error).message })}</p>` };
    }
    const path = text(f.path, 310);
    const input: Record<string, unknown> = { site_id: idParam(req), path, title: text(f.title, 200), blocks, revision: revisionOf(f) };
    if (text(f.new_path, 310) !== path) input.new_path = text(f.new_path, 310);
    const o = await act(ctx, 'sites.pages.update', input);
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.site.page.saved', { path: o.output.page.path, revision: o.output.revision }) : '');
  }));
  router.post('/app/marketing/sites/:id/pages/delete', form, post('marketing', siteBody, async (t, ctx, f, req) => {
    const o = await act(ctx, 'sites.pages.delete', { site_id: idParam(req), path: text(f.path, 310), revision: revisionOf(f) });
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.site.page.deleted', { path: o.output.deleted, revision: o.output.revision }) : '');
  }));
  router.post('/app/marketing/sites/:id/pages/up', form, post('marketing', siteBody, async (t, ctx, f, req) => {
    const listed = await read<{ rows: Row[] }>(ctx, 'sites.pages.list', { site_id: idParam(req) });
    if (isRefused(listed)) return { status: 404, top: refusedRead(t, listed) };
    const order = listed.rows.map((p) => p.path as string);
    const at = order.indexOf(text(f.path, 310));
    if (at > 0) [order[at - 1], order[at]] = [order[at], order[at - 1]];
    const o = await act(ctx, 'sites.pages.reorder', { site_id: idParam(req), paths: order, revision: revisionOf(f) });
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.site.page.moved', { revision: o.output.revision }) : '');
  }));

  // ——— a template: edit, and its preview for a real party ———
  const templateBody: Body = async (t, ctx, csrf, req) => {
    const id = idParam(req);
    const [templates, parties] = await Promise.all([rows(ctx, 'email_templates.list'), rows(ctx, 'parties.list', { status: 'active' })]);
    if (isRefused(templates)) return refusedRead(t, templates);
    const x = templates.find((r) => r.id === id);
    if (!x) return html`<p class="error" role="alert">${t.t('mkt.template.missing')}</p>`;
    const party = typeof req.query.party === 'string' && ID.test(req.query.party) ? req.query.party : '';
    let preview: SafeHtml = html``;
    if (party) {
      const out = await read<{ subject: string; text: string }>(ctx, 'email_templates.preview', { id, party_id: party });
      preview = isRefused(out) ? refusedRead(t, out) : html`<section class="card" aria-labelledby="preview-h" id="preview"><h3 id="preview-h">${t.t('mkt.template.preview.heading')}</h3>
<p><strong>${t.t('mkt.template.subject')}:</strong> <span id="preview-subject">${out.subject}</span></p>
<iframe title="${t.t('mkt.template.preview.html')}" src="/app/marketing/templates/${id}/preview.html?${wsQuery(ctx)}&amp;party=${encodeURIComponent(party)}" sandbox="" class="preview"></iframe>
<details><summary>${t.t('mkt.template.preview.text')}</summary><pre id="preview-text">${out.text}</pre></details></section>`;
    }
    const partyRows = isRefused(parties) ? [] : parties;
    return html`<p><a href="/app/marketing?${wsQuery(ctx)}">${t.t('mkt.back')}</a></p>
<form class="card" method="post" action="/app/marketing/templates/${x.id}" aria-labelledby="tpl-edit">${hidden(csrf, ctx)}
<h2 id="tpl-edit">${t.t('mkt.template.edit', { name: x.name })}</h2><p class="note">${t.t('mkt.template.version.now', { version: x.version })} ${t.t('mkt.template.fields')}</p>
<label for="tpl-name">${t.t('mkt.name')}</label><input id="tpl-name" name="name" type="text" required maxlength="200" value="${x.name}">
<label for="tpl-subject">${t.t('mkt.template.subject')}</label><input id="tpl-subject" name="subject" type="text" required maxlength="300" value="${x.subject}">
<label for="tpl-mjml">${t.t('mkt.template.mjml')}</label><textarea id="tpl-mjml" name="mjml" rows="14" required maxlength="200000" class="code">${x.mjml}</textarea>
<label for="tpl-text">${t.t('mkt.template.text')}</label><textarea id="tpl-text" name="text" rows="8" required maxlength="100000" class="code">${x.text}</textarea>
<button type="submit" class="primary">${t.t('mkt.template.save')}</button></form>
<form class="card" method="get" action="/app/marketing/templates/${x.id}" aria-labelledby="tpl-preview"><input type="hidden" name="ws" value="${ctx.workspace}">
<h2 id="tpl-preview">${t.t('mkt.template.preview')}</h2>
${partyRows.length ? html`<label for="tpl-party">${t.t('mkt.template.preview.party')}</label><select id="tpl-party" name="party">${partyRows.map((p) => html`<option value="${p.id}" ${p.id === party ? html`selected` : ''}>${p.name}</option>`)}</select>
<button type="submit" class="secondary">${t.t('mkt.template.preview.show')}</button>` : html`<p class="note">${t.t('mkt.template.preview.noParty')}</p>`}</form>
${preview}`;
  };
  router.get('/app/marketing/templates/:id', (req, res) => show(req, res, 'marketing', templateBody, { frames: true }));
  router.post('/app/marketing/templates/:id', templateForm, post('marketing', templateBody, async (t, ctx, f, req) => {
    const long = (v: unknown, max: number) => (typeof v === 'string' ? v.replace(/\r\n/g, '\n').slice(0, max) : '');
    const o = await act(ctx, 'email_templates.update', { id: idParam(req), name: text(f.name, 200), subject: text(f.subject, 300), mjml: long(f.mjml, 200_000), text: long(f.text, 100_000) });
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.template.saved', { version: o.output.template.version }) : '');
  }, { frames: true }));

  /**
   * The preview's HTML alone, for the editor's frame: the message as the party would get it,
   * sandboxed (no script, no form, no same origin) and allowed to load nothing but its own inline
   * styles and https images — what the recipient's mail program would show.
   */
  router.get('/app/marketing/templates/:id/preview.html', async (req: Request, res: Response) => {
    try {
      const s = await deps.session(req);
      if (!s) return res.status(401).type('text').send('Sign in again.');
      const ctx = await context(s, req.query.ws);
      const party = typeof req.query.party === 'string' && ID.test(req.query.party) ? req.query.party : '';
      if (!ctx || !party) return res.status(404).type('text').send('Not found.');
      const out = await read<{ html: string }>(ctx, 'email_templates.preview', { id: idParam(req), party_id: party });
      if (isRefused(out)) return res.status(out.refused === 'not_found' ? 404 : 403).type('text').send(out.refused);
      res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; frame-ancestors 'self'; base-uri 'none'; form-action 'none'");
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.setHeader('Cache-Control', 'no-store');
      res.type('html').send(out.html);
    } catch (err) {
      deps.log.error({ err }, 'template preview failed');
      res.status(500).type('text').send('Something went wrong.');
    }
  });

  // ——— a campaign: audience, schedule, send, results ———
  const campaignBody: Body = async (t, ctx, csrf, req) => {
    const id = idParam(req);
    const all = await rows(ctx, 'email_campaigns.list');
    if (isRefused(all)) return refusedRead(t, all);
    const c = all.find((r) => r.id === id);
    if (!c) return html`<p class="error" role="alert">${t.t('mkt.campaign.missing')}</p>`;
    const open = c.status === 'draft' || c.status === 'scheduled';
    const [dry, approvals, rowsOut] = await Promise.all([
      open ? dryRunOf(ctx, id) : Promise.resolve(null),
      open ? rows(ctx, 'approvals.list', { status: 'pending' }) : Promise.resolve([]),
      read<{ rows: Row[]; total?: number }>(ctx, 'email_rows.list', { campaign_id: id, limit: 50 }),
    ]);
    const waiting = isRefused(approvals) ? undefined : approvals.find((a) => a.tool === 'email_campaigns.send' && a.input?.id === id);
    const audience = dry && 'would' in dry ? dry.would : null;
    return html`<p><a href="/app/marketing?${wsQuery(ctx)}">${t.t('mkt.back')}</a></p>
<section class="card" aria-labelledby="cmp-h"><h2 id="cmp-h">${c.name}</h2>
<dl class="facts"><dt>${t.t('mkt.state')}</dt><dd id="campaign-status"><span class="badge">${t.t(`mkt.campaign.status.${c.status}` as MessageKey)}</span>${c.paused_reason ? html` <span class="note" id="paused-reason">${c.paused_reason}</span>` : ''}${waiting ? html` <span class="badge hold" id="waiting">${t.t('mkt.campaign.waiting')}</span> <a href="/app/approvals?${wsQuery(ctx)}#${waiting.id}">${t.t('ws.held.link')}</a>` : ''}</dd>
<dt>${t.t('mkt.campaign.sendAt')}</dt><dd>${c.send_at ? t.dateTime(c.send_at) : t.t('mkt.campaign.notScheduled')}${c.moved_reason ? html` <span class="note">(${c.moved_reason})</span>` : ''}</dd>
<dt>${t.t('mkt.campaign.results')}</dt><dd id="campaign-counts">${countsText(t, c.counts)}</dd>
<dt>${t.t('mkt.campaign.opens')}</dt><dd class="note">${t.t('mkt.campaign.opens.none')}</dd></dl></section>
${open ? html`<section class="card" aria-labelledby="aud-h" id="audience"><h2 id="aud-h">${t.t('mkt.campaign.audience')}</h2>
${audience ? html`<p id="audience-count">${t.t(audience.recipients === 1 ? 'mkt.campaign.audience.one' : 'mkt.campaign.audience.count', { n: t.number(audience.recipients) })}</p>
${Object.keys(audience.excluded_counts ?? {}).length ? html`<ul id="excluded">${Object.entries(audience.excluded_counts as Record<string, number>).map(([k, n]) => html`<li>${t.t(`mkt.excluded.${k}` as MessageKey)}: ${t.number(n)}</li>`)}</ul>` : ''}
<p>${t.t('mkt.campaign.window', { start: t.dateTime(audience.first_window.start) })}${audience.first_window.moved_because ? html` <span class="note">(${audience.first_window.moved_because})</span>` : ''}</p>`
      : html`<p class="error" role="alert">${t.t('mkt.campaign.audience.cannot', { error: dry && 'refused' in dry ? dry.refused : '' })}</p>`}</section>
<form class="card" method="post" action="/app/marketing/campaigns/${c.id}/schedule" aria-labelledby="sch-h">${hidden(csrf, ctx)}
<h2 id="sch-h">${t.t('mkt.campaign.schedule')}</h2><p class="note">${t.t('mkt.campaign.schedule.note')}</p>
<div class="row"><div><label for="sch-date">${t.t('mkt.campaign.date')}</label><input id="sch-date" name="date" type="text" inputmode="numeric" required maxlength="10" autocomplete="off" aria-describedby="sch-date-help"><p class="note" id="sch-date-help">${t.t('date.hint')}</p></div>
<div><label for="sch-time">${t.t('mkt.campaign.time')}</label><input id="sch-time" name="time" type="text" inputmode="numeric" required maxlength="5" pattern="\\d{1,2}:\\d{2}" placeholder="09:00" autocomplete="off"></div></div>
<button type="submit" class="secondary">${t.t('mkt.campaign.schedule.submit')}</button></form>
${waiting ? '' : html`<form class="card" method="post" action="/app/marketing/campaigns/${c.id}/send" aria-labelledby="send-h">${hidden(csrf, ctx)}
<h2 id="send-h">${t.t('mkt.campaign.send')}</h2><p class="note">${t.t('mkt.campaign.send.note')}</p>
<button type="submit" class="primary">${t.t('mkt.campaign.send.submit')}</button></form>`}` : ''}
${isRefused(rowsOut) ? refusedRead(t, rowsOut) : rowsOut.rows.length ? html`<h2>${t.t('mkt.campaign.recipients')}</h2><table class="grid" id="rows-table"><caption class="sr-only">${t.t('mkt.campaign.recipients')}</caption>
<thead><tr><th scope="col">${t.t('mkt.name')}</th><th scope="col">${t.t('mkt.campaign.address')}</th><th scope="col">${t.t('mkt.state')}</th><th scope="col">${t.t('mkt.campaign.sentAt')}</th></tr></thead>
<tbody>${rowsOut.rows.map((r) => html`<tr><th scope="row">${r.name}</th><td>${r.address}</td><td>${t.t(`mkt.row.${r.status}` as MessageKey)}${r.detail ? html` <span class="note">${r.detail}</span>` : ''}</td><td class="date">${r.sent_at ? t.dateTime(r.sent_at) : '—'}</td></tr>`)}</tbody></table>` : ''}`;
  };
  /** The send's dry run: who it reaches after every exclusion, and the first window (nothing is done). */
  const dryRunOf = async (ctx: Ctx, id: string): Promise<{ would: Row } | { refused: string }> => {
    try {
      const answer = await deps.pipeline.invoke({ authorization: `Bearer ${ctx.token}`, tool: 'email_campaigns.send', body: async () => ({ id }), dryRun: true });
      return { would: (answer.body as unknown as { dry_run: { would: Row } }).dry_run.would };
    } catch (err) {
      const e = (err as { error?: { message?: string; code?: string } }).error;
      if (!e) throw err;
      return { refused: `${e.message} (${e.code})` };
    }
  };
  router.get('/app/marketing/campaigns/:id', (req, res) => show(req, res, 'marketing', campaignBody));
  router.post('/app/marketing/campaigns/:id/schedule', form, post('marketing', campaignBody, async (t, ctx, f, req) => {
    const day = parseDateField(text(f.date, 10), t.locale);
    const time = /^(\d{1,2}):(\d{2})$/.exec(text(f.time, 5));
    if (!day || !time || Number(time[1]) > 23 || Number(time[2]) > 59) {
      return { status: 400, top: html`<p class="error" role="alert" id="notice">${t.t('mkt.campaign.schedule.bad')}</p>` };
    }
    // The time as typed is Bogotá's (UTC−5, no daylight saving).
    const at = `${day}T${time[1].padStart(2, '0')}:${time[2]}:00-05:00`;
    const o = await act(ctx, 'email_campaigns.schedule', { id: idParam(req), at });
    if (o.kind !== 'ok') return refusedTop(t, ctx, o, '');
    const when = t.dateTime(o.output.campaign.send_at);
    return { top: html`<p class="notice" role="status" id="notice">${o.output.moved ? t.t('mkt.campaign.scheduled.moved', { when, reason: o.output.reason ?? '' }) : t.t('mkt.campaign.scheduled', { when })}</p>` };
  }));
  router.post('/app/marketing/campaigns/:id/send', form, post('marketing', campaignBody, async (t, ctx, _f, req) => {
    const o = await act(ctx, 'email_campaigns.send', { id: idParam(req) });
    if (o.kind === 'held') return { status: 202, top: html`<p class="notice" role="status" id="notice">${t.t('mkt.campaign.held')} <a href="/app/approvals?${wsQuery(ctx)}#${o.approval}">${t.t('ws.held.link')}</a></p>` };
    return refusedTop(t, ctx, o, o.kind === 'ok' ? t.t('mkt.campaign.sending', { n: t.number(o.output.recipients) }) : '');
  }));

  return router;
}
