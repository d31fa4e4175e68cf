import { isIP } from 'node:net';
import { checkedLookup, isPublicAddress } from '@cuadra/shared/outbound';

export { isPublicAddress };
import { Agent, fetch as undiciFetch } from 'undici';
import { assertWithinBounds } from '@cuadra/shared';

/** What the authorization server needs to know about a client, however it was registered. */
export interface ClientInfo {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none' | 'client_secret_basic' | 'client_secret_post';
  /** `registered` at /oauth/register, or named by a Client ID Metadata Document URL. */
  kind: 'registered' | 'metadata_document';
}

/** An OAuth error answer (RFC 6749 §5.2 names). */
export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(error: string, description: string, status = 400) {
    super(description);
    this.error = error;
    this.status = status;
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Is this an acceptable redirect URI? https anywhere; http only on loopback (RFC 8252 §7.3);
 * a private-use scheme in reverse-domain form (`com.example.app:/cb`, RFC 8252 §7.1). Never a fragment.
 */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return 'is not a string of at most 2000 characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URI';
  }
  if (url.hash || value.includes('#')) return 'has a fragment';
  if (url.username || url.password) return 'carries credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname) ? null : 'uses http on a host that is not loopback';
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/i.test(url.protocol)) return null;
  return 'uses a scheme that is not allowed';
}

/**
 * Exact redirect URI matching, except that a loopback http redirect may use any port
 * (RFC 8252 §7.3: native apps get an ephemeral port from the OS).
 */
export function redirectUriMatches(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true;
  let g: URL;
  try {
    g = new URL(given);
  } catch {
    return false;
  }
  if (g.protocol !== 'http:' || !LOOPBACK_HOSTS.has(g.hostname) || g.hash || given.includes('#')) return false;
  return registered.some((r) => {
    let u: URL;
    try {
      u = new URL(r);
    } catch {
      return false;
    }
    return u.protocol === 'http:' && u.hostname === g.hostname && u.pathname === g.pathname && u.search === g.search;
  });
}

/** Validated client metadata of a registration request (RFC 7591 §2). */
export function parseRegistration(body: unknown): { client_name: string; client_uri: string | null; redirect_uris: string[]; token_endpoint_auth_method: ClientInfo['token_endpoint_auth_method']; grant_types: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'Send the client metadata as a JSON object.');
  // The contract's input bounds before anything reads it (a redirect URI nested 5,000 arrays deep overflowed
  // JSON.stringify quoting it in the refusal: a 500; issue 31, finding 11).
  try {
    assertWithinBounds(body);
  } catch (err) {
    throw new OAuthError('invalid_client_metadata', `The client metadata is out of bounds: ${(err as Error).message}`);
  }
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.redirect_uris) || b.redirect_uris.length === 0 || b.redirect_uris.length > 20) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must list 1 to 20 redirect URIs.');
  }
  for (const uri of b.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `The redirect URI ${JSON.stringify(uri)} ${problem}.`);
  }
  const method = b.token_endpoint_auth_method ?? 'client_secret_basic';
  if (method !== 'none' && method !== 'client_secret_basic' && method !== 'client_secret_post') {
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method must be none, client_secret_basic or client_secret_post.');
  }
  const grantTypes = b.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grantTypes) || grantTypes.some((g) => g !== 'authorization_code' && g !== 'refresh_token') || !grantTypes.includes('authorization_code')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code and may add refresh_token; nothing else is supported.');
  }
  if (b.response_types !== undefined && (!Array.isArray(b.response_types) || b.response_types.some((t) => t !== 'code'))) {
    throw new OAuthError('invalid_client_metadata', 'response_types may only be ["code"].');
  }
  if (b.client_name !== undefined && (typeof b.client_name !== 'string' || b.client_name.trim() === '' || b.client_name.length > 120)) {
    throw new OAuthError('invalid_client_metadata', 'client_name must be a string of 1 to 120 characters.');
  }
  let clientUri: string | null = null;
  if (b.client_uri !== undefined) {
    if (typeof b.client_uri !== 'string' || !/^https?:\/\//.test(b.client_uri)) throw new OAuthError('invalid_client_metadata', 'client_uri must be an http(s) URL.');
    clientUri = b.client_uri;
  }
  const firstHost = new URL(b.redirect_uris[0] as string).host || new URL(b.redirect_uris[0] as string).protocol;
  return {
    client_name: typeof b.client_name === 'string' ? b.client_name.trim() : `App at ${firstHost}`,
    client_uri: clientUri,
    redirect_uris: b.redirect_uris as string[],
    token_endpoint_auth_method: method,
    grant_types: [...new Set(grantTypes as string[])],
  };
}

/** Is `client_id` a Client ID Metadata Document URL? (https, a path, nothing odd in it.) */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!clientId.startsWith('https://')) return false;
  try {
    const url = new URL(clientId);
    return url.pathname !== '/' && !url.hash && !url.username && !url.password && !/\/\.\.?(\/|$)/.test(url.pathname) && url.href === clientId;
  } catch {
    return false;
  }
}

/** Largest metadata document accepted (CONTRACT.md §5: ≤ 5 KB). */
export const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;

/**
 * Fetches and validates a Client ID Metadata Document: https only, no redirects, at most
 * 5 KB, 5 s, never from a private or loopback address; `client_id` inside must equal the URL;
 * only public clients (`token_endpoint_auth_method: none`).
 */
export class MetadataDocumentClients {
  readonly #agent: Agent;
  readonly #allowed: (address: string) => boolean;
  // One sign-in asks for the client up to three times (login page, consent, approval): fetch once per 5 minutes.
  readonly #cache = new Map<string, { client: ClientInfo; until: number }>();

  /** `allowAddress` and `ca` exist for tests (a local TLS server); production uses the defaults. */
  constructor(opts: { allowAddress?: (address: string) => boolean; ca?: string } = {}) {
    this.#allowed = opts.allowAddress ?? isPublicAddress;
    this.#agent = new Agent({ connect: { lookup: checkedLookup(this.#allowed) as never, timeout: 5_000, ...(opts.ca ? { ca: opts.ca } : {}) }, headersTimeout: 5_000, bodyTimeout: 5_000 });
  }

  async fetch(clientId: string): Promise<ClientInfo> {
    const hit = this.#cache.get(clientId);
    if (hit && hit.until > Date.now()) return hit.client;
    const client = await this.#fetchNow(clientId);
    if (this.#cache.size >= 1000) this.#cache.clear();
    this.#cache.set(clientId, { client, until: Date.now() + 5 * 60_000 });
    return client;
  }

  async #fetchNow(clientId: string): Promise<ClientInfo> {
    if (!isMetadataDocumentUrl(clientId)) throw new OAuthError('invalid_client', 'The client_id is not a valid client metadata document URL.');
    const host = new URL(clientId).hostname.replace(/^\[|\]$/g, '');
    // Literal addresses skip DNS, so the connect-time check never sees them: judge them here.
    if (isIP(host) && !this.#allowed(host)) throw new OAuthError('invalid_client', 'The client metadata document is on an address that is not public.');
    let text: string;
    try {
      const res = await undiciFetch(clientId, { dispatcher: this.#agent, redirect: 'manual', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5_000) });
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new OAuthError('invalid_client', `The client metadata document answered ${res.status}${res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''}.`);
      }
      const declared = Number(res.headers.get('content-length') ?? '0');
      if (declared > METADATA_DOCUMENT_MAX_BYTES) {
        await res.body?.cancel();
        throw new OAuthError('invalid_client', 'The client metadata document is larger than 5 KB.');
      }
      const chunks: Uint8Array[] = [];
      let size = 0;
      for await (const chunk of res.body ?? []) {
        size += chunk.byteLength;
        if (size > METADATA_DOCUMENT_MAX_BYTES) throw new OAuthError('invalid_client', 'The client metadata document is larger than 5 KB.');
        chunks.push(chunk);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (err instanceof OAuthError) throw err;
      throw new OAuthError('invalid_client', 'The client metadata document could not be fetched from a public address.');
    }
    return parseMetadataDocument(clientId, text);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** Validates the text of a Client ID Metadata Document fetched from `clientId`. */
export function parseMetadataDocument(clientId: string, text: string): ClientInfo {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_client', 'The client metadata document is not JSON.');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new OAuthError('invalid_client', 'The client metadata document is not a JSON object.');
  const d = doc as Record<string, unknown>;
  if (d.client_id !== clientId) throw new OAuthError('invalid_client', 'The client metadata document names another client_id.');
  if ((d.token_endpoint_auth_method ?? 'none') !== 'none') throw new OAuthError('invalid_client', 'Only public clients (token_endpoint_auth_method "none") may use a metadata document here.');
  if (d.client_secret !== undefined) throw new OAuthError('invalid_client', 'A client metadata document must not carry a client_secret.');
  const parsed = parseRegistration({ ...d, token_endpoint_auth_method: 'none' });
  return { client_id: clientId, client_name: parsed.client_name, redirect_uris: parsed.redirect_uris, token_endpoint_auth_method: 'none', kind: 'metadata_document' };
}
