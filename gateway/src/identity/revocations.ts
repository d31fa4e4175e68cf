import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The Redis channel every revocation is published on, so each gateway ends what the revoked
 * credential still holds open (its `/v1/events` streams) at once, not at its next check.
 */
export const REVOCATIONS_CHANNEL = 'cuadra:revocations';

/**
 * What a revocation names: an API key (`key:<id>`), an OAuth grant with every token it issued
 * (`grant:<id>`), or one access token (`jti:<jti>`).
 */
export type RevokedCredential = `key:${string}` | `grant:${string}` | `jti:${string}`;

/**
 * Publishes a revocation. Called after the revocation is stored (and cached), so a gateway that
 * acts on the message finds the credential refused too. Redis delivers a channel's messages to a
 * subscriber in the order it received them: an event published after this call reaches a stream
 * only after the stream has ended.
 */
export async function publishRevocation(redis: Redis, revoked: RevokedCredential[]): Promise<void> {
  await redis.publish(REVOCATIONS_CHANNEL, JSON.stringify({ revoked }));
}

/** The credentials a revocation message names; empty for anything that is not one. */
export function parseRevocation(message: string): string[] {
  try {
    const parsed = JSON.parse(message) as { revoked?: unknown };
    return Array.isArray(parsed.revoked) ? parsed.revoked.filter((r): r is string => typeof r === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * This gateway's ear on {@link REVOCATIONS_CHANNEL}, for what it keeps of a credential between
 * calls (the rate limiter's blocks): `live` is true only while a subscription confirmed by Redis
 * stands on the current connection — from the SUBSCRIBE's reply after (re)connecting until the
 * connection is lost. Messages published while it is not live may never arrive, so the moment it
 * stops being live `down` is called (drop everything kept), and `heard` for each revocation
 * received; `up` once it is live again.
 */
export class RevocationChannel {
  readonly #subscriber: Redis;
  /** The subscriber's name in Redis's CLIENT LIST: which gateway's ear it is. */
  readonly connectionName = `cuadra-revocations-${randomBytes(6).toString('hex')}`;
  #live = false;
  /** Moves each time the connection is lost: a subscription confirmed for an older connection does not make it live. */
  #connection = 0;

  constructor(redis: Redis, on: { heard: (revoked: string[]) => void; up: () => void; down: () => void }) {
    this.#subscriber = redis.duplicate({ connectionName: this.connectionName });
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel === REVOCATIONS_CHANNEL) on.heard(parseRevocation(message));
    });
    const lost = () => {
      this.#connection++;
      if (!this.#live) return;
      this.#live = false;
      on.down();
    };
    const subscribe = () => {
      const connection = this.#connection;
      this.#subscriber.subscribe(REVOCATIONS_CHANNEL).then(() => {
        if (connection !== this.#connection || this.#live || this.#subscriber.status !== 'ready') return;
        this.#live = true;
        on.up();
      }, () => undefined);
    };
    this.#subscriber.on('close', lost);
    this.#subscriber.on('end', lost);
    this.#subscriber.on('ready', subscribe);
    this.#subscriber.on('error', () => undefined);
  }

  /** Whether every revocation published now reaches this gateway. */
  get live(): boolean {
    return this.#live;
  }

  close(): void {
    this.#subscriber.disconnect();
  }
}
