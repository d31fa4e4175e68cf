import { generateKeyPairSync, hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { CuadraError } from './errors.ts';
import type { Principal } from './principal.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 string from the OS CSPRNG (rejection-free: `randomInt` is unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** A new API key: `nk_` + 40 base62 characters (≈238 bits). Shown once, stored only as a hash. */
export function newApiKey(): string {
  return `nk_${randomBase62(40)}`;
}

/** Shape check done before any lookup, so junk never reaches the database. */
export const API_KEY_SHAPE = /^nk_[0-9A-Za-z]{32,128}$/;

/**
 * Hash of an API key as stored at rest. Keys are long random secrets, so a fast hash
 * is the right tool (a memory-hard hash is for low-entropy passwords).
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Constant-time equality of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && ab.length > 0 && timingSafeEqual(ab, bb);
}

/** Prefixed random id (`ws_…`, `key_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/** An ES256 key pair in PEM, for gateway assertions. */
export function generateSigningKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

const ASSERTION_ISSUER = 'cuadra-gateway';
const ASSERTION_AUDIENCE = 'cuadra-subgraphs';
/** Header that carries the gateway's assertion to a subgraph. */
export const ASSERTION_HEADER = 'cuadra-assertion';
/** Assertions are short-lived: a leaked one is useless within a minute. */
export const ASSERTION_TTL_SECONDS = 60;

/**
 * Signs the gateway's statement of who is calling, for subgraphs to check (ES256: only
 * the gateway holds the private key, so a subgraph cannot mint assertions for another).
 */
export function signAssertion(principal: Principal, privateKey: string): string {
  return jwt.sign(
    { ws: principal.workspace, role: principal.role, act: principal.actor, cid: principal.credential_id, scp: principal.scopes, pat: principal.patterns, ...(principal.role_patterns ? { rp: principal.role_patterns } : {}), ...(principal.person ? { per: principal.person } : {}), ...(principal.country ? { cc: principal.country } : {}), ...(principal.run ? { run: principal.run } : {}) },
    privateKey,
    { algorithm: 'ES256', issuer: ASSERTION_ISSUER, audience: ASSERTION_AUDIENCE, expiresIn: ASSERTION_TTL_SECONDS, subject: principal.credential_id },
  );
}

interface AssertionClaims {
  ws: string; role: string; act: Principal['actor']; cid: string; scp: string[] | null; pat: string[] | null; rp?: string[]; per?: string; cc?: string; run?: string; exp: number;
}

/** Verifies assertions with a bounded cache of already-verified tokens (signature checks are the costly part). */
export class AssertionVerifier {
  readonly #publicKey: string;
  readonly #cache = new Map<string, { principal: Principal; exp: number }>();

  constructor(publicKey: string) {
    this.#publicKey = publicKey;
  }

  /** The principal of a token verified before and not expired since, without any decoding; else undefined. */
  cached(token: string | undefined): Principal | undefined {
    if (!token) return undefined;
    const hit = this.#cache.get(token);
    return hit && hit.exp > Date.now() / 1000 ? hit.principal : undefined;
  }

  /** The principal the token asserts, or `unauthenticated`. */
  verify(token: string | undefined): Principal {
    if (!token) throw new CuadraError('unauthenticated', 'This service only answers calls that come through the Cuadra gateway.');
    const nowSeconds = Date.now() / 1000;
    const hit = this.#cache.get(token);
    if (hit && hit.exp > nowSeconds) return hit.principal;
    let claims: AssertionClaims;
    try {
      claims = jwt.verify(token, this.#publicKey, { algorithms: ['ES256'], issuer: ASSERTION_ISSUER, audience: ASSERTION_AUDIENCE }) as AssertionClaims;
    } catch {
      throw new CuadraError('unauthenticated', 'The gateway assertion is missing, expired or not signed by the gateway.');
    }
    const principal: Principal = { workspace: claims.ws, role: claims.role, actor: claims.act, credential_id: claims.cid, scopes: claims.scp, patterns: claims.pat, ...(Array.isArray(claims.rp) ? { role_patterns: claims.rp } : {}), ...(typeof claims.per === 'string' ? { person: claims.per } : {}), ...(typeof claims.cc === 'string' ? { country: claims.cc } : {}), ...(typeof claims.run === 'string' ? { run: claims.run } : {}) };
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(token, { principal, exp: claims.exp });
    return principal;
  }
}
