import { ASSERTION_TTL_SECONDS, signAssertion, type Principal } from '@cuadra/shared';

/**
 * Signs gateway assertions, reusing one per principal while it has more than half its
 * life left (an ES256 signature per call would be most of the gateway's own cost).
 */
export class AssertionSigner {
  readonly #privateKey: string;
  readonly #cache = new Map<string, { token: string; reuseUntil: number }>();

  constructor(privateKey: string) {
    this.#privateKey = privateKey;
  }

  for(principal: Principal): string {
    const key = JSON.stringify(principal);
    const now = Date.now();
    const hit = this.#cache.get(key);
    if (hit && hit.reuseUntil > now) return hit.token;
    const token = signAssertion(principal, this.#privateKey);
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(key, { token, reuseUntil: now + (ASSERTION_TTL_SECONDS * 1000) / 2 });
    return token;
  }
}
