import { html, type SafeHtml } from './html.ts';

/** What each scope lets an app do, in the words a person reads on the consent screen. */
export const SCOPE_TEXT: Record<string, string> = {
  'tools:read': 'Read your workspace data (changes nothing).',
  tools: 'Read and change your workspace data, as far as your role allows. Calls the workspace holds for approval still wait for a person.',
  'sites.login': 'Sign visitors in to a site hosted by Cuadra (identity only, no tools).',
  'sites.edit': "Edit the workspace's sites.",
};

function hiddenFields(params: Record<string, string>): SafeHtml[] {
  return Object.entries(params).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
}

/** Login form of /oauth/authorize: e-mail and password, the original request carried in hidden fields. */
export function loginPage(input: { clientName: string; redirectHost: string; params: Record<string, string>; csrf: string; email?: string; error?: string }): SafeHtml {
  return html`
<h1>Sign in to continue to ${input.clientName}</h1>
<p class="note">${input.clientName} (<code>${input.redirectHost}</code>) asks to use your Cuadra workspace. Sign in first; you choose what to allow on the next screen.</p>
${input.error ? html`<p class="error" role="alert" id="form-error">${input.error}</p>` : ''}
<form method="post" action="/oauth/authorize" ${input.error ? html`aria-describedby="form-error"` : ''}>
  ${hiddenFields(input.params)}
  <input type="hidden" name="csrf" value="${input.csrf}">
  <label for="email">E-mail</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ''}" ${input.error ? html`aria-invalid="true"` : ''} ${input.email ? '' : html`autofocus`}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required ${input.error ? html`aria-invalid="true"` : ''} ${input.email ? html`autofocus` : ''}>
  <button type="submit" class="primary">Sign in</button>
</form>`;
}

/** Consent screen: names the client, its redirect host, the scopes and the workspace. */
export function consentPage(input: {
  clientName: string; clientId: string; clientKind: 'registered' | 'metadata_document'; redirectHost: string; scopes: string[];
  workspaces: { id: string; name: string; role: string }[]; params: Record<string, string>; csrf: string; ticket: string; userEmail: string;
}): SafeHtml {
  const only = input.workspaces.length === 1 ? input.workspaces[0] : null;
  return html`
<h1>Allow ${input.clientName} to use your workspace?</h1>
<p class="note">Signed in as <strong>${input.userEmail}</strong>.</p>
<form method="post" action="/oauth/authorize">
  ${hiddenFields(input.params)}
  <input type="hidden" name="csrf" value="${input.csrf}">
  <input type="hidden" name="login_ticket" value="${input.ticket}">
  <dl>
    <dt>App</dt>
    <dd>${input.clientName} <span class="note">(${input.clientKind === 'metadata_document' ? html`identified by <code>${input.clientId}</code>` : html`registered itself; Cuadra has not verified its name`})</span></dd>
    <dt>Will be sent back to</dt>
    <dd><code>${input.redirectHost}</code></dd>
    <dt>Workspace</dt>
    <dd>${only
      ? html`${only.name} <span class="note">(your role: ${only.role})</span><input type="hidden" name="workspace" value="${only.id}">`
      : html`<label for="workspace">Choose the workspace</label><select id="workspace" name="workspace" required>${input.workspaces.map((w) => html`<option value="${w.id}">${w.name} (your role: ${w.role})</option>`)}</select>`}</dd>
    <dt id="scopes-label">It will be able to</dt>
    <dd><ul class="scopes" aria-labelledby="scopes-label">${input.scopes.map((s) => html`<li><code>${s}</code>: ${SCOPE_TEXT[s] ?? s}</li>`)}</ul></dd>
  </dl>
  <button type="submit" name="decision" value="approve" class="primary">Allow</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`;
}

/** An error page for requests that must not be sent back to the client (unknown client, bad redirect URI). */
export function errorPage(title: string, message: string): SafeHtml {
  return html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p class="note">You can close this window and go back to the app.</p>`;
}
