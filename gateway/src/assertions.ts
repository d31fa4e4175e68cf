import { ASSERTION_TTL_SECONDS, signAssertion, type Principal } from '@cuadra/shared';

/**
 * Signs gateway assertions, reusing one per principal while it has more than half its
 * life left (an ES256 signature per call would be most of the gateway's own cost).
 */
export class AssertionSigner {
  readonly #privateKey: string;
  readonly #cache = new Map<string, { token: string; reuseUntil: number }>();
  /** The same, by a frozen principal object (the identity store's, reused call after call): no JSON key per call. */
  readonly #byFrozen = new WeakMap<Principal, { token: string; reuseUntil: number }>();

  constructor(privateKey: string) {
    this.#privateKey = privateKey;
  }

  for(principal: Principal): string {
    const now = Date.now();
    // A frozen principal cannot have changed since it was signed: its own entry is looked up first.
    const frozen = Object.isFrozen(principal);
    const known = frozen ? this.#byFrozen.get(principal) : undefined;
    if (known && known.reuseUntil > now) return known.token;
    const key = JSON.stringify(principal);
    let hit = this.#cache.get(key);
    if (!hit || hit.reuseUntil <= now) {
      hit = { token: signAssertion(principal, this.#privateKey), reuseUntil: now + (ASSERTION_TTL_SECONDS * 1000) / 2 };
      if (this.#cache.size > 10_000) this.#cache.clear();
      this.#cache.set(key, hit);
    }
    if (frozen) this.#byFrozen.set(principal, hit);
    return hit.token;
  }
}
