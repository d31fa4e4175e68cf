import { createHash, randomBytes } from 'node:crypto';
import { newId, randomBase62, sameDigest, type Logger } from '@cuadra/shared';
import express, { Router, type Request, type Response } from 'express';
import type { Connection } from 'mongoose';
import type { IdentityStore } from '../identity/store.ts';
import { sha256, type PeopleStore } from '../identity/people.ts';
import { consentPage, errorPage, loginPage } from '../pages/authorize.ts';
import { clientAddress, sameText, sendPage, type CsrfGuard } from '../pages/html.ts';
import { localeOf, pageChrome } from '../pages/i18n.ts';
import { isOutage, OUTAGE_RETRY_SECONDS, sendUnavailablePage } from '../pages/unavailable.ts';
import { isMetadataDocumentUrl, OAuthError, parseRegistration, redirectUriMatches, type ClientInfo, type MetadataDocumentClients } from './clients.ts';
import { oauthModels } from './models.ts';
import type { Throttle } from './throttle.ts';
import type { AccessTokens } from './tokens.ts';

/** Scopes of the contract (CONTRACT.md §5). */
export const SCOPES = ['tools:read', 'tools', 'sites.login', 'sites.edit'] as const;
/** Authorization codes live 60 seconds. */
const CODE_TTL_MS = 60_000;
/** Refresh tokens live 30 days each (CONTRACT.md §5); every use issues the next one. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
/** How long a signed-in person has to answer the consent screen. */
const LOGIN_TICKET_TTL_MS = 10 * 60_000;
/** The authorization request parameters carried through the sign-in forms. */
const REQUEST_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource'] as const;

/** A validated authorization request. */
interface AuthorizationRequest {
  client: ClientInfo;
  redirectUri: string;
  state: string | undefined;
  scopes: string[];
  codeChallenge: string;
  resource: string;
  /** The request parameters as received, for the hidden fields of the forms. */
  params: Record<string, string>;
}

/** Thrown when an error may be sent back to the client by redirect (RFC 6749 §4.1.2.1). */
class RedirectError extends OAuthError {
  readonly redirectUri: string;
  readonly state: string | undefined;
  constructor(error: string, description: string, redirectUri: string, state: string | undefined) {
    super(error, description);
    this.redirectUri = redirectUri;
    this.state = state;
  }
}

export interface OAuthServerDeps {
  db: Connection;
  issuer: string;
  identity: IdentityStore;
  people: PeopleStore;
  tokens: AccessTokens;
  metadataClients: MetadataDocumentClients;
  csrf: CsrfGuard;
  throttles: { login: Throttle; loginAddress: Throttle; register: Throttle };
  log: Logger;
}

/**
 * The OAuth 2.1 authorization server (CONTRACT.md §5): metadata, registration, the sign-in
 * and consent pages, the token and revocation endpoints, and the key set.
 */
export function oauthRouter(deps: OAuthServerDeps): Router {
  const { issuer, people, tokens, csrf } = deps;
  const models = oauthModels(deps.db);
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });

  // CORS: browser-based clients read metadata, register and exchange codes from their own origin.
  const cors = (req: Request, res: Response, next: () => void) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, MCP-Protocol-Version');
    res.setHeader('Access-Control-Max-Age', '600');
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next();
  };

  const authorizationServerMetadata = {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    resource_indicators_supported: true,
  };
  const protectedResource = (resource: string) => ({
    resource,
    resource_name: 'Cuadra',
    authorization_servers: [issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    resource_signing_alg_values_supported: ['ES256'],
  });

  const corsPaths = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/jwks.json', '/oauth/register', '/oauth/token', '/oauth/revoke'];
  // The preflight is a route of its own (so the gateway's table of served methods lists OPTIONS);
  // the same middleware then adds the CORS headers to the answers of the other methods.
  router.options(corsPaths, cors);
  router.use(corsPaths, cors);
  router.get('/.well-known/oauth-authorization-server', (_req, res) => {
    res.json(authorizationServerMetadata);
  });
  router.get('/.well-known/oauth-protected-resource', (_req, res) => {
    res.json(protectedResource(issuer));
  });
  router.get('/.well-known/oauth-protected-resource/mcp', (_req, res) => {
    res.json(protectedResource(`${issuer}/mcp`));
  });
  router.get('/.well-known/jwks.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(tokens.jwks());
  });

  // ---------------------------------------------------------------- registration (RFC 7591)
  const registrationBody = express.json({ limit: '16kb' });
  router.post('/oauth/register', (req, res, next) => {
    // A body that is not JSON (or too large) is still answered in RFC 7591's error shape.
    registrationBody(req, res, (err?: unknown) => {
      if (!err) return next();
      const tooLarge = (err as { type?: string }).type === 'entity.too.large';
      sendOAuthError(res, new OAuthError('invalid_client_metadata', tooLarge ? 'The client metadata is larger than 16 KB.' : 'The client metadata must be a JSON object.', tooLarge ? 413 : 400));
    });
  }, async (req, res) => {
    try {
      const wait = await deps.throttles.register.hit(clientAddress(req));
      if (wait !== null) {
        res.setHeader('Retry-After', String(wait));
        return sendOAuthError(res, new OAuthError('rate_limited', `Too many registrations from this address; retry in ${wait} s.`, 429));
      }
      const meta = parseRegistration(req.body);
      const clientId = `cli_${randomBase62(24)}`;
      const secret = meta.token_endpoint_auth_method === 'none' ? null : `cs_${randomBase62(43)}`;
      const now = new Date();
      await models.clients.create({ _id: clientId, ...meta, secret_hash: secret ? sha256(secret) : null, created_at: now });
      res.status(201).setHeader('Cache-Control', 'no-store');
      res.json({
        client_id: clientId,
        ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
        client_id_issued_at: Math.floor(now.getTime() / 1000),
        client_name: meta.client_name,
        ...(meta.client_uri ? { client_uri: meta.client_uri } : {}),
        redirect_uris: meta.redirect_uris,
        token_endpoint_auth_method: meta.token_endpoint_auth_method,
        grant_types: meta.grant_types,
        response_types: ['code'],
      });
    } catch (err) {
      sendOAuthError(res, err, deps.log);
    }
  });

  /** The client named by `client_id`: registered here, or a metadata document URL. */
  async function findClient(clientId: string): Promise<ClientInfo | null> {
    if (isMetadataDocumentUrl(clientId)) return deps.metadataClients.fetch(clientId);
    if (!/^cli_[0-9A-Za-z]{24}$/.test(clientId)) return null;
    const c = await models.clients.findById(clientId).lean();
    return c ? { client_id: c._id, client_name: c.client_name, redirect_uris: c.redirect_uris, token_endpoint_auth_method: c.token_endpoint_auth_method, kind: 'registered' } : null;
  }

  // ---------------------------------------------------------------- authorization endpoint
  /**
   * Validates an authorization request. Problems with the client or the redirect URI are
   * shown to the person (never redirected to an unchecked URI); the rest go back by redirect.
   */
  async function parseAuthorization(source: Record<string, unknown>): Promise<AuthorizationRequest> {
    const params: Record<string, string> = {};
    for (const name of REQUEST_PARAMS) {
      const value = source[name];
      if (Array.isArray(value)) throw new OAuthError('invalid_request', `The parameter ${name} is given more than once.`);
      if (typeof value === 'string') params[name] = value;
    }
    if (!params.client_id) throw new OAuthError('invalid_request', 'The request names no client_id.');
    const client = await findClient(params.client_id);
    if (!client) throw new OAuthError('invalid_client', 'No client is registered with this client_id.');
    if (!params.redirect_uri) throw new OAuthError('invalid_request', 'The request has no redirect_uri.');
    if (!redirectUriMatches(client.redirect_uris, params.redirect_uri)) throw new OAuthError('invalid_request', 'The redirect_uri is not one this client registered.');
    const fail = (error: string, description: string) => new RedirectError(error, description, params.redirect_uri, params.state);
    if (params.response_type !== 'code') throw fail('unsupported_response_type', 'Only response_type=code is supported.');
    if (!params.code_challenge) throw fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
    if (params.code_challenge_method !== 'S256') throw fail('invalid_request', 'Only the S256 code_challenge_method is supported.');
    if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) throw fail('invalid_request', 'The code_challenge is not a base64url SHA-256.');
    const scopes = [...new Set((params.scope ?? 'tools:read').split(' ').filter(Boolean))];
    if (scopes.length === 0 || scopes.some((s) => !(SCOPES as readonly string[]).includes(s))) throw fail('invalid_scope', `Scopes are ${SCOPES.join(', ')}.`);
    const resource = tokens.resourceOf(params.resource);
    if (!resource) throw fail('invalid_target', `The resource must be ${tokens.resources.join(' or ')}.`);
    return { client, redirectUri: params.redirect_uri, state: params.state, scopes, codeChallenge: params.code_challenge, resource, params };
  }

  function redirectWith(res: Response, redirectUri: string, values: Record<string, string | undefined>): void {
    const url = new URL(redirectUri);
    for (const [k, v] of Object.entries(values)) if (v !== undefined) url.searchParams.set(k, v);
    url.searchParams.set('iss', issuer);
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, url.href);
  }

  function authorizeFailed(req: Request, res: Response, err: unknown): void {
    if (err instanceof RedirectError) return redirectWith(res, err.redirectUri, { error: err.error, error_description: err.message, state: err.state });
    const t = localeOf(req, res);
    // The OAuth error's own message (a protocol detail) stays as the library words it.
    if (err instanceof OAuthError) return sendPage(res, { status: 400, title: t.t('oauth.invalid.title'), ...pageChrome(req, t), body: errorPage(t, t.t('oauth.invalid.title'), err.message) });
    deps.log.error({ err }, 'authorization request failed');
    if (isOutage(err)) return sendUnavailablePage(req, res);
    sendPage(res, { status: 500, title: t.t('error.title'), ...pageChrome(req, t), body: errorPage(t, t.t('error.title'), t.t('error.retry')) });
  }

  /** The origin a form may be redirected to after consent (CSP form-action). */
  const redirectOrigin = (uri: string) => {
    const u = new URL(uri);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : u.protocol;
  };
  const redirectHost = (uri: string) => {
    const u = new URL(uri);
    return u.host || u.protocol;
  };

  // A signed ticket proving this browser signed in for this very request, so the consent
  // form needs no password again. Bound to the CSRF cookie and the request parameters.
  const paramsDigest = (params: Record<string, string>) => createHash('sha256').update(JSON.stringify(REQUEST_PARAMS.map((n) => params[n] ?? null))).digest('base64url');
  function issueTicket(req: Request, res: Response, user: string, params: Record<string, string>): string {
    const body = Buffer.from(JSON.stringify({ u: user, e: Date.now() + LOGIN_TICKET_TTL_MS, p: paramsDigest(params) })).toString('base64url');
    return `${body}.${csrf.issue(req, res, `ticket|${body}`)}`;
  }
  function checkTicket(req: Request, ticket: unknown, params: Record<string, string>): string | null {
    if (typeof ticket !== 'string') return null;
    const [body, mac] = ticket.split('.');
    if (!body || !mac || !csrf.check(req, `ticket|${body}`, mac)) return null;
    try {
      const t = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { u: string; e: number; p: string };
      return t.e > Date.now() && t.p === paramsDigest(params) ? t.u : null;
    } catch {
      return null;
    }
  }

  async function showConsent(req: Request, res: Response, request: AuthorizationRequest, user: { _id: string; email: string }): Promise<void> {
    const memberships = await people.memberships(user._id);
    const workspaces = (await Promise.all(memberships.map(async (m) => ({ id: m.workspace, role: m.role, name: (await deps.identity.workspace(m.workspace))?.name ?? m.workspace }))));
    if (workspaces.length === 0) {
      return redirectWith(res, request.redirectUri, { error: 'access_denied', error_description: 'This person belongs to no workspace.', state: request.state });
    }
    const t = localeOf(req, res);
    sendPage(res, {
      title: t.t('oauth.consent.title', { client: request.client.client_name }),
      formActions: [redirectOrigin(request.redirectUri)],
      ...pageChrome(req, t),
      body: consentPage(t, {
        clientName: request.client.client_name, clientId: request.client.client_id, clientKind: request.client.kind, redirectHost: redirectHost(request.redirectUri),
        scopes: request.scopes, workspaces, params: request.params, csrf: csrf.issue(req, res, 'authorize'), ticket: issueTicket(req, res, user._id, request.params), userEmail: user.email,
      }),
    });
  }

  function showLogin(req: Request, res: Response, request: AuthorizationRequest, extra: { status?: number; email?: string; error?: string } = {}): void {
    const t = localeOf(req, res);
    sendPage(res, {
      status: extra.status,
      title: t.t('signIn.title'),
      formActions: [redirectOrigin(request.redirectUri)],
      ...pageChrome(req, t),
      body: loginPage(t, { clientName: request.client.client_name, redirectHost: redirectHost(request.redirectUri), params: request.params, csrf: csrf.issue(req, res, 'authorize'), email: extra.email, error: extra.error }),
    });
  }

  router.get('/oauth/authorize', async (req, res) => {
    // The sign-in it shows is throttled in Redis: without it the form could only fail.
    if (!(await deps.throttles.login.available())) return sendUnavailablePage(req, res);
    try {
      showLogin(req, res, await parseAuthorization(req.query as Record<string, unknown>));
    } catch (err) {
      authorizeFailed(req, res, err);
    }
  });

  router.post('/oauth/authorize', form, async (req, res) => {
    let request: AuthorizationRequest;
    try {
      request = await parseAuthorization(req.body ?? {});
    } catch (err) {
      return authorizeFailed(req, res, err);
    }
    try {
      const body = req.body as Record<string, unknown>;
      if (!csrf.check(req, 'authorize', body.csrf)) {
        return showLogin(req, res, request, { status: 403, error: localeOf(req, res).t('signIn.expired') });
      }
      let userId = checkTicket(req, body.login_ticket, request.params);
      let user = userId ? await people.user(userId) : null;
      if (!user) {
        const email = typeof body.email === 'string' ? body.email.trim().toLowerCase().slice(0, 320) : '';
        const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : '';
        if (!email || !password) return showLogin(req, res, request, { status: 400, email, error: localeOf(req, res).t('signIn.missing') });
        const address = clientAddress(req);
        const wait = (await deps.throttles.loginAddress.hit(address)) ?? (await deps.throttles.login.hit(`${address}|${email}`));
        if (wait !== null) {
          res.setHeader('Retry-After', String(wait));
          return showLogin(req, res, request, { status: 429, email, error: localeOf(req, res).t('signIn.throttled', { minutes: Math.ceil(wait / 60) }) });
        }
        user = await people.checkPassword(email, password);
        if (!user) return showLogin(req, res, request, { status: 401, email, error: localeOf(req, res).t('signIn.wrong') });
        await deps.throttles.login.reset(`${address}|${email}`);
        userId = user._id;
      }
      if (body.decision === 'deny') {
        return redirectWith(res, request.redirectUri, { error: 'access_denied', error_description: 'The person did not allow access.', state: request.state });
      }
      if (body.decision !== 'approve') return showConsent(req, res, request, user);
      const memberships = await people.memberships(user._id);
      const chosen = typeof body.workspace === 'string' ? memberships.find((m) => m.workspace === body.workspace) : memberships.length === 1 ? memberships[0] : undefined;
      if (!chosen) return showConsent(req, res, request, user);
      const code = randomBytes(32).toString('base64url');
      await models.codes.create({
        _id: sha256(code), client_id: request.client.client_id, redirect_uri: request.redirectUri, code_challenge: request.codeChallenge,
        scope: request.scopes.join(' '), resource: request.resource, user: user._id, workspace: chosen.workspace, grant: newId('grt'),
        expires_at: new Date(Date.now() + CODE_TTL_MS), used_at: null,
      });
      redirectWith(res, request.redirectUri, { code, state: request.state });
    } catch (err) {
      authorizeFailed(req, res, err);
    }
  });

  // ---------------------------------------------------------------- token endpoint
  /** Authenticates the client at the token and revocation endpoints (RFC 6749 §2.3). */
  async function authenticateClient(req: Request): Promise<{ client_id: string; kind: ClientInfo['kind']; refresh: boolean }> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    let clientId: string | undefined;
    let secret: string | undefined;
    let method: ClientInfo['token_endpoint_auth_method'] = 'none';
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(req.header('authorization') ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401);
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
      method = 'client_secret_basic';
    } else if (typeof body.client_secret === 'string') {
      clientId = typeof body.client_id === 'string' ? body.client_id : undefined;
      secret = body.client_secret;
      method = 'client_secret_post';
    } else if (typeof body.client_id === 'string') {
      clientId = body.client_id;
    }
    if (!clientId) throw new OAuthError('invalid_client', 'The client is not identified.', 401);
    if (typeof body.client_id === 'string' && body.client_id !== clientId) throw new OAuthError('invalid_client', 'Two different client ids were sent.', 401);
    if (isMetadataDocumentUrl(clientId)) {
      if (method !== 'none') throw new OAuthError('invalid_client', 'A client named by a metadata document is public and sends no secret.', 401);
      return { client_id: clientId, kind: 'metadata_document', refresh: true };
    }
    const client = /^cli_[0-9A-Za-z]{24}$/.test(clientId) ? await models.clients.findById(clientId).lean() : null;
    if (!client) throw new OAuthError('invalid_client', 'Unknown client.', 401);
    if (client.token_endpoint_auth_method !== method) throw new OAuthError('invalid_client', `This client authenticates with ${client.token_endpoint_auth_method}.`, 401);
    if (method !== 'none' && !(client.secret_hash && secret && sameDigest(client.secret_hash, sha256(secret)))) throw new OAuthError('invalid_client', 'Client authentication failed.', 401);
    return { client_id: client._id, kind: 'registered', refresh: client.grant_types.includes('refresh_token') };
  }

  async function revokeGrant(grant: string, reason: string): Promise<void> {
    await models.grants.updateOne({ _id: grant, revoked_at: null }, { $set: { revoked_at: new Date(), revoked_reason: reason } });
    await models.refreshTokens.updateMany({ grant, used_at: null }, { $set: { used_at: new Date() } });
    await tokens.revokeGrantTokens(grant);
  }

  /** An access token, and a refresh token when the client registered the refresh_token grant. */
  async function issueTokens(grant: { _id: string; user: string; workspace: string; scope: string; resource: string; client_id: string }, scope: string, withRefresh: boolean) {
    const access = tokens.sign({ user: grant.user, workspace: grant.workspace, scope, clientId: grant.client_id, resource: grant.resource, grant: grant._id });
    if (!withRefresh) return { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, scope };
    const refresh = `rt_${randomBytes(32).toString('base64url')}`;
    const now = new Date();
    await models.refreshTokens.create({ _id: sha256(refresh), grant: grant._id, client_id: grant.client_id, created_at: now, expires_at: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS), used_at: null });
    return { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, refresh_token: refresh, scope };
  }

  router.post('/oauth/token', form, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    // A code or refresh token this exchange took (single use) and has not turned into tokens yet:
    // given back if the exchange fails on a store, so an outage never costs the client its grant.
    let taken: { model: typeof models.codes | typeof models.refreshTokens; hash: string; at: Date } | null = null;
    try {
      const client = await authenticateClient(req);
      const body = req.body as Record<string, unknown>;
      const str = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
      if (body.grant_type === 'authorization_code') {
        const code = str('code');
        if (!code) throw new OAuthError('invalid_request', 'Send the code.');
        const hash = sha256(code);
        const at = new Date();
        const used = await models.codes.findOneAndUpdate({ _id: hash, used_at: null }, { $set: { used_at: at } }, { returnDocument: 'before' }).lean();
        if (used) taken = { model: models.codes, hash, at };
        if (!used) {
          const earlier = await models.codes.findById(hash).lean();
          // A code presented twice was stolen or replayed: whatever it issued is revoked (RFC 6749 §4.1.2).
          if (earlier) await revokeGrant(earlier.grant, 'authorization code reused');
          throw new OAuthError('invalid_grant', 'The authorization code is unknown, expired or already used.');
        }
        if (used.expires_at.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'The authorization code has expired.');
        if (used.client_id !== client.client_id) throw new OAuthError('invalid_grant', 'The authorization code was issued to another client.');
        if (str('redirect_uri') !== used.redirect_uri) throw new OAuthError('invalid_grant', 'The redirect_uri does not match the authorization request.');
        const verifier = str('code_verifier');
        if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new OAuthError('invalid_grant', 'Send the PKCE code_verifier (43 to 128 characters).');
        if (!sameText(createHash('sha256').update(verifier).digest('base64url'), used.code_challenge)) {
          throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.');
        }
        const resource = str('resource');
        if (resource !== undefined && tokens.resourceOf(resource) !== used.resource) throw new OAuthError('invalid_target', 'The resource differs from the one authorized.');
        const grant = { _id: used.grant, client_id: used.client_id, user: used.user, workspace: used.workspace, scope: used.scope, resource: used.resource };
        // Once per code, even when a first exchange stored the grant and then failed.
        await models.grants.updateOne({ _id: grant._id }, { $setOnInsert: { ...grant, created_at: new Date(), revoked_at: null, revoked_reason: null } }, { upsert: true });
        const issued = await issueTokens(grant, grant.scope, client.refresh);
        taken = null;
        return res.json(issued);
      }
      if (body.grant_type === 'refresh_token') {
        if (!client.refresh) throw new OAuthError('unauthorized_client', 'This client did not register the refresh_token grant.');
        const token = str('refresh_token');
        if (!token) throw new OAuthError('invalid_request', 'Send the refresh_token.');
        const hash = sha256(token);
        const at = new Date();
        const used = await models.refreshTokens.findOneAndUpdate({ _id: hash, used_at: null }, { $set: { used_at: at } }, { returnDocument: 'before' }).lean();
        if (used) taken = { model: models.refreshTokens, hash, at };
        if (!used) {
          const earlier = await models.refreshTokens.findById(hash).lean();
          // Reuse of a rotated refresh token: one of two parties holds a stolen copy; end the grant.
          if (earlier && earlier.client_id === client.client_id) await revokeGrant(earlier.grant, 'refresh token reused');
          throw new OAuthError('invalid_grant', 'The refresh token is unknown, revoked or already used.');
        }
        if (used.client_id !== client.client_id) throw new OAuthError('invalid_grant', 'The refresh token was issued to another client.');
        if (used.expires_at.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'The refresh token has expired.');
        const grant = await models.grants.findById(used.grant).lean();
        if (!grant || grant.revoked_at) throw new OAuthError('invalid_grant', 'This grant has been revoked.');
        if (!(await people.roleIn(grant.workspace, grant.user))) throw new OAuthError('invalid_grant', 'The person who granted access is no longer a member of the workspace.');
        const resource = str('resource');
        if (resource !== undefined && tokens.resourceOf(resource) !== grant.resource) throw new OAuthError('invalid_target', 'The resource differs from the one authorized.');
        const granted = grant.scope.split(' ');
        const asked = str('scope')?.split(' ').filter(Boolean) ?? granted;
        if (asked.some((s) => !granted.includes(s))) throw new OAuthError('invalid_scope', 'A refresh may only narrow the scopes granted.');
        const issued = await issueTokens(grant, asked.join(' '), true);
        taken = null;
        return res.json(issued);
      }
      throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
    } catch (err) {
      // A refusal uses the code or token up (a stolen one must not be tried again); an outage does not.
      if (taken && isOutage(err)) {
        const { model, hash, at } = taken;
        await (model as typeof models.codes).updateOne({ _id: hash, used_at: at }, { $set: { used_at: null } }).catch(() => undefined);
      }
      sendOAuthError(res, err, deps.log);
    }
  });

  // ---------------------------------------------------------------- revocation (RFC 7009)
  router.post('/oauth/revoke', form, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    try {
      const client = await authenticateClient(req);
      const token = typeof req.body?.token === 'string' ? (req.body.token as string) : '';
      if (!token) throw new OAuthError('invalid_request', 'Send the token to revoke.');
      const refresh = await models.refreshTokens.findById(sha256(token)).lean();
      if (refresh) {
        // Revoking a refresh token ends its grant, with every access token it issued (RFC 7009 §2.1).
        if (refresh.client_id === client.client_id) await revokeGrant(refresh.grant, 'revoked by the client');
      } else {
        const claims = tokens.decode(token);
        if (claims && claims.client_id === client.client_id) await tokens.revokeToken(claims);
      }
      // Unknown or foreign tokens get the same answer (RFC 7009 §2.2): nothing to learn from it.
      res.status(200).end();
    } catch (err) {
      // Revocation writes MongoDB, then Redis: a failure after the first is a revocation recorded in
      // part (honoured once Redis is back), so the answer must not say nothing was done.
      sendOAuthError(res, err, deps.log, REVOCATION_OUTAGE);
    }
  });

  return router;
}

/** An OAuth error answer `{error, error_description}`; anything unexpected is logged and answered as server_error. */
/** The 503 text of a revocation that failed half-way: asking again is safe, and is the way to be sure. */
const REVOCATION_OUTAGE = 'A store behind the authorization server cannot be reached right now; the revocation may be recorded only in part. Ask again shortly (asking again is always safe).';

function sendOAuthError(res: Response, err: unknown, log?: Logger, outageText = 'A store behind the authorization server cannot be reached right now; nothing was done. Try again shortly.'): void {
  if (err instanceof OAuthError) {
    if (err.status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="cuadra"');
    res.status(err.status).json({ error: err.error, error_description: err.message });
    return;
  }
  log?.error({ err }, 'OAuth endpoint failed');
  if (isOutage(err)) {
    // Not the client's fault; for the token endpoint nothing was done (a code or refresh token a failed
    // exchange took is given back), for revocation the caller is told to ask again.
    res.setHeader('Retry-After', String(OUTAGE_RETRY_SECONDS));
    res.status(503).json({ error: 'temporarily_unavailable', error_description: outageText });
    return;
  }
  res.status(500).json({ error: 'server_error', error_description: 'Something went wrong; try again.' });
}
