import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Connection } from 'mongoose';
import * as oauth from 'oauth4webapi';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../scripts/infra.ts';
import { claimCodeFor, uniqueAddress } from './helpers/mail.ts';
import { peopleOf } from './helpers/oauth.ts';
import { openBrowserContext } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

const shots = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'screenshots');
// People and the mailbox are shared by every file of the system: addresses no other test uses.
const person = { email: uniqueAddress('marta@andes.example'), password: 'consent screens 4 all' };
const rosa = uniqueAddress('rosa@andes.example');

let sys: TestSystem;
let db: Connection;
let context: BrowserContext;
let callback: Server;
let redirectUri: string;
let client: oauth.Client;
let as: oauth.AuthorizationServer;
const cspViolations: string[] = [];

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  sys = await startTestSystem('pages');
  const seeded = await peopleOf(sys);
  db = seeded.db;
  const ws = await sys.workspace('Ferretería Marta');
  const user = await seeded.people.createUser({ email: person.email, name: 'Marta', password: person.password });
  await seeded.people.setMembership(ws.workspace_id, user._id, 'accountant');
  // The app's own redirect endpoint: a page that says it got an answer.
  callback = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>App</title><h1>Back in the app</h1>'));
  await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/oauth/callback`;
  const issuer = new URL(sys.gatewayUrl);
  const insecure = { [oauth.allowInsecureRequests]: true };
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Inventario Plus', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }, insecure));
  // Debian's Chromium, driven by playwright-core (INFRA.md): a context of this file's own in the run's one browser.
  context = await openBrowserContext({ viewport: { width: 900, height: 900 } });
  // These pages speak Spanish by default (workspace-pages.test.ts checks it); here the English a person can choose.
  await context.addCookies([{ name: 'cuadra_lang', value: 'en', url: sys.gatewayUrl }]);
});
afterAll(async () => {
  await context?.close();
  callback?.close();
  await db?.close();
  await sys?.stop();
});

async function openPage(): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return page;
}

async function authorizationUrl(state = 'st-123'): Promise<{ url: string; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope: 'tools:read tools', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) {
    url.searchParams.set(k, v);
  }
  return { url: url.href, verifier };
}

/** WCAG contrast ratio of an element's text colour against its (first opaque ancestor's) background. */
async function contrastOf(page: Page, selector: string): Promise<number> {
  // Runs in the page: the browser's globals are reached through `globalThis` (this project compiles without the DOM lib).
  return page.locator(selector).first().evaluate((el: any) => {
    const getComputedStyle = (globalThis as any).getComputedStyle as (e: unknown) => { color: string; backgroundColor: string };
    const rgb = (s: string) => (s.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) => {
      const f = (c: number) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    let bgEl: any = el;
    let bg = 'rgba(0, 0, 0, 0)';
    while (bgEl) {
      bg = getComputedStyle(bgEl).backgroundColor;
      if (rgb(bg)[3] !== 0) break;
      bgEl = bgEl.parentElement;
    }
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(bg))].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
}

describe('sign-in pages in Chromium', () => {
  it('login page: labelled fields, landmarks, focus order, contrast, no CSP violation; a wrong password is announced', async () => {
    const page = await openPage();
    const { url } = await authorizationUrl();
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['x-frame-options']).toBe('DENY');
    expect(res?.headers()['content-security-policy']).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Inventario Plus');
    expect(await page.getByRole('main').count()).toBe(1);
    expect(await page.getByRole('banner').count()).toBe(1);
    expect(await page.getByRole('contentinfo').count()).toBe(1);
    // Focus starts on the e-mail field and moves e-mail → password → Sign in.
    const focused = () => page.evaluate(() => {
      const active = (globalThis as any).document.activeElement;
      return active?.getAttribute('name') ?? active?.textContent;
    });
    expect(await focused()).toBe('email');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('password');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Sign in');
    expect(await contrastOf(page, 'main p.note')).toBeGreaterThanOrEqual(4.5);
    expect(await contrastOf(page, 'button.primary')).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: path.join(shots, 'oauth-login.png'), fullPage: true });

    await page.getByLabel('E-mail').fill(person.email);
    await page.getByLabel('Password').fill('not my password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('e-mail or password is not right');
    expect(await page.getByLabel('E-mail').inputValue()).toBe(person.email);
    // The e-mail is kept; focus goes to the password, the field to type again.
    expect(await focused()).toBe('password');
    await page.screenshot({ path: path.join(shots, 'oauth-login-error.png'), fullPage: true });
    await page.close();
  });

  it('consent screen names client, redirect host, scopes and workspace; Allow returns code, state and iss to the app', async () => {
    const page = await openPage();
    const { url, verifier } = await authorizationUrl('allow-state');
    await page.goto(url);
    await page.getByLabel('E-mail').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const text = (await page.getByRole('main').textContent()) ?? '';
    expect(text).toContain('Allow Inventario Plus to use your workspace?');
    expect(text).toContain(new URL(redirectUri).host);
    expect(text).toContain('Ferretería Marta');
    expect(text).toContain('your role: accountant');
    expect(text).toContain('tools:read');
    expect(text).toMatch(/tools: Read and change/);
    expect(await contrastOf(page, 'button.secondary')).toBeGreaterThanOrEqual(4.5);
    await page.screenshot({ path: path.join(shots, 'oauth-consent.png'), fullPage: true });

    await Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUri)), page.getByRole('button', { name: 'Allow' }).click()]);
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('allow-state');
    expect(back.searchParams.get('iss')).toBe(sys.gatewayUrl);
    const params = oauth.validateAuthResponse(as, client, back, 'allow-state');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, { [oauth.allowInsecureRequests]: true }));
    expect(tokens.scope).toBe('tools:read tools');
    expect((await sys.invoke('invoices.list', {}, tokens.access_token)).status).toBe(200);
    await page.close();
  });

  it('Deny returns access_denied to the app', async () => {
    const page = await openPage();
    const { url } = await authorizationUrl('deny-state');
    await page.goto(url);
    await page.getByLabel('E-mail').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUri)), page.getByRole('button', { name: 'Deny' }).click()]);
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('deny-state');
    await page.close();
  });

  it('a bad redirect URI is shown as an error page, never followed', async () => {
    const page = await openPage();
    const { url } = await authorizationUrl();
    const bad = new URL(url);
    bad.searchParams.set('redirect_uri', 'https://evil.example/steal');
    const res = await page.goto(bad.href);
    expect(res?.status()).toBe(400);
    expect(page.url()).toBe(bad.href);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('redirect_uri');
    await page.screenshot({ path: path.join(shots, 'oauth-bad-redirect.png'), fullPage: true });
    await page.close();
  });

  it('claim page: an agent-opened workspace is claimed in the browser', async () => {
    const opened = await sys.fetch('/v1/auth/agent-signup', { body: { email: rosa, workspace_name: 'Café Rosa', agent_name: 'Asistente' } });
    expect(opened.status).toBe(201);
    const page = await openPage();
    await page.goto(opened.body.claim_url);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Claim Café Rosa');
    expect(await page.getByLabel('Your name').count()).toBe(1);
    await page.screenshot({ path: path.join(shots, 'claim-form.png'), fullPage: true });
    await page.getByLabel(/Code from the e-mail/).fill(await claimCodeFor(rosa));
    await page.getByLabel('Your name').fill('Rosa Díaz');
    await page.getByLabel('Choose a password').fill('cafe de altura 1800');
    await page.getByRole('button', { name: 'Claim workspace' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Café Rosa is yours');
    await page.screenshot({ path: path.join(shots, 'claim-done.png'), fullPage: true });
    // The same link a second time.
    const again = await page.goto(opened.body.claim_url);
    expect(again?.status()).toBe(400);
    await page.close();
  });

  it('loaded no page with a Content-Security-Policy violation', () => {
    expect(cspViolations).toEqual([]);
  });
});
