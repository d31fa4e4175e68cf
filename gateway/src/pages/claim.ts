import { MIN_PASSWORD_LENGTH } from '../identity/people.ts';
import { html, type SafeHtml } from './html.ts';

/** The claim form: the person sets a password (or proves their existing one) and becomes the owner. */
export function claimFormPage(input: { token: string; csrf: string; email: string; workspaceName: string; hasAccount: boolean; error?: string; name?: string; invitedAs?: string }): SafeHtml {
  const intro = input.invitedAs
    ? html`<h1>Join ${input.workspaceName}</h1>
<p>You are invited to join this workspace as <strong>${input.invitedAs}</strong>, with the e-mail <strong>${input.email}</strong>. Accept to become a member and sign in to apps with it.</p>`
    : html`<h1>Claim ${input.workspaceName}</h1>
<p>An AI agent opened this workspace for <strong>${input.email}</strong>. Claim it to become its owner: you decide what the agent may do, and you can sign in to apps with it.</p>
<p class="note">Until you relax the workspace's policies, every change the agent asks for waits for your approval.</p>`;
  return html`
${intro}
${input.error ? html`<p class="error" role="alert" id="form-error">${input.error}</p>` : ''}
<form method="post" action="/claim" ${input.error ? html`aria-describedby="form-error"` : ''}>
  <input type="hidden" name="token" value="${input.token}">
  <input type="hidden" name="csrf" value="${input.csrf}">
  <input type="hidden" name="email" value="${input.email}" autocomplete="username">
  ${input.invitedAs ? '' : html`<label for="code">Code from the e-mail sent to ${input.email}</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{8}" maxlength="8" required aria-describedby="code-help">
  <p class="note" id="code-help">8 digits. The agent does not have it: it was e-mailed to you.</p>`}
  ${input.hasAccount
    ? html`<p>You already have a Cuadra account with this e-mail. Enter its password to add this workspace to it.</p>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>`
    : html`<label for="name">Your name</label>
  <input id="name" name="name" type="text" autocomplete="name" required maxlength="200" value="${input.name ?? ''}">
  <label for="password">Choose a password</label>
  <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-help">
  <p class="note" id="password-help">At least ${MIN_PASSWORD_LENGTH} characters.</p>`}
  <button type="submit" class="primary">${input.invitedAs ? 'Join workspace' : 'Claim workspace'}</button>
</form>`;
}

/** Shown once the claim went through. */
export function claimDonePage(input: { workspaceName: string; email: string; joinedAs?: string }): SafeHtml {
  if (input.joinedAs) {
    return html`
<h1>Welcome to ${input.workspaceName}</h1>
<p role="status">You are now a member, as <strong>${input.joinedAs}</strong>. Sign in as <strong>${input.email}</strong> whenever an app asks for access to your Cuadra workspace.</p>`;
  }
  return html`
<h1>${input.workspaceName} is yours</h1>
<p role="status">You are now the owner. Sign in as <strong>${input.email}</strong> whenever an app asks for access to your Cuadra workspace.</p>
<p class="note">Your agent's calls that change data wait for your approval until you relax the workspace's policies.</p>`;
}
