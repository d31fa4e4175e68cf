import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Connection } from 'mongoose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256, type PeopleStore } from '../gateway/src/identity/people.ts';
import { authorizeThroughForms, peopleOf } from './helpers/oauth.ts';
import { OWN_SYSTEM_SETTINGS, OWN_SYSTEM_TOKEN_KEYS, startTestSystem, type TestSystem } from './helpers/system.ts';

// The access-token key is given to the gateway here so the tests can also mint tokens it must
// refuse (expired, wrong audience) with the very key it trusts.
const tokenKeys = OWN_SYSTEM_TOKEN_KEYS;
const insecure = { [oauth.allowInsecureRequests]: true };
const person = { email: 'ana@andes.example', password: 'correct horse battery' };

let sys: TestSystem;
let people: PeopleStore;
let db: Connection;
let workspaceId: string;
let ownerKey: string;
let as: oauth.AuthorizationServer;
let issuer: URL;
let redirectUri: string;
let callbackPort: number;

beforeAll(async () => {
  sys = await startTestSystem('oauth', OWN_SYSTEM_SETTINGS);
  ({ people, db } = await peopleOf(sys));
  const ws = await sys.workspace('Andes Trading SAS');
  workspaceId = ws.workspace_id;
  ownerKey = ws.api_key;
  const user = await people.createUser({ email: person.email, name: 'Ana Gómez', password: person.password });
  await people.setMembership(workspaceId, user._id, 'owner');
  issuer = new URL(sys.gatewayUrl);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  callbackPort = 40000 + Math.floor(Math.random() * 20000);
  redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
});
afterAll(async () => {
  await db?.close();
  await sys?.stop();
});

/** Registers a client the way a third-party app does (RFC 7591 through oauth4webapi). */
async function register(metadata: Partial<oauth.Client> = {}): Promise<oauth.Client> {
  const res = await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Ledger Sync', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', ...metadata }, insecure);
  return oauth.processDynamicClientRegistrationResponse(res);
}

interface Authorized { callback: URL; verifier: string; state: string; consentPage?: string }

/** Builds an authorization request with PKCE S256 and answers its pages as the person. */
async function authorize(client: oauth.Client, opts: { scope?: string; resource?: string; redirect?: string; extra?: Record<string, string>; omit?: string[] } = {}): Promise<Authorized & { status: number; text: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  const params: Record<string, string> = {
    response_type: 'code', client_id: client.client_id, redirect_uri: opts.redirect ?? redirectUri, scope: opts.scope ?? 'tools',
    state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', resource: opts.resource ?? sys.gatewayUrl, ...opts.extra,
  };
  for (const k of opts.omit ?? []) delete params[k];
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const answer = await authorizeThroughForms(sys.gatewayUrl, url, person);
  return { callback: new URL(answer.location ?? 'about:blank'), verifier, state, status: answer.status, text: answer.text, consentPage: answer.consentPage };
}

/** Exchanges the code with oauth4webapi (validates state and iss on the way). */
async function exchange(client: oauth.Client, auth: Authorized, clientAuth = oauth.None(), verifier = auth.verifier, resource = sys.gatewayUrl) {
  const params = oauth.validateAuthResponse(as, client, auth.callback, auth.state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, { additionalParameters: { resource }, ...insecure });
  return { res, tokens: () => oauth.processAuthorizationCodeResponse(as, client, res) };
}

async function tokensFor(client: oauth.Client, scope = 'tools', resource = sys.gatewayUrl) {
  const auth = await authorize(client, { scope, resource });
  return (await exchange(client, auth, oauth.None(), auth.verifier, resource)).tokens();
}

/** Expects an oauth4webapi call to fail with an OAuth error code. */
async function expectOAuthError(promise: Promise<unknown>, error: string) {
  const err = await promise.then(() => null, (e: unknown) => e);
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    // A 401 client-authentication failure carries a Basic challenge; oauth4webapi reports the challenge first.
    expect(err.status).toBe(401);
    expect(((await err.response.json()) as { error: string }).error).toBe(error);
    return;
  }
  expect(err, `expected ${error}`).toBeInstanceOf(oauth.ResponseBodyError);
  expect((err as oauth.ResponseBodyError).error).toBe(error);
}

describe('metadata', () => {
  it('publishes authorization server metadata (RFC 8414) with the contract fields, with CORS', async () => {
    expect(as.issuer).toBe(sys.gatewayUrl);
    expect(as).toMatchObject({
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['tools:read', 'tools', 'sites.login', 'sites.edit'],
      registration_endpoint: `${sys.gatewayUrl}/oauth/register`,
      token_endpoint: `${sys.gatewayUrl}/oauth/token`,
      revocation_endpoint: `${sys.gatewayUrl}/oauth/revoke`,
    });
    const r = await fetch(`${sys.gatewayUrl}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://app.example' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await fetch(`${sys.gatewayUrl}/oauth/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const reg = await fetch(`${sys.gatewayUrl}/oauth/register`, { method: 'OPTIONS' });
    expect(reg.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('publishes protected resource metadata (RFC 9728), plain and path-aware for /mcp', async () => {
    const plain = await sys.fetch('/.well-known/oauth-protected-resource');
    expect(plain.body).toMatchObject({ resource: sys.gatewayUrl, authorization_servers: [sys.gatewayUrl], scopes_supported: ['tools:read', 'tools', 'sites.login', 'sites.edit'] });
    expect(plain.headers.get('access-control-allow-origin')).toBe('*');
    const mcp = await sys.fetch('/.well-known/oauth-protected-resource/mcp');
    expect(mcp.body).toMatchObject({ resource: `${sys.gatewayUrl}/mcp`, authorization_servers: [sys.gatewayUrl] });
  });

  it('answers 401 with a WWW-Authenticate challenge naming the resource metadata', async () => {
    const r = await sys.fetch('/v1/tools');
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
    expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${sys.gatewayUrl}/.well-known/oauth-protected-resource"`);
  });
});

describe('the whole flow, as a third-party app', () => {
  it('registers, authorizes through the forms, exchanges with PKCE, calls tools, refreshes, detects reuse, revokes', async () => {
    const client = await register();
    expect(client.client_id).toMatch(/^cli_/);
    expect(client.client_secret).toBeUndefined();

    const auth = await authorize(client, { scope: 'tools' });
    expect(auth.status).toBe(303);
    // The consent screen named the client, its redirect host, the scopes and the workspace.
    expect(auth.consentPage).toContain('Ledger Sync');
    expect(auth.consentPage).toContain(`127.0.0.1:${callbackPort}`);
    expect(auth.consentPage).toContain('Andes Trading SAS');
    expect(auth.consentPage).toContain('<code>tools</code>');
    expect(auth.callback.searchParams.get('iss')).toBe(sys.gatewayUrl);
    expect(auth.callback.searchParams.get('state')).toBe(auth.state);

    const { res, tokens } = await exchange(client, auth);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const t = await tokens();
    expect(t).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'tools' });
    const claims = jwt.decode(t.access_token, { complete: true }) as { header: { typ: string; alg: string; kid: string }; payload: Record<string, unknown> };
    expect(claims.header).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    expect(Object.keys(claims.payload).sort()).toEqual(['aud', 'client_id', 'exp', 'gid', 'iat', 'iss', 'jti', 'scope', 'sub', 'ws'].sort());
    expect(claims.payload).toMatchObject({ iss: sys.gatewayUrl, aud: sys.gatewayUrl, ws: workspaceId, scope: 'tools', client_id: client.client_id });
    expect((claims.payload.exp as number) - (claims.payload.iat as number)).toBe(3600);
    // Anyone can verify it from the published key set.
    const jwks = await sys.fetch('/.well-known/jwks.json');
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: claims.header.kid, alg: 'ES256' });

    const party = await sys.invoke('parties.create', { name: 'Cliente OAuth', kind: 'customer' }, t.access_token);
    expect(party.status).toBe(200);
    const list = await sys.invoke('parties.list', {}, t.access_token);
    expect(list.body.output.rows.map((p: { name: string }) => p.name)).toContain('Cliente OAuth');

    // Refresh: a new pair; the refresh token rotates.
    const r1 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), t.refresh_token!, insecure));
    expect(r1.refresh_token).toBeDefined();
    expect(r1.refresh_token).not.toBe(t.refresh_token);
    expect((await sys.invoke('parties.list', {}, r1.access_token)).status).toBe(200);
    const r2 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), r1.refresh_token!, insecure));

    // Reuse of the rotated (first) refresh token: refused, and the whole grant goes with it.
    await expectOAuthError(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), t.refresh_token!, insecure)), 'invalid_grant');
    await expectOAuthError(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), r2.refresh_token!, insecure)), 'invalid_grant');
    const afterReuse = await sys.invoke('parties.list', {}, r2.access_token);
    expect(afterReuse.status).toBe(401);
    expect(afterReuse.body.code).toBe('unauthenticated');

    // Revocation (RFC 7009) of a fresh grant's refresh token ends its access tokens too.
    const fresh = await tokensFor(client);
    expect((await sys.invoke('parties.list', {}, fresh.access_token)).status).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), fresh.refresh_token!, insecure));
    expect((await sys.invoke('parties.list', {}, fresh.access_token)).status).toBe(401);
    await expectOAuthError(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), fresh.refresh_token!, insecure)), 'invalid_grant');

    // Revoking one access token leaves the grant's refresh token working.
    const other = await tokensFor(client);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), other.access_token, { additionalParameters: { token_type_hint: 'access_token' }, ...insecure }));
    expect((await sys.invoke('parties.list', {}, other.access_token)).status).toBe(401);
    const renewed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), other.refresh_token!, insecure));
    expect((await sys.invoke('parties.list', {}, renewed.access_token)).status).toBe(200);
  });

  it('works for a confidential client with client_secret_basic, and refuses a wrong secret', async () => {
    const client = await register({ token_endpoint_auth_method: 'client_secret_basic', client_name: 'Books Server' });
    expect(client.client_secret).toMatch(/^cs_/);
    const auth = await authorize(client, { scope: 'tools:read' });
    const wrong = await exchange(client, auth, oauth.ClientSecretBasic('cs_wrong'));
    await expectOAuthError(wrong.tokens(), 'invalid_client');
    const auth2 = await authorize(client, { scope: 'tools:read' });
    const t = await (await exchange(client, auth2, oauth.ClientSecretBasic(client.client_secret as string))).tokens();
    expect((await sys.invoke('parties.list', {}, t.access_token)).status).toBe(200);
  });

  it('issues no refresh token to a client that registered only authorization_code', async () => {
    const client = await register({ grant_types: ['authorization_code'] });
    const t = await tokensFor(client, 'tools:read');
    expect(t.refresh_token).toBeUndefined();
    expect((await sys.invoke('parties.list', {}, t.access_token)).status).toBe(200);
  });

  it('binds the token audience to the resource: /mcp tokens carry aud …/mcp', async () => {
    const client = await register();
    const t = await tokensFor(client, 'tools:read', `${sys.gatewayUrl}/mcp`);
    expect((jwt.decode(t.access_token) as { aud: string }).aud).toBe(`${sys.gatewayUrl}/mcp`);
    const auth = await authorize(client, { resource: 'https://other.example/api' });
    expect(() => oauth.validateAuthResponse(as, client, auth.callback, auth.state)).toThrow(oauth.AuthorizationResponseError);
    expect(auth.callback.searchParams.get('error')).toBe('invalid_target');
  });

  it('lists exactly what the credential reaches: tools:read sees read tools only', async () => {
    const client = await register();
    const read = await tokensFor(client, 'tools:read');
    const r = await sys.fetch('/v1/tools', { key: read.access_token });
    expect(r.status).toBe(200);
    expect(r.body.tools.length).toBeGreaterThan(3);
    expect(r.body.tools.every((t: { risk: string }) => t.risk === 'read')).toBe(true);
    const all = await tokensFor(client, 'tools');
    const a = await sys.fetch('/v1/tools', { key: all.access_token });
    expect(a.body.tools.some((t: { risk: string }) => t.risk !== 'read')).toBe(true);
    // `sites.*` tools need `sites.edit` (CONTRACT §1): a `tools` token lists none of them; with `sites.edit` too it
    // reaches the same as the owner key (role owner, no patterns).
    const names = (body: { tools: { name: string }[] }) => body.tools.map((t) => t.name);
    const k = await sys.fetch('/v1/tools', { key: ownerKey });
    expect(names(k.body).some((n) => n.startsWith('sites.'))).toBe(true);
    expect(names(a.body).filter((n) => n.startsWith('sites.'))).toEqual([]);
    expect(names(a.body)).toEqual(names(k.body).filter((n) => !n.startsWith('sites.')));
    const both = await tokensFor(client, 'tools sites.edit');
    expect(names((await sys.fetch('/v1/tools', { key: both.access_token })).body)).toEqual(names(k.body));
  });
});

describe('refusals', () => {
  let client: oauth.Client;
  beforeAll(async () => {
    client = await register();
  });

  it('refuses a wrong PKCE verifier', async () => {
    const auth = await authorize(client);
    const { tokens } = await exchange(client, auth, oauth.None(), oauth.generateRandomCodeVerifier());
    await expectOAuthError(tokens(), 'invalid_grant');
  });

  it('refuses a request without a challenge and the plain method, by redirect with iss', async () => {
    const none = await authorize(client, { omit: ['code_challenge', 'code_challenge_method'] });
    expect(none.status).toBe(303);
    expect(none.callback.searchParams.get('error')).toBe('invalid_request');
    expect(none.callback.searchParams.get('iss')).toBe(sys.gatewayUrl);
    expect(none.callback.searchParams.get('state')).toBe(none.state);
    const verifier = oauth.generateRandomCodeVerifier();
    const plain = await authorize(client, { extra: { code_challenge: verifier, code_challenge_method: 'plain' } });
    expect(plain.callback.searchParams.get('error')).toBe('invalid_request');
    expect(plain.callback.searchParams.get('error_description')).toMatch(/S256/);
  });

  it('refuses a redirect URI that was not registered, without redirecting; any port on loopback is fine', async () => {
    for (const bad of ['http://127.0.0.1:4444/elsewhere', `http://127.0.0.1:${callbackPort}/callback/`, 'https://evil.example/callback']) {
      const r = await authorize(client, { redirect: bad });
      expect(r.status).toBe(400);
      expect(r.callback.href).toBe('about:blank');
      expect(r.text).toContain('redirect_uri');
    }
    const otherPort = `http://127.0.0.1:${callbackPort + 1}/callback`;
    const ok = await authorize(client, { redirect: otherPort });
    expect(ok.status).toBe(303);
    expect(ok.callback.origin).toBe(`http://127.0.0.1:${callbackPort + 1}`);
  });

  it('refuses a reused code, and revokes what its first use issued', async () => {
    const auth = await authorize(client);
    const t = await (await exchange(client, auth)).tokens();
    expect((await sys.invoke('parties.list', {}, t.access_token)).status).toBe(200);
    const again = await exchange(client, auth);
    await expectOAuthError(again.tokens(), 'invalid_grant');
    expect((await sys.invoke('parties.list', {}, t.access_token)).status).toBe(401);
    await expectOAuthError(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), t.refresh_token!, insecure)), 'invalid_grant');
  });

  it('refuses an expired code and an expired refresh token', async () => {
    const auth = await authorize(client);
    const code = auth.callback.searchParams.get('code')!;
    // Codes live 60 s and refresh tokens 30 days; age them in the database instead of waiting.
    await db.collection('oauth_codes').updateOne({ _id: sha256(code) as never }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    await expectOAuthError((await exchange(client, auth)).tokens(), 'invalid_grant');
    const t = await tokensFor(client);
    await db.collection('oauth_refresh_tokens').updateOne({ _id: sha256(t.refresh_token!) as never }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    await expectOAuthError(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), t.refresh_token!, insecure)), 'invalid_grant');
  });

  it('refuses a code presented by another client', async () => {
    const thief = await register({ client_name: 'Thief' });
    const auth = await authorize(client);
    const params = oauth.validateAuthResponse(as, client, auth.callback, auth.state);
    const res = await oauth.authorizationCodeGrantRequest(as, thief, oauth.None(), params, redirectUri, auth.verifier, insecure);
    await expectOAuthError(oauth.processAuthorizationCodeResponse(as, thief, res), 'invalid_grant');
  });

  function mint(claims: Record<string, unknown>, key = tokenKeys.privateKey, header: Record<string, unknown> = {}) {
    const kid = (jwt.decode(goodToken, { complete: true }) as { header: { kid: string } }).header.kid;
    return jwt.sign({ ws: workspaceId, scope: 'tools', client_id: client.client_id, gid: 'grt_minted', sub: userId, jti: 'minted', ...claims }, key, {
      algorithm: 'ES256', header: { alg: 'ES256', typ: 'at+jwt', kid, ...header }, issuer: sys.gatewayUrl,
    } as jwt.SignOptions);
  }
  let goodToken: string;
  let userId: string;
  beforeAll(async () => {
    goodToken = (await tokensFor(client)).access_token;
    userId = (jwt.decode(goodToken) as { sub: string }).sub;
  });

  it('accepts a token minted with the right key and claims (the control for the next cases)', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await sys.invoke('parties.list', {}, mint({ aud: sys.gatewayUrl, exp: now + 60 }))).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const r = await sys.invoke('parties.list', {}, mint({ aud: sys.gatewayUrl, iat: now - 7200, exp: now - 3600 }));
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('refuses a token for another audience', async () => {
    const now = Math.floor(Date.now() / 1000);
    const r = await sys.invoke('parties.list', {}, mint({ aud: 'https://other.example', exp: now + 600 }));
    expect(r.status).toBe(401);
  });

  it('refuses forged, unsigned and assertion tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
    expect((await sys.invoke('parties.list', {}, mint({ aud: sys.gatewayUrl, exp: now + 600 }, otherKey))).status).toBe(401);
    const [h, p] = goodToken.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    expect((await sys.invoke('parties.list', {}, `${header}.${p}.`)).status).toBe(401);
    const tampered = JSON.parse(Buffer.from(p, 'base64url').toString());
    tampered.scope = 'tools sites.edit';
    expect((await sys.invoke('parties.list', {}, `${h}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${goodToken.split('.')[2]}`)).status).toBe(401);
    // A gateway assertion (signed with the gateway's other key) is not an access token.
    const assertion = jwt.sign({ ws: workspaceId, role: 'owner' }, sys.keys.privateKey, { algorithm: 'ES256', audience: sys.gatewayUrl, issuer: sys.gatewayUrl, expiresIn: 60 });
    expect((await sys.invoke('parties.list', {}, assertion)).status).toBe(401);
  });

  it('refuses a write tool to a tools:read token with insufficient_scope and the scope it needs', async () => {
    const read = await tokensFor(client, 'tools:read');
    const r = await sys.invoke('parties.create', { name: 'No', kind: 'customer' }, read.access_token);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_scope');
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", scope="tools"/);
    expect((await sys.invoke('parties.list', {}, read.access_token)).status).toBe(200);
  });

  it('refuses a write tool to a %:read key, and an X-Tenant-Id of another workspace', async () => {
    const readKey = await sys.key(workspaceId, 'owner', ['%:read']);
    const r = await sys.invoke('parties.create', { name: 'No', kind: 'customer' }, readKey.api_key);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('policy_denied');
    const other = await sys.workspace('Otra SAS');
    const cross = await sys.invoke('parties.list', {}, goodToken, { 'x-tenant-id': other.workspace_id });
    expect(cross.status).toBe(403);
    expect(cross.body.code).toBe('policy_denied');
    const crossList = await sys.fetch('/v1/tools', { key: goodToken, headers: { 'x-tenant-id': other.workspace_id } });
    expect(crossList.status).toBe(403);
    expect((await sys.invoke('parties.list', {}, goodToken, { 'x-tenant-id': workspaceId })).status).toBe(200);
  });

  it('refuses registration metadata it cannot honour', async () => {
    for (const metadata of [
      { redirect_uris: ['http://app.example/cb'] },
      { redirect_uris: ['https://app.example/cb#frag'] },
      { redirect_uris: ['javascript:alert(1)'] },
      { redirect_uris: [] },
    ]) {
      const r = await sys.fetch('/oauth/register', { body: metadata });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_redirect_uri');
    }
    const r = await sys.fetch('/oauth/register', { body: { redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] } });
    expect(r.body.error).toBe('invalid_client_metadata');
  });

  it('never fetches a client metadata document from loopback or private addresses', async () => {
    for (const clientId of ['https://127.0.0.1/client.json', 'https://localhost/client.json', 'https://10.0.0.8/client.json', 'https://[::1]/client.json']) {
      const url = new URL(`${sys.gatewayUrl}/oauth/authorize`);
      for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:9/cb', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
      const r = await fetch(url, { redirect: 'manual' });
      expect(r.status, clientId).toBe(400);
      expect(await r.text()).toMatch(/not public|could not be fetched/);
    }
  });

  it('throttles sign-in attempts per address and e-mail', async () => {
    const url = new URL(as.authorization_endpoint!);
    const params = { response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, code_challenge: 'y'.repeat(43), code_challenge_method: 'S256', state: 's' };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await authorizeThroughForms(sys.gatewayUrl, url, { email: 'mallory@andes.example', password: 'guess number ' + i })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    // Another e-mail from the same address is not locked out by Mallory's attempts.
    expect((await authorizeThroughForms(sys.gatewayUrl, url, person)).status).toBe(303);
  });

  it('refuses a form posted without the CSRF pair', async () => {
    const r = await fetch(`${sys.gatewayUrl}/oauth/authorize`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, code_challenge: 'z'.repeat(43), code_challenge_method: 'S256', email: person.email, password: person.password, decision: 'approve' }),
      redirect: 'manual',
    });
    expect(r.status).toBe(403);
    expect(r.headers.get('location')).toBeNull();
  });
});
