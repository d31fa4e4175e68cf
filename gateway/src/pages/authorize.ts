import { html, type SafeHtml } from './html.ts';
import { translator, type MessageKey, type Translator } from './i18n.ts';

const SCOPES = ['tools:read', 'tools', 'sites.login', 'sites.edit'] as const;

/** What each scope lets an app do, in the words a person reads on the consent screen (English; see {@link scopeText}). */
export const SCOPE_TEXT: Record<string, string> = Object.fromEntries(SCOPES.map((s) => [s, translator('en').t(`scope.${s}` as MessageKey)]));

/** What a scope lets an app do, in the person's language. */
export function scopeText(t: Translator, scope: string): string {
  return (SCOPES as readonly string[]).includes(scope) ? t.t(`scope.${scope}` as MessageKey) : scope;
}

function hiddenFields(params: Record<string, string>): SafeHtml[] {
  return Object.entries(params).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
}

/** Login form of /oauth/authorize: e-mail and password, the original request carried in hidden fields. */
export function loginPage(t: Translator, input: { clientName: string; redirectHost: string; params: Record<string, string>; csrf: string; email?: string; error?: string }): SafeHtml {
  const note = t.t('oauth.login.note', { client: '\u0000', host: '\u0001' }).split(/(\u0000|\u0001)/);
  return html`
<h1>${t.t('oauth.login.heading', { client: input.clientName })}</h1>
<p class="note">${note.map((part) => (part === '\u0000' ? input.clientName : part === '\u0001' ? html`<code>${input.redirectHost}</code>` : part))}</p>
${input.error ? html`<p class="error" role="alert" id="form-error">${input.error}</p>` : ''}
<form method="post" action="/oauth/authorize" ${input.error ? html`aria-describedby="form-error"` : ''}>
  ${hiddenFields(input.params)}
  <input type="hidden" name="csrf" value="${input.csrf}">
  <label for="email">${t.t('signIn.email')}</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}" ${input.error ? html`aria-invalid="true"` : ''} ${input.email ? '' : html`autofocus`}>
  <label for="password">${t.t('signIn.password')}</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required ${input.error ? html`aria-invalid="true"` : ''} ${input.email ? html`autofocus` : ''}>
  <button type="submit" class="primary">${t.t('signIn.submit')}</button>
</form>`;
}

/** Consent screen: names the client, its redirect host, the scopes and the workspace. */
export function consentPage(t: Translator, input: {
  clientName: string; clientId: string; clientKind: 'registered' | 'metadata_document'; redirectHost: string; scopes: string[];
  workspaces: { id: string; name: string; role: string }[]; params: Record<string, string>; csrf: string; ticket: string; userEmail: string;
}): SafeHtml {
  const only = input.workspaces.length === 1 ? input.workspaces[0] : null;
  return html`
<h1>${t.t('oauth.consent.heading', { client: input.clientName })}</h1>
<p class="note">${t.t('oauth.consent.as')} <strong>${input.userEmail}</strong>.</p>
<form method="post" action="/oauth/authorize">
  ${hiddenFields(input.params)}
  <input type="hidden" name="csrf" value="${input.csrf}">
  <input type="hidden" name="login_ticket" value="${input.ticket}">
  <dl>
    <dt>${t.t('oauth.consent.app')}</dt>
    <dd>${input.clientName} <span class="note">(${input.clientKind === 'metadata_document' ? html`${t.t('oauth.consent.identified')} <code>${input.clientId}</code>` : t.t('oauth.consent.unverified')})</span></dd>
    <dt>${t.t('oauth.consent.redirect')}</dt>
    <dd><code>${input.redirectHost}</code></dd>
    <dt>${t.t('oauth.consent.workspace')}</dt>
    <dd>${only
      ? html`${only.name} <span class="note">(${t.t('oauth.consent.yourRole', { role: only.role })})</span><input type="hidden" name="workspace" value="${only.id}">`
      : html`<label for="workspace">${t.t('oauth.consent.choose')}</label><select id="workspace" name="workspace" required>${input.workspaces.map((w) => html`<option value="${w.id}">${w.name} (${t.t('oauth.consent.yourRole', { role: w.role })})</option>`)}</select>`}</dd>
    <dt id="scopes-label">${t.t('oauth.consent.able')}</dt>
    <dd><ul class="scopes" aria-labelledby="scopes-label">${input.scopes.map((s) => html`<li><code>${s}</code>: ${scopeText(t, s)}</li>`)}</ul></dd>
  </dl>
  <button type="submit" name="decision" value="approve" class="primary">${t.t('oauth.consent.allow')}</button>
  <button type="submit" name="decision" value="deny" class="secondary">${t.t('oauth.consent.deny')}</button>
</form>`;
}

/** An error page for requests that must not be sent back to the client (unknown client, bad redirect URI). */
export function errorPage(t: Translator, title: string, message: string): SafeHtml {
  return html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p class="note">${t.t('closeWindow')}</p>`;
}
