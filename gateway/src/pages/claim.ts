import { MIN_PASSWORD_LENGTH } from '../identity/people.ts';
import { html, type SafeHtml } from './html.ts';
import type { Translator } from './i18n.ts';

/** The claim form: the person sets a password (or proves their existing one) and becomes the owner. */
export function claimFormPage(t: Translator, input: { token: string; csrf: string; email: string; workspaceName: string; hasAccount: boolean; error?: string; name?: string; invitedAs?: string }): SafeHtml {
  const intro = input.invitedAs
    ? html`<h1>${t.t('claim.join.heading', { workspace: input.workspaceName })}</h1>
<p>${t.t('claim.join.intro', { role: input.invitedAs, email: input.email })}</p>`
    : html`<h1>${t.t('claim.heading', { workspace: input.workspaceName })}</h1>
<p>${t.t('claim.intro', { email: input.email })}</p>
<p class="note">${t.t('claim.intro.note')}</p>`;
  return html`
${intro}
${input.error ? html`<p class="error" role="alert" id="form-error">${input.error}</p>` : ''}
<form method="post" action="/claim" ${input.error ? html`aria-describedby="form-error"` : ''}>
  <input type="hidden" name="token" value="${input.token}">
  <input type="hidden" name="csrf" value="${input.csrf}">
  <input type="hidden" name="email" value="${input.email}" autocomplete="username">
  ${input.invitedAs ? '' : html`<label for="code">${t.t('claim.code', { email: input.email })}</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{8}" maxlength="8" required aria-describedby="code-help">
  <p class="note" id="code-help">${t.t('claim.code.help')}</p>`}
  ${input.hasAccount
    ? html`<p>${t.t('claim.hasAccount')}</p>
  <label for="password">${t.t('claim.password')}</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>`
    : html`<label for="name">${t.t('claim.name')}</label>
  <input id="name" name="name" type="text" autocomplete="name" required maxlength="200" value="${input.name ?? ''}">
  <label for="password">${t.t('claim.newPassword')}</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-help">
  <p class="note" id="password-help">${t.t('claim.newPassword.help', { min: MIN_PASSWORD_LENGTH })}</p>`}
  <button type="submit" class="primary">${input.invitedAs ? t.t('claim.join.submit') : t.t('claim.submit')}</button>
</form>`;
}

/** Shown once the claim went through. */
export function claimDonePage(t: Translator, input: { workspaceName: string; email: string; joinedAs?: string }): SafeHtml {
  if (input.joinedAs) {
    return html`
<h1>${t.t('claim.joined.heading', { workspace: input.workspaceName })}</h1>
<p role="status">${t.t('claim.joined.text', { role: input.joinedAs, email: input.email })}</p>`;
  }
  return html`
<h1>${t.t('claim.done.heading', { workspace: input.workspaceName })}</h1>
<p role="status">${t.t('claim.done.text', { email: input.email })}</p>
<p class="note">${t.t('claim.done.note')}</p>
<p><a href="/app/approvals">${t.t('claim.done.inbox')}</a></p>`;
}
