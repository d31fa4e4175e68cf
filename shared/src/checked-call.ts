import { createHmac, createSecretKey, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The gateway's word, per forwarded call, that it has checked this very call — reach (scope, role,
 * key patterns), bounds and schema — against the same declarations the owner holds, so the owner
 * need not check it again (issue 32: checked once per call on the forwarded path).
 *
 * Why a MAC and not a claim in the assertion: the assertion is per principal and reused for half
 * its life, and it travels readable; a claim "checked" in it would let anyone holding it send
 * another tool or another input unchecked. The MAC covers the assertion and the exact body bytes,
 * under a key derived (HKDF) from `CUADRA_SEAL_KEY`, which never travels: a call whose body or
 * assertion differs from what the gateway checked, or that did not come through the gateway, is
 * checked in full by the owner. Without a seal key nothing is vouched for and the owner checks
 * every call (the safe default).
 */
export const CHECKED_CALL_HEADER = 'cuadra-checked';

/** Signs and verifies {@link CHECKED_CALL_HEADER}. */
export interface CheckedCalls {
  /** The header's value for a call the caller has checked: the assertion and the body bytes as sent. */
  vouch(assertion: string, body: string | Buffer): string;
  /** True when `mac` is this key's vouch for exactly this assertion and body (constant-time). */
  vouched(mac: string | undefined, assertion: string, body: Buffer): boolean;
}

/** The vouching key of `CUADRA_SEAL_KEY` (derived: it opens no box and makes no secret digest), or null without one. */
export function checkedCallsFromEnv(env: NodeJS.ProcessEnv = process.env): CheckedCalls | null {
  const raw = env.CUADRA_SEAL_KEY;
  if (!raw) return null;
  return checkedCalls(Buffer.from(hkdfSync('sha256', Buffer.from(raw, 'base64'), Buffer.alloc(0), 'cuadra/checked-call/v1', 32)));
}

/** {@link CheckedCalls} over a 32-byte key. */
export function checkedCalls(key: Buffer): CheckedCalls {
  // A KeyObject, made once: createHmac would make one from the Buffer on every call (≈10 µs on Node 24).
  const secret = createSecretKey(key);
  const mac = (assertion: string, body: string | Buffer) => createHmac('sha256', secret).update(assertion).update('\n').update(body).digest();
  return {
    vouch: (assertion, body) => mac(assertion, body).toString('base64url'),
    vouched(given, assertion, body) {
      if (typeof given !== 'string' || given.length !== 43) return false;
      const expected = mac(assertion, body);
      const sent = Buffer.from(given, 'base64url');
      return sent.length === expected.length && timingSafeEqual(sent, expected);
    },
  };
}
