import { createHash, createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_SHAPE, AssertionVerifier, generateSigningKeyPair, hashApiKey, newApiKey, sameDigest, signAssertion,
} from '../src/credentials.ts';
import { CuadraError } from '../src/errors.ts';
import type { Principal } from '../src/principal.ts';

const principal: Principal = {
  workspace: 'ws_abc',
  role: 'accountant',
  actor: { type: 'member', id: 'usr_1' },
  credential_id: 'tok_1',
  scopes: ['tools:read'],
  patterns: ['invoices.%'],
};

const keys = generateSigningKeyPair();
const otherKeys = generateSigningKeyPair();

const claims = (p: Principal) => ({ ws: p.workspace, role: p.role, act: p.actor, cid: p.credential_id, scp: p.scopes, pat: p.patterns });

/** The error thrown by `fn`, which must be a CuadraError `unauthenticated`. */
function expectUnauthenticated(fn: () => unknown): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(CuadraError);
  expect((thrown as CuadraError).code).toBe('unauthenticated');
  expect((thrown as CuadraError).status).toBe(401);
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('newApiKey', () => {
  it('is nk_ followed by at least 32 base62 characters', () => {
    const key = newApiKey();
    expect(key).toMatch(/^nk_[0-9A-Za-z]{32,}$/);
    expect(API_KEY_SHAPE.test(key)).toBe(true);
  });

  it('never repeats over 1,000 keys, and uses the whole base62 alphabet', () => {
    const keysMade = Array.from({ length: 1000 }, () => newApiKey());
    expect(new Set(keysMade).size).toBe(1000);
    for (const k of keysMade) expect(k).toMatch(/^nk_[0-9A-Za-z]{32,}$/);
    const used = new Set(keysMade.join('').replace(/nk_/g, ''));
    expect(used.size).toBe(62);
  });

  it('API_KEY_SHAPE refuses junk before any lookup', () => {
    for (const junk of ['nk_short', 'sk_' + 'a'.repeat(40), 'nk_' + 'a'.repeat(31), 'nk_' + 'a'.repeat(39) + '-', ' nk_' + 'a'.repeat(40)]) {
      expect(API_KEY_SHAPE.test(junk), junk).toBe(false);
    }
  });
});

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key', () => {
    const key = newApiKey();
    const digest = hashApiKey(key);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).toBe(createHash('sha256').update(key).digest('hex'));
    // FIPS 180-2 test vector.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('never contains the key, nor its random part', () => {
    const key = newApiKey();
    const digest = hashApiKey(key);
    expect(digest).not.toContain(key);
    expect(digest).not.toContain(key.slice(3));
    expect(digest).not.toContain(key.slice(3, 11).toLowerCase());
  });

  it('differs for different keys and is stable for one key', () => {
    const a = newApiKey();
    expect(hashApiKey(a)).toBe(hashApiKey(a));
    expect(hashApiKey(a)).not.toBe(hashApiKey(newApiKey()));
  });
});

describe('sameDigest', () => {
  const a = hashApiKey('nk_one');
  const b = hashApiKey('nk_two');

  it('is true for equal digests', () => {
    expect(sameDigest(a, a)).toBe(true);
    expect(sameDigest(a, hashApiKey('nk_one'))).toBe(true);
  });

  it('is false for different digests', () => {
    expect(sameDigest(a, b)).toBe(false);
    // One differing final character.
    const last = a.at(-1) === '0' ? '1' : '0';
    expect(sameDigest(a, a.slice(0, -1) + last)).toBe(false);
  });

  it('is false for different lengths and for empty input (never throws)', () => {
    expect(sameDigest(a, a.slice(0, 32))).toBe(false);
    expect(sameDigest('', '')).toBe(false);
    expect(sameDigest(a, '')).toBe(false);
    expect(sameDigest('zz', 'zz')).toBe(false);
  });
});

describe('AssertionVerifier', () => {
  it('accepts a token from signAssertion with the matching key, and returns the principal', () => {
    const verifier = new AssertionVerifier(keys.publicKey);
    expect(verifier.verify(signAssertion(principal, keys.privateKey))).toEqual(principal);
  });

  it('keeps null scopes and patterns (API keys)', () => {
    const p: Principal = { ...principal, scopes: null, patterns: null, actor: { type: 'api_key', id: 'key_1' } };
    expect(new AssertionVerifier(keys.publicKey).verify(signAssertion(p, keys.privateKey))).toEqual(p);
  });

  it('refuses a missing token', () => {
    const verifier = new AssertionVerifier(keys.publicKey);
    expectUnauthenticated(() => verifier.verify(undefined));
    expectUnauthenticated(() => verifier.verify(''));
  });

  it('refuses a token signed by another key pair', () => {
    const verifier = new AssertionVerifier(keys.publicKey);
    expectUnauthenticated(() => verifier.verify(signAssertion(principal, otherKeys.privateKey)));
  });

  it('refuses an expired token', () => {
    const past = Math.floor(Date.now() / 1000) - 120;
    const token = jwt.sign({ ...claims(principal), iat: past - 60, exp: past }, keys.privateKey, {
      algorithm: 'ES256', issuer: 'cuadra-gateway', audience: 'cuadra-subgraphs', subject: principal.credential_id,
    });
    // The same claims, unexpired, would be accepted: the expiry is what refuses it.
    const fresh = jwt.sign(claims(principal), keys.privateKey, { algorithm: 'ES256', issuer: 'cuadra-gateway', audience: 'cuadra-subgraphs', expiresIn: 60 });
    const verifier = new AssertionVerifier(keys.publicKey);
    expect(verifier.verify(fresh)).toEqual(principal);
    expectUnauthenticated(() => verifier.verify(token));
  });

  it('refuses a token with alg none', () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { ...claims(principal), iss: 'cuadra-gateway', aud: 'cuadra-subgraphs', iat: now, exp: now + 60 };
    const verifier = new AssertionVerifier(keys.publicKey);
    expectUnauthenticated(() => verifier.verify(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`));
    expectUnauthenticated(() => verifier.verify(jwt.sign(payload, '', { algorithm: 'none' })));
  });

  it('refuses an HS256 token keyed with the public key (algorithm confusion)', () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { ...claims(principal), iss: 'cuadra-gateway', aud: 'cuadra-subgraphs', iat: now, exp: now + 60 };
    const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(payload)}`;
    const sig = createHmac('sha256', keys.publicKey).update(head).digest('base64url');
    expectUnauthenticated(() => new AssertionVerifier(keys.publicKey).verify(`${head}.${sig}`));
  });

  it('refuses a token with a wrong audience', () => {
    const token = jwt.sign(claims(principal), keys.privateKey, { algorithm: 'ES256', issuer: 'cuadra-gateway', audience: 'someone-else', expiresIn: 60 });
    expectUnauthenticated(() => new AssertionVerifier(keys.publicKey).verify(token));
  });

  it('refuses a token with a wrong issuer', () => {
    const token = jwt.sign(claims(principal), keys.privateKey, { algorithm: 'ES256', issuer: 'not-the-gateway', audience: 'cuadra-subgraphs', expiresIn: 60 });
    expectUnauthenticated(() => new AssertionVerifier(keys.publicKey).verify(token));
  });

  it('refuses a token with a tampered payload (another workspace)', () => {
    const token = signAssertion(principal, keys.privateKey);
    const [head, body, sig] = token.split('.');
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const tampered = `${head}.${b64url({ ...decoded, ws: 'ws_victim', role: 'owner' })}.${sig}`;
    const verifier = new AssertionVerifier(keys.publicKey);
    expectUnauthenticated(() => verifier.verify(tampered));
    // The untampered token still passes: only the tampering is refused.
    expect(verifier.verify(token).workspace).toBe('ws_abc');
  });

  it('refuses a tampered payload even after the genuine token was verified (cache is keyed by the whole token)', () => {
    const verifier = new AssertionVerifier(keys.publicKey);
    const token = signAssertion(principal, keys.privateKey);
    verifier.verify(token);
    const [head, body, sig] = token.split('.');
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    expectUnauthenticated(() => verifier.verify(`${head}.${b64url({ ...decoded, role: 'owner' })}.${sig}`));
  });

  it('refuses an ES256 token signed by hand with a foreign key in the right shape', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const now = Math.floor(Date.now() / 1000);
    const head = `${b64url({ alg: 'ES256', typ: 'JWT' })}.${b64url({ ...claims(principal), iss: 'cuadra-gateway', aud: 'cuadra-subgraphs', exp: now + 60 })}`;
    const sig = createSign('SHA256').update(head).sign({ key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    expectUnauthenticated(() => new AssertionVerifier(keys.publicKey).verify(`${head}.${sig}`));
  });

  it('refuses garbage', () => {
    const verifier = new AssertionVerifier(keys.publicKey);
    for (const junk of ['abc', 'a.b.c', 'Bearer x', '...']) expectUnauthenticated(() => verifier.verify(junk));
  });
});
