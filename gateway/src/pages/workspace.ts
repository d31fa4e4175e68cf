import express, { Router } from 'express';
import { html, type SafeHtml } from './html.ts';
import { dateField, parseDateField, type MessageKey, type Translator } from './i18n.ts';
import { workspacePageKit, type Body, type Ctx, type WorkspacePageDeps } from './workspace-kit.ts';

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,480}\.[A-Za-z0-9_-]{22}$/;
const ROLE = /^[a-z][a-z0-9_]{1,39}$/;

/**
 * Policy templates a person picks from: each is a `policies.create` input, some with an amount
 * in whole pesos. They only fill the tool's input; the tool checks it as from any caller.
 */
export const POLICY_TEMPLATES = {
  hold_agent_writes_over: {
    needsAmount: true,
    build: (t: Translator, amountMinor: number, currency: string) => ({
      name: t.t('tpl.hold_agent_writes_over.name', { amount: t.money(amountMinor, currency) }),
      priority: 1100,
      match: { actors: ['agent'], risk: ['write', 'external', 'destructive'] },
      conditions: { amount_over: amountMinor },
      effect: 'hold',
    }),
  },
  hold_payments_over: {
    needsAmount: true,
    build: (t: Translator, amountMinor: number, currency: string) => ({
      name: t.t('tpl.hold_payments_over.name', { amount: t.money(amountMinor, currency) }),
      priority: 1200,
      match: { tools: ['payments.register', 'bills.pay', 'payment_runs.%'] },
      conditions: { amount_over: amountMinor },
      effect: 'hold',
    }),
  },
  hold_agent_writes: {
    needsAmount: false,
    build: (t: Translator) => ({ name: t.t('tpl.hold_agent_writes.name'), priority: 1000, match: { actors: ['agent'], risk: ['write', 'external', 'destructive'] }, effect: 'hold' }),
  },
  deny_agent_destructive: {
    needsAmount: false,
    build: (t: Translator) => ({ name: t.t('tpl.deny_agent_destructive.name'), priority: 1500, match: { actors: ['agent'], risk: ['destructive'] }, effect: 'deny' }),
  },
  allow_agent_parties: {
    needsAmount: false,
    build: (t: Translator) => ({ name: t.t('tpl.allow_agent_parties.name'), priority: 1300, match: { actors: ['agent'], tools: ['parties.create', 'parties.update'] }, effect: 'allow' }),
  },
} as const;
type TemplateKey = keyof typeof POLICY_TEMPLATES;

/**
 * The workspace's own pages (`/app/keys`, `/app/policies`, `/app/members`, `/app/einvoicing`,
 * `/app/ledger`): what a person manages rather than calls. Like the inbox, each reads through read
 * tools and acts only through the whole invoke pipeline with a one-hour token minted for the
 * person in the chosen workspace (client `cuadra-web`), so the ledger records every change as
 * theirs and the workspace's policies and roles apply. Forms are CSRF-guarded posts; a secret a
 * tool answers once (a new key, an invitation link) is shown in the answer to that post only.
 */
export function workspacePages(deps: WorkspacePageDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 40 });

  const { act, read, refusedRead, isRefused, outcomeText, show, post, statusOf, hidden, text } = workspacePageKit(deps);
  /** A role's name in the person's language (built-in roles); a custom role keeps the name it was given. */
  const roleName = (t: Translator, r: { key: string; name: string; built_in?: boolean }) => (r.built_in ? t.t(`role.${r.key}` as MessageKey) : r.name);

  // ——— API keys ———
  const keysBody: Body = async (t, ctx, csrf, req) => {
    const cursor = typeof req.query.cursor === 'string' && CURSOR.test(req.query.cursor) ? req.query.cursor : undefined;
    const [keys, roles] = await Promise.all([read(ctx, 'api_keys.list', { limit: 100, ...(cursor ? { cursor } : {}) }), read(ctx, 'roles.list', { limit: 100 })]);
    if (isRefused(keys)) return refusedRead(t, keys);
    const roleRows: { key: string; name: string; built_in: boolean }[] = isRefused(roles) ? [] : roles.rows;
    return html`
<form class="card" method="post" action="/app/keys" aria-labelledby="new-key">
${hidden(csrf, ctx)}
<h2 id="new-key">${t.t('keys.new')}</h2>
<p class="note">${t.t('keys.new.note')}</p>
<div class="row"><div><label for="key-name">${t.t('keys.name')}</label><input id="key-name" name="name" type="text" required maxlength="100"></div>
<div><label for="key-role">${t.t('keys.role')}</label><select id="key-role" name="role">${roleRows.filter((r) => r.key !== 'owner').map((r) => html`<option value="${r.key}" ${r.key === 'agent' ? html`selected` : ''}>${roleName(t, r)} (${r.key})</option>`)}</select></div></div>
<label for="key-patterns">${t.t('keys.patterns')}</label>
<input id="key-patterns" name="patterns" type="text" maxlength="900" aria-describedby="key-patterns-help" placeholder="invoices.%:read parties.%">
<p class="note" id="key-patterns-help">${t.t('keys.patterns.help')}</p>
<label for="key-expires">${t.t('keys.expires')}</label><input id="key-expires" name="expires" type="text" inputmode="numeric" maxlength="10" pattern="\\d{1,2}/\\d{1,2}/\\d{4}" autocomplete="off" aria-describedby="key-expires-help">
<p class="note" id="key-expires-help">${t.t('date.hint')}</p>
<button type="submit" class="primary">${t.t('keys.create')}</button>
</form>
<h2>${t.t('keys.list')}</h2>
${keys.rows.length === 0 ? html`<p class="note">${t.t('keys.none')}</p>` : html`<table class="grid" id="keys-table"><caption class="sr-only">${t.t('keys.list')}</caption>
<thead><tr><th scope="col">${t.t('keys.name')}</th><th scope="col">${t.t('keys.role')}</th><th scope="col">${t.t('keys.patterns.short')}</th><th scope="col">${t.t('keys.prefix')}</th><th scope="col">${t.t('keys.created')}</th><th scope="col">${t.t('keys.state')}</th></tr></thead>
<tbody>${(keys.rows as any[]).map((k) => html`<tr id="${k.id}"><th scope="row">${k.name}</th><td><code>${k.role}</code></td><td>${k.patterns.length ? k.patterns.map((p: string) => html`<code>${p}</code> `) : t.t('keys.patterns.all')}</td><td><code>${k.prefix}…</code></td><td class="date">${t.date(k.created_at)}</td>
<td>${k.revoked_at ? html`<span class="badge bad">${t.t('keys.revoked', { date: t.date(k.revoked_at) })}</span>` : k.expires_at && Date.parse(k.expires_at) < Date.now() ? html`<span class="badge">${t.t('keys.expired')}</span>` : html`<span class="badge ok">${t.t('keys.active')}</span>${k.expires_at ? html` <span class="note">${t.t('keys.until', { date: t.date(k.expires_at) })}</span>` : ''}
<form method="post" action="/app/keys/${k.id}/revoke">${hidden(csrf, ctx)}<button type="submit" class="danger small" aria-label="${t.t('keys.revoke.label', { name: k.name })}">${t.t('keys.revoke')}</button></form>`}</td></tr>`)}</tbody></table>`}
${keys.next_cursor ? html`<p class="more"><a href="/app/keys?ws=${encodeURIComponent(ctx.workspace)}&amp;cursor=${encodeURIComponent(keys.next_cursor)}">${t.t('inbox.more')}</a></p>` : ''}`;
  };
  router.get('/app/keys', (req, res) => show(req, res, 'keys', keysBody));
  router.post('/app/keys', form, post('keys', keysBody, async (t, ctx, f) => {
    const patterns = text(f.patterns, 900).split(/[\s,]+/).filter(Boolean);
    const typed = text(f.expires, 10);
    // The day as the page's locale writes it (22/11/2026 in es-CO); what is no date goes to the tool as typed, to be refused there.
    const expires = typed ? parseDateField(typed, t.locale) ?? typed : '';
    const input: Record<string, unknown> = { name: text(f.name, 100), role: text(f.role, 40) };
    if (patterns.length) input.patterns = patterns;
    // A date means the end of that day in Bogotá (UTC−5).
    if (/^\d{4}-\d{2}-\d{2}$/.test(expires)) input.expires_at = new Date(`${expires}T23:59:59-05:00`).toISOString();
    else if (expires) input.expires_at = expires;
    const o = await act(ctx, 'api_keys.create', input);
    if (o.kind !== 'ok') return { status: statusOf(o), top: outcomeText(t, ctx, o, '') };
    // Shown once, in this answer only; the page is not cached (no-store) and the value is never stored in clear.
    return { status: 201, top: html`<section class="card" role="status" id="notice" aria-labelledby="secret-h"><h2 id="secret-h">${t.t('keys.created.heading', { name: o.output.key.name })}</h2>
<p>${t.t('keys.created.once')}</p><code class="secret" id="new-secret">${o.output.api_key}</code></section>` };
  }));
  router.post('/app/keys/:id/revoke', form, post('keys', keysBody, async (t, ctx, _f, req) => {
    const id = /^key_[A-Za-z0-9_-]{1,40}$/.test(String(req.params.id)) ? String(req.params.id) : 'key_invalid';
    const o = await act(ctx, 'api_keys.revoke', { id });
    return { status: statusOf(o), top: outcomeText(t, ctx, o, t.t('keys.revoked.done', { id })) };
  }));

  // ——— Policies ———
  const effectBadge = (t: Translator, effect: string) => html`<span class="badge ${effect === 'allow' ? 'ok' : effect === 'deny' ? 'bad' : 'hold'}">${t.t(`policy.effect.${effect}` as MessageKey)}</span>`;
  const matchText = (t: Translator, p: any, currency: string): SafeHtml => {
    const parts: SafeHtml[] = [];
    if (p.match?.actors?.length) parts.push(html`${t.t('policy.match.actors')}: ${p.match.actors.map((a: string) => t.t(`policy.actor.${a}` as MessageKey)).join(', ')}`);
    if (p.match?.risk?.length) parts.push(html`${t.t('policy.match.risk')}: ${p.match.risk.map((r: string) => t.t(`policy.risk.${r}` as MessageKey)).join(', ')}`);
    if (p.match?.tools?.length) parts.push(html`${t.t('policy.match.tools')}: ${p.match.tools.map((x: string) => html`<code>${x}</code> `)}`);
    if (p.match?.roles?.length) parts.push(html`${t.t('policy.match.roles')}: ${p.match.roles.map((x: string) => html`<code>${x}</code> `)}`);
    if (typeof p.conditions?.amount_over === 'number') parts.push(html`${t.t('policy.match.over', { amount: t.money(p.conditions.amount_over, currency) })}`);
    return parts.length ? html`${parts.map((x, i) => html`${i ? html`<br>` : ''}${x}`)}` : html`${t.t('policy.match.every')}`;
  };
  const currencyOf = async (ctx: Ctx) => (await deps.identity.workspace(ctx.workspace) as { currency?: string } | null)?.currency ?? 'COP';
  const policiesBody: Body = async (t, ctx, csrf) => {
    const policies = await read(ctx, 'policies.list');
    if (isRefused(policies)) return refusedRead(t, policies);
    const currency = await currencyOf(ctx);
    const templates = Object.keys(POLICY_TEMPLATES) as TemplateKey[];
    return html`
<form class="card" method="post" action="/app/policies">
${hidden(csrf, ctx)}
<fieldset><legend><h2 class="inline">${t.t('policies.new')}</h2></legend>
<p class="note">${t.t('policies.new.note')}</p>
${templates.map((k, i) => html`<label class="choice"><input type="radio" name="template" value="${k}" ${i === 0 ? html`checked` : ''}> <span>${t.t(`tpl.${k}.label` as MessageKey)}</span></label>`)}
</fieldset>
<label for="policy-amount">${t.t('policies.amount', { currency })}</label>
<input id="policy-amount" name="amount" type="text" inputmode="numeric" value="${t.number(5_000_000)}" aria-describedby="policy-amount-help" maxlength="20">
<p class="note" id="policy-amount-help">${t.t('policies.amount.help')}</p>
<button type="submit" class="primary">${t.t('policies.create')}</button>
</form>
<h2>${t.t('policies.list')}</h2>
${policies.rows.length === 0 ? html`<p class="note">${t.t('policies.none')}</p>` : html`<table class="grid" id="policies-table"><caption class="sr-only">${t.t('policies.list')}</caption>
<thead><tr><th scope="col">${t.t('policies.name')}</th><th scope="col">${t.t('policies.effect')}</th><th scope="col">${t.t('policies.when')}</th><th scope="col" class="num">${t.t('policies.priority')}</th><th scope="col"><span class="sr-only">${t.t('policies.actions')}</span></th></tr></thead>
<tbody>${(policies.rows as any[]).map((p) => html`<tr id="${p.id}"><th scope="row">${p.name}</th><td>${effectBadge(t, p.effect)}</td><td>${matchText(t, p, currency)}</td><td class="num">${t.number(p.priority)}</td>
<td><form method="post" action="/app/policies/${p.id}/delete">${hidden(csrf, ctx)}<button type="submit" class="danger small" aria-label="${t.t('policies.delete.label', { name: p.name })}">${t.t('policies.delete')}</button></form></td></tr>`)}</tbody></table>`}
<p class="note">${t.t('policies.order')}</p>`;
  };
  router.get('/app/policies', (req, res) => show(req, res, 'policies', policiesBody));
  router.post('/app/policies', form, post('policies', policiesBody, async (t, ctx, f) => {
    const key = typeof f.template === 'string' && f.template in POLICY_TEMPLATES ? (f.template as TemplateKey) : null;
    if (!key) return { status: 400, top: html`<p class="error" role="alert" id="notice">${t.t('policies.pick')}</p>` };
    const tpl = POLICY_TEMPLATES[key];
    const currency = await currencyOf(ctx);
    let minor = 0;
    if (tpl.needsAmount) {
      // Whole units as a person writes them (5.000.000 or 5,000,000 or 5000000) → minor units (COP: centavos).
      const digits = text(f.amount, 20).replace(/[.,\s]/g, '');
      const units = /^\d{1,13}$/.test(digits) ? Number(digits) : NaN;
      if (!Number.isSafeInteger(units) || units <= 0) return { status: 400, top: html`<p class="error" role="alert" id="notice">${t.t('policies.amount.bad')}</p>` };
      minor = units * 100;
    }
    const o = await act(ctx, 'policies.create', tpl.build(t, minor, currency));
    return { status: statusOf(o), top: outcomeText(t, ctx, o, o.kind === 'ok' ? t.t('policies.created', { name: o.output.policy.name }) : '') };
  }));
  router.post('/app/policies/:id/delete', form, post('policies', policiesBody, async (t, ctx, _f, req) => {
    const id = ID.test(String(req.params.id)) ? String(req.params.id) : 'invalid';
    const o = await act(ctx, 'policies.delete', { id });
    return { status: statusOf(o), top: outcomeText(t, ctx, o, t.t('policies.deleted')) };
  }));

  // ——— Members and roles ———
  const membersBody: Body = async (t, ctx, csrf, req) => {
    const cursor = typeof req.query.cursor === 'string' && CURSOR.test(req.query.cursor) ? req.query.cursor : undefined;
    const [members, roles] = await Promise.all([read(ctx, 'members.list', { limit: 100, ...(cursor ? { cursor } : {}) }), read(ctx, 'roles.list', { limit: 100 })]);
    if (isRefused(members)) return refusedRead(t, members);
    const roleRows: { key: string; name: string; patterns: string[]; built_in: boolean }[] = isRefused(roles) ? [] : roles.rows;
    const roleSelect = (id: string, current: string, label: string) => html`<label class="sr-only" for="${id}">${label}</label><select id="${id}" name="role">${roleRows.map((r) => html`<option value="${r.key}" ${r.key === current ? html`selected` : ''}>${roleName(t, r)}</option>`)}</select>`;
    return html`
<h2>${t.t('members.list')}</h2>
<table class="grid" id="members-table"><caption class="sr-only">${t.t('members.list')}</caption>
<thead><tr><th scope="col">${t.t('members.name')}</th><th scope="col">${t.t('members.email')}</th><th scope="col">${t.t('members.role')}</th><th scope="col">${t.t('members.since')}</th><th scope="col"><span class="sr-only">${t.t('policies.actions')}</span></th></tr></thead>
<tbody>${(members.rows as any[]).map((m) => m.status === 'active' ? html`<tr id="${m.user_id}"><th scope="row">${m.name}${m.user_id === ctx.user ? html` <span class="badge">${t.t('members.you')}</span>` : ''}</th><td>${m.email}</td>
<td><form method="post" action="/app/members/${m.user_id}/role">${hidden(csrf, ctx)}${roleSelect(`role-${m.user_id}`, m.role, t.t('members.role.of', { name: m.name }))} <button type="submit" class="secondary small">${t.t('members.change')}</button></form></td>
<td class="date">${t.date(m.joined_at)}</td>
<td>${m.user_id === ctx.user ? '' : html`<form method="post" action="/app/members/${m.user_id}/remove">${hidden(csrf, ctx)}<button type="submit" class="danger small" aria-label="${t.t('members.remove.label', { name: m.name })}">${t.t('members.remove')}</button></form>`}</td></tr>`
      : html`<tr id="${m.invitation_id}"><th scope="row">${m.name ?? '—'}</th><td>${m.email}</td><td><code>${m.role}</code></td><td><span class="badge hold">${t.t('members.invited', { date: t.date(m.expires_at) })}</span></td><td></td></tr>`)}</tbody></table>
${members.next_cursor ? html`<p class="more"><a href="/app/members?ws=${encodeURIComponent(ctx.workspace)}&amp;cursor=${encodeURIComponent(members.next_cursor)}">${t.t('inbox.more')}</a></p>` : ''}
<form class="card" method="post" action="/app/members/invite">
${hidden(csrf, ctx)}
<h2>${t.t('members.invite')}</h2>
<div class="row"><div><label for="inv-email">${t.t('members.email')}</label><input id="inv-email" name="email" type="email" required maxlength="320"></div>
<div><label for="inv-name">${t.t('members.name')}</label><input id="inv-name" name="name" type="text" maxlength="200"></div>
<div><label for="inv-role">${t.t('members.role')}</label><select id="inv-role" name="role">${roleRows.filter((r) => r.key !== 'owner' && r.key !== 'agent').map((r) => html`<option value="${r.key}" ${r.key === 'member' ? html`selected` : ''}>${roleName(t, r)}</option>`)}</select></div></div>
<button type="submit" class="primary">${t.t('members.invite.send')}</button>
</form>
<h2>${t.t('roles.list')}</h2>
<table class="grid" id="roles-table"><caption class="sr-only">${t.t('roles.list')}</caption>
<thead><tr><th scope="col">${t.t('roles.name')}</th><th scope="col">${t.t('roles.key')}</th><th scope="col">${t.t('roles.reach')}</th></tr></thead>
<tbody>${roleRows.map((r) => html`<tr><th scope="row">${roleName(t, r)}${r.built_in ? '' : html` <span class="badge">${t.t('roles.custom')}</span>`}</th><td><code>${r.key}</code></td><td>${r.patterns.slice(0, 12).map((p) => html`<code>${p}</code> `)}${r.patterns.length > 12 ? html`<span class="note">${t.t('roles.more', { count: r.patterns.length - 12 })}</span>` : ''}</td></tr>`)}</tbody></table>`;
  };
  router.get('/app/members', (req, res) => show(req, res, 'members', membersBody));
  router.post('/app/members/invite', form, post('members', membersBody, async (t, ctx, f) => {
    const name = text(f.name, 200);
    const o = await act(ctx, 'members.invite', { email: text(f.email, 320).toLowerCase(), role: text(f.role, 40), ...(name ? { name } : {}) });
    if (o.kind !== 'ok') return { status: statusOf(o), top: outcomeText(t, ctx, o, '') };
    return { status: 201, top: html`<section class="card" role="status" id="notice"><h2>${t.t('members.invited.heading', { email: o.output.invitation.email })}</h2><p>${t.t('members.invited.once')}</p><code class="secret">${o.output.invite_url}</code></section>` };
  }));
  router.post('/app/members/:id/role', form, post('members', membersBody, async (t, ctx, f, req) => {
    const id = /^usr_[A-Za-z0-9_-]{1,40}$/.test(String(req.params.id)) ? String(req.params.id) : 'usr_invalid';
    const role = ROLE.test(text(f.role, 40)) ? text(f.role, 40) : 'invalid role';
    const o = await act(ctx, 'members.change_role', { user_id: id, role });
    return { status: statusOf(o), top: outcomeText(t, ctx, o, t.t('members.changed', { role })) };
  }));
  router.post('/app/members/:id/remove', form, post('members', membersBody, async (t, ctx, _f, req) => {
    const id = /^usr_[A-Za-z0-9_-]{1,40}$/.test(String(req.params.id)) ? String(req.params.id) : 'usr_invalid';
    const o = await act(ctx, 'members.remove', { user_id: id });
    return { status: statusOf(o), top: outcomeText(t, ctx, o, t.t('members.removed')) };
  }));

  // ——— E-invoicing settings (the secrets are write-only) ———
  const einvoicingBody: Body = async (t, ctx, csrf) => {
    const got = await read<{ settings: any; secrets: { technical_key: boolean; software_pin: boolean }; certificate: any }>(ctx, 'einvoicing.settings');
    if (isRefused(got)) return refusedRead(t, got);
    const s = got.settings;
    const inv = s?.numbering.invoice;
    const cn = s?.numbering.credit_note;
    const dn = s?.numbering.debit_note;
    const secretHelp = (set: boolean) => (set ? t.t('einv.secret.set') : t.t('einv.secret.unset'));
    const range = (kind: 'invoice' | 'credit_note' | 'debit_note', r: any) => html`<fieldset><legend>${t.t(`einv.range.${kind}` as MessageKey)}</legend><div class="row">
<div><label for="${kind}-prefix">${t.t('einv.prefix')}</label><input id="${kind}-prefix" name="${kind}_prefix" type="text" maxlength="4" pattern="[A-Z0-9]{0,4}" value="${r?.prefix ?? (kind === 'invoice' ? 'FE' : kind === 'credit_note' ? 'NC' : 'ND')}"></div>
<div><label for="${kind}-from">${t.t('einv.from')}</label><input id="${kind}-from" name="${kind}_from" type="number" min="1" max="9999999999" value="${r?.from ?? 1}"></div>
<div><label for="${kind}-to">${t.t('einv.to')}</label><input id="${kind}-to" name="${kind}_to" type="number" min="1" max="9999999999" value="${r?.to ?? 5000}"></div>
<div><label for="${kind}-resolution">${t.t('einv.resolution')}</label><input id="${kind}-resolution" name="${kind}_resolution" type="text" maxlength="40" value="${r?.resolution ?? ''}"></div>
<div><label for="${kind}-valid">${t.t('einv.validTo')}</label><input id="${kind}-valid" name="${kind}_valid_to" type="text" inputmode="numeric" maxlength="10" pattern="\\d{1,2}/\\d{1,2}/\\d{4}" autocomplete="off" aria-describedby="${kind}-valid-help" value="${dateField(r?.valid_to, t.locale)}"><small id="${kind}-valid-help">${t.t('date.hint')}</small></div></div></fieldset>`;
    return html`
<section class="card" aria-labelledby="einv-now"><h2 id="einv-now">${t.t('einv.current')}</h2>
${s ? html`<dl class="facts">
<dt>${t.t('einv.issuer')}</dt><dd>${s.issuer.name} · NIT <code>${s.issuer.nit}-${s.issuer.check_digit}</code>${s.issuer.responsibilities?.length ? html` · ${s.issuer.responsibilities.join(', ')}` : ''}</dd>
<dt>${t.t('einv.fiscal.address')}</dt><dd>${s.issuer.address ? html`${s.issuer.address.line} · DANE <code>${s.issuer.address.municipality_code}</code>` : html`<span class="badge bad">${t.t('einv.fiscal.missing')}</span>`}</dd>
<dt>${t.t('einv.environment')}</dt><dd>${s.environment === '1' ? t.t('einv.env.production') : t.t('einv.env.test')}</dd>
<dt>${t.t('einv.software')}</dt><dd><code>${s.software_id}</code></dd>
<dt>${t.t('einv.currency')}</dt><dd>${s.currency}</dd>
<dt>${t.t('einv.range.invoice')}</dt><dd><code>${inv.prefix}</code> ${t.number(inv.from)}–${t.number(inv.to)}${inv.resolution ? html` · ${t.t('einv.resolution')} ${inv.resolution}` : ''}${inv.valid_to ? html` · ${t.t('einv.until', { date: t.date(`${inv.valid_to}T12:00:00Z`) })}` : ''}</dd>
<dt>${t.t('einv.range.credit_note')}</dt><dd><code>${cn.prefix}</code> ${t.number(cn.from)}–${t.number(cn.to)}</dd>
${dn ? html`<dt>${t.t('einv.range.debit_note')}</dt><dd><code>${dn.prefix}</code> ${t.number(dn.from)}–${t.number(dn.to)}</dd>` : ''}
<dt>${t.t('einv.technicalKey')}</dt><dd>${secretHelp(got.secrets.technical_key)}</dd>
<dt>${t.t('einv.pin')}</dt><dd>${secretHelp(got.secrets.software_pin)}</dd>
<dt>${t.t('einv.updated')}</dt><dd>${t.dateTime(s.updated_at)}</dd>
</dl>` : html`<p class="note">${t.t('einv.none')}</p>`}
<h3>${t.t('einv.certificate')}</h3>
${got.certificate ? html`<p>${got.certificate.subject} · ${t.t('einv.cert.issuer')} ${got.certificate.issuer} · ${t.t('einv.until', { date: t.date(got.certificate.not_after) })}</p>` : html`<p class="note">${t.t('einv.cert.none')}</p>`}
<p class="note">${t.t('einv.cert.how')} <code>einvoicing.upload_certificate</code></p>
</section>
<form class="card" method="post" action="/app/einvoicing" autocomplete="off">
${hidden(csrf, ctx)}
<h2>${s ? t.t('einv.change') : t.t('einv.setup')}</h2>
<div class="row"><div><label for="issuer-name">${t.t('einv.issuer.name')}</label><input id="issuer-name" name="issuer_name" type="text" required maxlength="200" value="${s?.issuer.name ?? ctx.workspaceName}"></div>
<div><label for="issuer-nit">${t.t('einv.issuer.nit')}</label><input id="issuer-nit" name="issuer_nit" type="text" required maxlength="20" placeholder="900123456-8" value="${s ? `${s.issuer.nit}-${s.issuer.check_digit}` : ''}"></div></div>
<div class="row"><div><label for="environment">${t.t('einv.environment')}</label><select id="environment" name="environment"><option value="test" ${s?.environment !== '1' ? html`selected` : ''}>${t.t('einv.env.test')}</option><option value="production" ${s?.environment === '1' ? html`selected` : ''}>${t.t('einv.env.production')}</option></select></div>
<div><label for="software-id">${t.t('einv.software')}</label><input id="software-id" name="software_id" type="text" maxlength="64" value="${s?.software_id ?? ''}"></div>
<div><label for="currency">${t.t('einv.currency')}</label><input id="currency" name="currency" type="text" maxlength="3" pattern="[A-Z]{3}" value="${s?.currency ?? 'COP'}"></div></div>
<fieldset><legend>${t.t('einv.fiscal')}</legend><p class="note">${t.t('einv.fiscal.help')}</p><div class="row">
<div><label for="issuer-legal">${t.t('einv.fiscal.legalName')}</label><input id="issuer-legal" name="issuer_legal_name" type="text" maxlength="450" value="${s?.issuer.legal_name ?? ''}"></div>
<div><label for="issuer-resp">${t.t('einv.fiscal.responsibilities')}</label><input id="issuer-resp" name="issuer_responsibilities" type="text" maxlength="60" pattern="[A-Z0-9 ,;\\-]*" placeholder="O-13, O-15" aria-describedby="issuer-resp-help" value="${(s?.issuer.responsibilities ?? []).join(', ')}"><small id="issuer-resp-help">${t.t('einv.fiscal.responsibilities.help')}</small></div></div>
<div class="row"><div><label for="issuer-line">${t.t('einv.fiscal.address')}</label><input id="issuer-line" name="issuer_address" type="text" maxlength="300" value="${s?.issuer.address?.line ?? ''}"></div>
<div><label for="issuer-mun">${t.t('einv.fiscal.municipality')}</label><input id="issuer-mun" name="issuer_municipality" type="text" inputmode="numeric" maxlength="5" pattern="[0-9]{5}" placeholder="11001" value="${s?.issuer.address?.municipality_code ?? ''}"></div>
<div><label for="issuer-postal">${t.t('einv.fiscal.postal')}</label><input id="issuer-postal" name="issuer_postal" type="text" inputmode="numeric" maxlength="6" pattern="[0-9]{6}" value="${s?.issuer.address?.postal_code ?? ''}"></div></div>
<div class="row"><div><label for="issuer-email">${t.t('einv.fiscal.email')}</label><input id="issuer-email" name="issuer_email" type="email" maxlength="254" value="${s?.issuer.email ?? ''}"></div>
<div><label for="issuer-phone">${t.t('einv.fiscal.phone')}</label><input id="issuer-phone" name="issuer_phone" type="tel" maxlength="40" value="${s?.issuer.phone ?? ''}"></div></div></fieldset>
${range('invoice', inv)}
${range('credit_note', cn)}
${range('debit_note', dn)}
<fieldset><legend>${t.t('einv.secrets')}</legend><p class="note">${s ? t.t('einv.secrets.keep') : t.t('einv.secrets.first')}</p><div class="row">
<div><label for="technical-key">${t.t('einv.technicalKey')}</label><input id="technical-key" name="technical_key" type="password" autocomplete="new-password" maxlength="128" ${s ? '' : html`required`}></div>
<div><label for="software-pin">${t.t('einv.pin')}</label><input id="software-pin" name="software_pin" type="password" autocomplete="new-password" maxlength="32" ${s ? '' : html`required`}></div></div></fieldset>
<button type="submit" class="primary">${t.t('einv.save')}</button>
</form>`;
  };
  router.get('/app/einvoicing', (req, res) => show(req, res, 'einvoicing', einvoicingBody));
  router.post('/app/einvoicing', form, post('einvoicing', einvoicingBody, async (t, ctx, f) => {
    const num = (v: unknown) => (/^\d{1,10}$/.test(text(v, 10)) ? Number(text(v, 10)) : 0);
    const range = (kind: string) => {
      const r: Record<string, unknown> = { prefix: text(f[`${kind}_prefix`], 4).toUpperCase(), from: num(f[`${kind}_from`]), to: num(f[`${kind}_to`]) };
      const resolution = text(f[`${kind}_resolution`], 40);
      const typedTo = text(f[`${kind}_valid_to`], 10);
      const validTo = typedTo ? parseDateField(typedTo, t.locale) ?? typedTo : '';
      if (resolution) r.resolution = resolution;
      if (validTo) r.valid_to = validTo;
      return r;
    };
    // The issuer's fiscal profile: a field left blank keeps what is set (einvoicing.configure keeps what it is not given).
    const issuer: Record<string, unknown> = { nit: text(f.issuer_nit, 20), name: text(f.issuer_name, 200) };
    const legal = text(f.issuer_legal_name, 450);
    if (legal) issuer.legal_name = legal;
    const responsibilities = text(f.issuer_responsibilities, 60).toUpperCase().split(/[\s,;]+/).filter(Boolean);
    if (responsibilities.length) issuer.responsibilities = [...new Set(responsibilities)];
    const line = text(f.issuer_address, 300);
    const municipality = text(f.issuer_municipality, 5);
    if (line || municipality) issuer.address = { line, municipality_code: municipality, ...(text(f.issuer_postal, 6) ? { postal_code: text(f.issuer_postal, 6) } : {}) };
    if (text(f.issuer_email, 254)) issuer.email = text(f.issuer_email, 254);
    if (text(f.issuer_phone, 40)) issuer.phone = text(f.issuer_phone, 40);
    const input: Record<string, unknown> = {
      issuer,
      environment: f.environment === 'production' ? 'production' : 'test',
      currency: text(f.currency, 3).toUpperCase() || 'COP',
      // All three ranges: configure replaces the numbering, so a range left out would fall back to its default.
      numbering: { invoice: range('invoice'), credit_note: range('credit_note'), debit_note: range('debit_note') },
    };
    const softwareId = text(f.software_id, 64);
    if (softwareId) input.software_id = softwareId;
    // Secrets: replaced when typed, kept when left blank; never written back into the page.
    const key = text(f.technical_key, 128);
    const pin = text(f.software_pin, 32);
    if (key) input.technical_key = key;
    if (pin) input.software_pin = pin;
    const o = await act(ctx, 'einvoicing.configure', input);
    return { status: statusOf(o), top: outcomeText(t, ctx, o, t.t('einv.saved')) };
  }));

  // ——— The ledger, with its chain's verification ———
  const ledgerBody: Body = async (t, ctx, _csrf, req) => {
    const cursor = typeof req.query.cursor === 'string' && CURSOR.test(req.query.cursor) ? req.query.cursor : undefined;
    const tool = typeof req.query.tool === 'string' && /^[a-z0-9_]+(\.[a-z0-9_]+)+$/.test(req.query.tool) ? req.query.tool : '';
    const [entries, verified] = await Promise.all([
      read(ctx, 'ledger.list', { limit: 50, ...(tool ? { tool } : {}), ...(cursor ? { cursor } : {}) }),
      read(ctx, 'ledger.verify', {}),
    ]);
    if (isRefused(entries)) return refusedRead(t, entries);
    const rows = entries.rows as any[];
    const names = await actorNames(ctx, rows.map((r) => r.actor));
    const v = isRefused(verified) ? null : (verified as any);
    return html`
<section class="card" aria-labelledby="chain-h" id="chain"><h2 id="chain-h">${t.t('ledger.chain')}</h2>
${v ? html`<p>${v.ok ? html`<span class="badge ok">${t.t('ledger.ok')}</span>` : html`<span class="badge bad">${t.t('ledger.broken')}</span>`} ${t.t('ledger.checked', { count: t.number(v.entries), from: t.number(v.checked_from) })}</p>
${v.broken_at ? html`<p class="error" role="alert">${t.t('ledger.brokenAt', { seq: v.broken_at.seq, reason: v.broken_at.reason })}</p>` : ''}
<p class="note">${t.t('ledger.head')} <code>${v.head.slice(0, 16)}…</code> · ${v.anchored ? t.t('ledger.anchored') : t.t('ledger.notAnchored')}</p>` : html`<p class="note">${t.t('ws.cannotRead', { code: (verified as { refused: string }).refused })}</p>`}
</section>
<form method="get" action="/app/ledger" class="card"><input type="hidden" name="ws" value="${ctx.workspace}">
<label for="ledger-tool">${t.t('ledger.filter')}</label><input id="ledger-tool" name="tool" type="text" maxlength="80" value="${tool}" placeholder="api_keys.create">
<button type="submit" class="secondary">${t.t('ledger.filter.go')}</button></form>
<h2>${t.t('ledger.entries')}</h2>
${rows.length === 0 ? html`<p class="note">${t.t('ledger.none')}</p>` : html`<table class="grid" id="ledger-table"><caption class="sr-only">${t.t('ledger.entries')}</caption>
<thead><tr><th scope="col" class="num">#</th><th scope="col">${t.t('ledger.when')}</th><th scope="col">${t.t('ledger.who')}</th><th scope="col">${t.t('ledger.what')}</th><th scope="col">${t.t('ledger.outcome')}</th><th scope="col">${t.t('ledger.hash')}</th></tr></thead>
<tbody>${rows.map((e) => html`<tr><td class="num">${e.seq}</td><td><time datetime="${e.at}">${t.dateTime(e.at)}</time></td><td>${actorLabel(t, e.actor, names)}</td><td><code>${e.tool}</code>${e.risk ? html` <span class="note">${t.t(`policy.risk.${e.risk}` as MessageKey)}</span>` : ''}${e.approval_id ? html` · <a href="/app/approvals?ws=${encodeURIComponent(ctx.workspace)}#${e.approval_id}">${t.t('ledger.approval')}</a>` : ''}</td>
<td><span class="badge ${e.outcome === 'ok' ? 'ok' : e.outcome === 'held' || e.outcome === 'pending_approval' ? 'hold' : 'bad'}">${e.outcome}</span></td><td><code title="${e.hash}">${e.hash.slice(0, 10)}</code></td></tr>`)}</tbody></table>`}
${entries.next_cursor ? html`<p class="more"><a href="/app/ledger?ws=${encodeURIComponent(ctx.workspace)}${tool ? `&tool=${tool}` : ''}&amp;cursor=${encodeURIComponent(entries.next_cursor)}">${t.t('inbox.more')}</a></p>` : ''}`;
  };
  /** Names of who acted: a key's name, a person's name (bounded: one page's distinct actors). */
  const actorNames = async (ctx: Ctx, actors: { type: string; id: string }[]) => {
    const names = new Map<string, string>();
    const distinct = new Map(actors.map((a) => [`${a.type}:${a.id}`, a]));
    await Promise.all([...distinct].slice(0, 50).map(async ([k, a]) => {
      if (a.type === 'agent' || a.type === 'api_key') {
        const key = await deps.identity.apiKeyView(ctx.workspace, a.id).catch(() => null);
        if (key?.name) names.set(k, key.name);
      } else if (a.type === 'member') {
        const u = await deps.people.user(a.id).catch(() => null);
        if (u) names.set(k, u.name ?? u.email);
      }
    }));
    return names;
  };
  const actorLabel = (t: Translator, a: { type: string; id: string }, names: Map<string, string>) => {
    const name = names.get(`${a.type}:${a.id}`);
    if (a.type === 'oauth_app' && a.id === deps.webClientId) return html`${t.t('actor.web')}`;
    const known = ['agent', 'api_key', 'oauth_app', 'member', 'service', 'visitor'].includes(a.type);
    const label = name ? `${name} (${a.id})` : a.id;
    return html`${known ? t.t(`actor.${a.type}` as MessageKey, { id: label }) : t.t('actor.other', { type: a.type, id: label })}`;
  };
  router.get('/app/ledger', (req, res) => show(req, res, 'ledger', ledgerBody));

  // ——— Agent runs (issue 37): the list, and a run with its steps, its held call and its cost ———
  /** A cost kept in millionths of a minor unit, shown to the millionth of the currency's unit. */
  const costText = (t: Translator, micros: number, currency: string) => {
    try {
      return new Intl.NumberFormat(t.locale, { style: 'currency', currency, minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(micros / 1e8);
    } catch {
      return `${(micros / 1e8).toFixed(6)} ${currency}`;
    }
  };
  const runStatus = (t: Translator, status: string) => html`<span class="badge ${status === 'succeeded' ? 'ok' : status === 'failed' || status === 'timed_out' ? 'bad' : ''}">${t.t(`runs.status.${status}` as MessageKey)}</span>`;
  const runsBody: Body = async (t, ctx, _csrf, req) => {
    const cursor = typeof req.query.cursor === 'string' && CURSOR.test(req.query.cursor) ? req.query.cursor : undefined;
    const runs = await read(ctx, 'agent_runs.list', { limit: 50, ...(cursor ? { cursor } : {}) });
    if (isRefused(runs)) return refusedRead(t, runs);
    const rows = runs.rows as any[];
    return html`<h2>${t.t('runs.list')}</h2>
${rows.length === 0 ? html`<p class="note">${t.t('runs.none')}</p>` : html`<table class="grid" id="runs-table"><caption class="sr-only">${t.t('runs.list')}</caption>
<thead><tr><th scope="col">${t.t('runs.agent')}</th><th scope="col">${t.t('runs.status')}</th><th scope="col">${t.t('runs.started')}</th><th scope="col" class="num">${t.t('runs.steps')}</th><th scope="col" class="num">${t.t('runs.cost')}</th></tr></thead>
<tbody>${rows.map((r) => html`<tr id="${r.id}"><th scope="row"><a href="/app/agents/runs/${encodeURIComponent(r.id)}?ws=${encodeURIComponent(ctx.workspace)}">${r.agent_name}</a> <span class="note">${r.id}</span></th><td>${runStatus(t, r.status)}</td><td><time datetime="${r.created_at}">${t.dateTime(r.created_at)}</time></td><td class="num">${r.steps.length}</td><td class="num">${costText(t, r.usage.cost_micros, r.currency)}</td></tr>`)}</tbody></table>`}
${runs.next_cursor ? html`<p class="more"><a href="/app/agents?ws=${encodeURIComponent(ctx.workspace)}&amp;cursor=${encodeURIComponent(runs.next_cursor)}">${t.t('inbox.more')}</a></p>` : ''}`;
  };
  const runBody: Body = async (t, ctx, csrf, req) => {
    const id = String(req.params.id ?? '');
    const got = ID.test(id) ? await read(ctx, 'agent_runs.get', { id }) : { refused: 'not_found' };
    if (isRefused(got)) return got.refused === 'not_found' ? html`<p class="error" role="alert">${t.t('run.notFound')}</p>` : refusedRead(t, got);
    const r = got.run as any;
    const ws = encodeURIComponent(ctx.workspace);
    const open = ['queued', 'running', 'waiting_approval'].includes(r.status);
    return html`<p><a href="/app/agents?ws=${ws}">← ${t.t('run.back')}</a></p>
<section class="card" aria-labelledby="run-h"><h2 id="run-h">${t.t('run.heading', { id: r.id })} · ${r.agent_name} ${runStatus(t, r.status)}</h2>
<dl class="facts">
<dt>${t.t('run.task')}</dt><dd>${r.input}</dd>
${r.output !== null ? html`<dt>${t.t('run.answer')}</dt><dd id="run-output">${r.output}</dd>` : ''}
${r.stop_reason ? html`<dt>${t.t('run.stop')}</dt><dd><code>${r.stop_reason}</code></dd>` : ''}
${r.error ? html`<dt>${t.t('run.error')}</dt><dd>${r.error}</dd>` : ''}
<dt>${t.t('run.model')}</dt><dd>${r.model_name}</dd>
<dt>${t.t('run.usage')}</dt><dd id="run-cost">${t.t('run.tokens', { input: t.number(r.usage.input_tokens), cached: t.number(r.usage.cached_tokens), output: t.number(r.usage.output_tokens) })} · <strong>${costText(t, r.usage.cost_micros, r.currency)}</strong></dd>
<dt>${t.t('runs.started')}</dt><dd><time datetime="${r.created_at}">${t.dateTime(r.created_at)}</time></dd>
</dl>
<p class="note">${t.t('run.limits', { steps: r.limits.max_steps, seconds: r.limits.max_seconds, used: Math.round(r.active_ms / 1000) })}</p>
${open ? html`<form method="post" action="/app/agents/runs/${encodeURIComponent(r.id)}/cancel">${hidden(csrf, ctx)}<button type="submit" class="danger">${t.t('run.cancel')}</button></form>` : ''}
</section>
${r.waiting ? html`<p class="notice" role="status" id="run-waiting">${t.t('run.waiting', { tool: r.waiting.tool })} <a href="/app/approvals?ws=${ws}#${r.waiting.approval_id}">${t.t('run.waiting.link')}</a></p>` : ''}
<h2>${t.t('run.steps')}</h2>
<ol class="steps" id="run-steps">${(r.steps as any[]).map((step) => html`<li class="card step"><h3>${t.t('run.step', { n: step.n })}</h3>
<p class="note">${t.t('run.step.tokens', { input: t.number(step.usage.input_tokens), output: t.number(step.usage.output_tokens), ms: t.number(step.duration_ms) })} · ${costText(t, step.usage.cost_micros, r.currency)}</p>
${step.content ? html`<p><strong>${t.t('run.step.said')}:</strong> ${step.content}</p>` : ''}
${step.calls.length ? html`<table class="grid"><caption>${t.t('run.calls')}</caption><thead><tr><th scope="col">${t.t('run.call.tool')}</th><th scope="col">${t.t('run.call.status')}</th><th scope="col">${t.t('run.call.arguments')}</th><th scope="col">${t.t('run.call.key')}</th><th scope="col">${t.t('run.call.result')}</th></tr></thead>
<tbody>${(step.calls as any[]).map((c) => html`<tr><th scope="row"><code>${c.tool}</code>${c.tool === 'mcp_servers.call' ? html` <span class="note">${c.name}</span>` : ''}</th><td>${t.t(`run.call.status.${c.status}` as MessageKey)}${c.http_status ? html` <span class="note">${c.http_status}</span>` : ''}${c.approval_id ? html` · <a href="/app/approvals?ws=${ws}#${c.approval_id}">${c.approval_id}</a>` : ''}</td><td><pre class="result">${JSON.stringify(c.arguments).slice(0, 400)}</pre></td><td><code>${c.idempotency_key}</code></td><td>${c.result ? html`<pre class="result">${c.result.slice(0, 600)}</pre>` : '—'}</td></tr>`)}</tbody></table>` : ''}
</li>`)}</ol>`;
  };
  router.get('/app/agents', (req, res) => show(req, res, 'agents', runsBody));
  router.get('/app/agents/runs/:id', (req, res) => show(req, res, 'agents', runBody));
  router.post('/app/agents/runs/:id/cancel', form, post('agents', runBody, async (t, ctx, _f, req) => {
    const o = await act(ctx, 'agent_runs.cancel', { id: String(req.params.id) });
    return { status: statusOf(o), top: outcomeText(t, ctx, o, t.t('run.cancelled')) };
  }));

  return router;
}
