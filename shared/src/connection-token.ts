import jwt from 'jsonwebtoken';
import { CuadraError, type ErrorCode } from './errors.ts';
import { SERVICE_ISSUER, type PeerConfig } from './peers.ts';

/*
 * The one way a service other than agents gets the access token of a workspace's connection
 * (issue 37: e-mail accounts that sign in with XOAUTH2). Not a tool and not in any graph: an
 * internal route of the agents service, reached only with an assertion signed by the deployment's
 * service key for its own audience (a graph-read assertion is not one, nor the reverse), naming the
 * asking service, one workspace and what the token is for. The answer holds the access token and
 * its expiry only — never a refresh token or client secret (those never leave agents) — and agents
 * refreshes it first when it is about to expire (connections/credential.ts) and counts each read
 * on the connection.
 */

/** Where the agents service answers a connection's access token. */
export const CONNECTION_TOKEN_PATH = '/internal/connection-token';
/** The header carrying the asking service's assertion. */
export const CONNECTION_TOKEN_HEADER = 'cuadra-credential-assertion';
const AUDIENCE = 'cuadra-connection-token';
const TTL_SECONDS = 30;

/** The services allowed to read a connection's token, and what for. */
export const CONNECTION_TOKEN_READERS: Record<string, readonly string[]> = { marketing: ['smtp', 'imap'] };

/** What the asking service states: itself, the workspace it acts for, and what the token is for. */
export interface ConnectionTokenClaims { service: string; workspace: string; purpose: string }

/** The answer: the access token (only), when it expires (null: the provider did not say), and the connection's kind. */
export interface ConnectionToken { kind: 'api_key' | 'oauth2'; access_token: string; expires_at: string | null }

/** Checks an assertion for this route; the claims, or `unauthenticated` / `policy_denied`. */
export function verifyConnectionTokenAssertion(token: string | undefined, publicKey: string): ConnectionTokenClaims {
  let claims: { ws?: unknown; svc?: unknown; for?: unknown; sub?: unknown };
  try {
    claims = jwt.verify(token ?? '', publicKey, { algorithms: ['ES256'], issuer: SERVICE_ISSUER, audience: AUDIENCE }) as typeof claims;
  } catch {
    throw new CuadraError('unauthenticated', 'The credential assertion is missing, expired or not signed by this deployment.');
  }
  if (typeof claims.ws !== 'string' || typeof claims.svc !== 'string' || typeof claims.for !== 'string' || claims.sub !== claims.svc) {
    throw new CuadraError('unauthenticated', 'The credential assertion does not name a service, a workspace and a purpose.');
  }
  if (!CONNECTION_TOKEN_READERS[claims.svc]?.includes(claims.for)) {
    throw new CuadraError('policy_denied', `The ${claims.svc} service does not read connection tokens for ${claims.for}.`);
  }
  return { service: claims.svc, workspace: claims.ws, purpose: claims.for };
}

/**
 * The access token of connection `id` of `workspace`, asked by `service` for `purpose`. A
 * connection that is gone or revoked is `conflict` (or `not_found`) with the owner's message; an
 * agents service that does not answer, or a refresh the provider refused, is `unavailable` — in
 * every case before anything was sent.
 */
export async function readConnectionToken(peers: PeerConfig | undefined, claims: ConnectionTokenClaims, id: string): Promise<ConnectionToken> {
  const url = peers?.urls.agents;
  if (!peers || !url) throw new CuadraError('unavailable', 'The agents service (which keeps connections) is not configured here; nothing was sent.', { beforeAnyEffect: true });
  const assertion = jwt.sign({ ws: claims.workspace, svc: claims.service, for: claims.purpose }, peers.privateKey, {
    algorithm: 'ES256', issuer: SERVICE_ISSUER, audience: AUDIENCE, subject: claims.service, expiresIn: TTL_SECONDS,
  });
  let res: Response;
  try {
    res = await fetch(`${url}${CONNECTION_TOKEN_PATH}`, {
      method: 'POST', headers: { 'content-type': 'application/json', [CONNECTION_TOKEN_HEADER]: assertion },
      body: JSON.stringify({ connection_id: id }), signal: AbortSignal.timeout(15_000),
    });
  } catch {
    throw new CuadraError('unavailable', 'The agents service did not answer for the connection\'s token; nothing was sent.', { beforeAnyEffect: true });
  }
  const body = (await res.json().catch(() => null)) as (ConnectionToken & { code?: ErrorCode; error?: string }) | null;
  if (res.ok && typeof body?.access_token === 'string') return { kind: body.kind === 'api_key' ? 'api_key' : 'oauth2', access_token: body.access_token, expires_at: body.expires_at ?? null };
  const code: ErrorCode = body?.code === 'conflict' || body?.code === 'not_found' ? body.code : 'unavailable';
  throw new CuadraError(code, body?.error ?? `The agents service answered ${res.status} for the connection's token; nothing was sent.`, { beforeAnyEffect: true });
}

