import { createHash, hkdfSync, timingSafeEqual, type Hash } from 'node:crypto';

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
  /** How many assertions' keyed prefixes are kept now (at most {@link VOUCH_PREFIXES_MAX}). */
  keptPrefixes(): number;
}

/** The vouching key of `CUADRA_SEAL_KEY` (derived: it opens no box and makes no secret digest), or null without one. */
export function checkedCallsFromEnv(env: NodeJS.ProcessEnv = process.env): CheckedCalls | null {
  const raw = env.CUADRA_SEAL_KEY;
  if (!raw) return null;
  return checkedCalls(Buffer.from(hkdfSync('sha256', Buffer.from(raw, 'base64'), Buffer.alloc(0), 'cuadra/checked-call/v1', 32)));
}

/**
 * The most assertions whose keyed prefix {@link checkedCalls} keeps. An assertion is per principal
 * and reused for half its life (gateway/src/assertions.ts), so a gateway sees about as many as its
 * callers active in 30 s; past this the kept prefixes are dropped and made again as calls come.
 */
export const VOUCH_PREFIXES_MAX = 1024;

/**
 * {@link CheckedCalls} over a 32-byte key: HMAC-SHA-256 (RFC 2104) over `assertion ‖ "\n" ‖ body`,
 * the same bytes `createHmac` gives. Computed by hand from SHA-256 states (issue 33, the hop): the
 * inner hash after `(key ⊕ ipad) ‖ assertion ‖ "\n"` is kept per assertion — the same assertion
 * comes with every call of a principal for 30 s, and it is most of the MAC's input (≈ 600 of ≈ 700
 * bytes) — and each call copies it and hashes only its body, then the outer hash from its kept
 * `key ⊕ opad` state. A kept state holds no more than the key itself does (it is made from it and
 * from the assertion, which travels readable); its entry is found by the assertion's exact text,
 * so a call under another assertion (another workspace, another principal) never meets it. The
 * owner checks a vouch only after the assertion's signature (shared/src/subgraph.ts), so only the
 * gateway's own assertions are kept there.
 */
export function checkedCalls(key: Buffer): CheckedCalls {
  if (key.length > 64) throw new Error('checkedCalls: a key of at most 64 bytes');
  const block = Buffer.alloc(64);
  key.copy(block);
  const ipad = Buffer.alloc(64);
  const opad = Buffer.alloc(64);
  for (let i = 0; i < 64; i++) {
    ipad[i] = block[i] ^ 0x36;
    opad[i] = block[i] ^ 0x5c;
  }
  const outer = createHash('sha256').update(opad);
  const inner = createHash('sha256').update(ipad);
  const prefixes = new Map<string, Hash>();
  const mac = (assertion: string, body: string | Buffer): Buffer => {
    let prefix = prefixes.get(assertion);
    if (prefix === undefined) {
      if (prefixes.size >= VOUCH_PREFIXES_MAX) prefixes.clear();
      prefix = inner.copy().update(assertion).update('\n');
      prefixes.set(assertion, prefix);
    }
    return outer.copy().update(prefix.copy().update(body).digest()).digest();
  };
  return {
    vouch: (assertion, body) => mac(assertion, body).toString('base64url'),
    vouched(given, assertion, body) {
      if (typeof given !== 'string' || given.length !== 43) return false;
      const expected = mac(assertion, body);
      const sent = Buffer.from(given, 'base64url');
      return sent.length === expected.length && timingSafeEqual(sent, expected);
    },
    keptPrefixes: () => prefixes.size,
  };
}
