import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { PeopleStore } from '../../gateway/src/identity/people.ts';
import type { TestSystem } from './system.ts';

/** The gateway's people store of a test system (to seed a person as an operator would). */
export async function peopleOf(sys: TestSystem): Promise<{ people: PeopleStore; db: Connection }> {
  const db = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb);
  const people = new PeopleStore(db);
  await people.init();
  return { people, db };
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (m) => ENTITIES[m]);

/** The fields a browser would submit from the page's form: every `<input>` with a value, and `<select>`'s first option. */
export function formFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input\b([^>]*)>/g)) {
    const name = /\bname="([^"]*)"/.exec(m[1])?.[1];
    const value = /\bvalue="([^"]*)"/.exec(m[1])?.[1];
    if (name && value !== undefined) fields[unescape(name)] = unescape(value);
  }
  for (const m of page.matchAll(/<select\b[^>]*\bname="([^"]*)"[^>]*>\s*<option value="([^"]*)"/g)) fields[unescape(m[1])] = unescape(m[2]);
  return fields;
}

/**
 * A minimal form-submitting user agent: keeps cookies, follows nothing by itself, and
 * submits forms as `application/x-www-form-urlencoded` — what a browser does with these pages.
 */
export class FormAgent {
  readonly #cookies = new Map<string, string>();
  readonly base: string;

  constructor(base: string) {
    this.base = base;
  }

  async #send(url: string, init: RequestInit): Promise<{ status: number; headers: Headers; text: string }> {
    const headers = new Headers(init.headers);
    if (this.#cookies.size > 0) headers.set('cookie', [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new URL(url, this.base), { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      this.#cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  get(url: string) {
    return this.#send(url, { method: 'GET' });
  }

  post(url: string, fields: Record<string, string>) {
    return this.#send(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  }

  forgetCookies(): void {
    this.#cookies.clear();
  }
}

/**
 * Goes through /oauth/authorize as a person would: opens the login page, signs in, answers
 * the consent screen. Returns the final answer (a 303 to the redirect URI when all went well).
 */
export async function authorizeThroughForms(
  base: string, authorizationUrl: URL, person: { email: string; password: string }, decision: 'approve' | 'deny' = 'approve',
): Promise<{ status: number; headers: Headers; text: string; location: string | null; consentPage?: string }> {
  const agent = new FormAgent(base);
  const login = await agent.get(authorizationUrl.href);
  if (login.status !== 200) return { ...login, location: login.headers.get('location') };
  const consent = await agent.post('/oauth/authorize', { ...formFields(login.text), email: person.email, password: person.password });
  if (consent.status !== 200) return { ...consent, location: consent.headers.get('location') };
  const answer = await agent.post('/oauth/authorize', { ...formFields(consent.text), decision });
  return { ...answer, location: answer.headers.get('location'), consentPage: consent.text };
}

/**
 * Registers a public app (dynamic registration), signs `person` in to it through the forms and
 * exchanges the code (PKCE) with oauth4webapi; returns the access token.
 */
export async function signInToNewApp(base: string, person: { email: string; password: string }, clientName: string, scope = 'tools'): Promise<string> {
  const oauth = await import('oauth4webapi');
  const insecure = { [oauth.allowInsecureRequests]: true };
  const redirectUri = 'http://127.0.0.1:53682/cb';
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { client_name: clientName, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }, insecure));
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
  const answer = await authorizeThroughForms(base, url, person);
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  const params = oauth.validateAuthResponse(as, client, new URL(answer.location!), oauth.expectNoState);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure));
  return tokens.access_token;
}
