import { CuadraError, type Logger, type Principal } from '@cuadra/shared';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { sendRefusal } from './http.ts';
import { parseRevocation, REVOCATIONS_CHANNEL } from './identity/revocations.ts';
import { InvokePipeline } from './pipeline.ts';

/** How often an open stream's credential is checked again (`EVENTS_RECHECK_MS`, default 5 s): the backstop for what publishes no revocation (an API key reaching its expiry). */
const STREAM_RECHECK_MS = Number(process.env.EVENTS_RECHECK_MS) > 0 ? Number(process.env.EVENTS_RECHECK_MS) : 5_000;

/** How long a new stream waits for the event source to be connected before it is refused `unavailable`. */
const SOURCE_WAIT_MS = 1_000;

const ENDED_BY_REVOCATION = 'credential revoked or expired';

/** How long a heard revocation is remembered, for a stream whose authentication was under way when it came. */
const RECENT_REVOCATION_MS = 30_000;

/** One open `/v1/events` stream. */
interface Stream {
  res: Response;
  workspace: string;
  /** The revocations that end it: its API key, or its access token and the grant that issued it. */
  revokedBy: Set<string>;
  ended: boolean;
  timers: NodeJS.Timeout[];
}

/** The `jti` and `exp` of an access token whose signature the pipeline has already checked. */
function accessTokenClaims(authorization: string | undefined): { jti?: string; exp?: number } {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti?: unknown; exp?: unknown };
    return { jti: typeof payload.jti === 'string' ? payload.jti : undefined, exp: typeof payload.exp === 'number' ? payload.exp : undefined };
  } catch {
    return {};
  }
}

/** What revokes a principal's stream: `key:<id>` for an API key; `grant:<id>` and `jti:<jti>` for an access token. */
function revocationsOf(principal: Principal, authorization: string | undefined): { revokedBy: Set<string>; expiresAt?: number } {
  if (principal.actor.type === 'api_key' || principal.actor.type === 'agent') return { revokedBy: new Set([`key:${principal.credential_id}`]) };
  const { jti, exp } = accessTokenClaims(authorization);
  return { revokedBy: new Set([`grant:${principal.credential_id}`, ...(jti ? [`jti:${jti}`] : [])]), expiresAt: exp ? exp * 1000 : undefined };
}

/**
 * `GET /v1/events`: the caller's workspace ledger as server-sent events (CONTRACT.md §6), each
 * `{module, tool, outcome, at}`. Every service publishes its ledger appends on Redis, so a
 * client connected to any gateway instance sees actions wherever they ran. One Redis
 * subscriber per gateway, fanned out to the connected clients of each workspace.
 *
 * A stream lives only as long as its credential and its source: a revocation is published on
 * the same subscriber ({@link REVOCATIONS_CHANNEL}) and ends the credential's streams as it
 * arrives — Redis delivers it before anything published after it, so no event reaches a revoked
 * stream; an access token's stream ends when the token expires; and when the subscriber loses
 * Redis every stream ends (a client reconnects and is authenticated again, or refused
 * `unavailable` while Redis is down), so no stream outlives a revocation it could not hear.
 */
export class LedgerEvents {
  readonly #subscriber: Redis;
  readonly #streams = new Map<string, Set<Stream>>();
  readonly #log: Logger;
  #ready: Promise<unknown> | undefined;
  /** Whether a subscription was ever asked for: after that, a source not ready is refused at once. */
  #asked = false;
  /** Revocations heard lately, with when: a stream authenticated just before one arrived is refused, not opened. */
  readonly #recent = new Map<string, number>();

  constructor(redis: Redis, log: Logger) {
    this.#subscriber = redis.duplicate();
    this.#log = log;
    this.#subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
      const workspace = channel.slice('cuadra:ledger:'.length);
      for (const stream of this.#streams.get(workspace) ?? []) if (!stream.ended) stream.res.write(`event: ledger\ndata: ${message}\n\n`);
    });
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel !== REVOCATIONS_CHANNEL) return;
      const revoked = parseRevocation(message);
      if (revoked.length === 0) return;
      const now = Date.now();
      for (const [id, at] of this.#recent) if (now - at > RECENT_REVOCATION_MS) this.#recent.delete(id);
      for (const r of revoked) this.#recent.set(r, now);
      for (const set of this.#streams.values()) {
        for (const stream of set) if (revoked.some((r) => stream.revokedBy.has(r))) this.#end(stream, ENDED_BY_REVOCATION);
      }
    });
    // Messages published while the connection is down are lost, revocations among them: every stream ends.
    this.#subscriber.on('close', () => this.#endAll('the event source was interrupted; reconnect'));
    this.#subscriber.on('error', (err) => this.#log.warn({ err: err.message }, 'events subscriber'));
  }

  /**
   * Subscribes once; ioredis subscribes again by itself after a reconnect. A subscription that failed
   * (asked for while Redis was down, given up by the reconnect attempts) is forgotten, so the next
   * stream asks again — kept, it would refuse every stream until the gateway restarted.
   */
  #subscribe(): Promise<unknown> {
    if (this.#ready) return this.#ready;
    this.#asked = true;
    const ready = Promise.all([this.#subscriber.psubscribe('cuadra:ledger:*'), this.#subscriber.subscribe(REVOCATIONS_CHANNEL)]);
    this.#ready = ready;
    ready.catch(() => {
      if (this.#ready === ready) this.#ready = undefined;
    });
    return ready;
  }

  /** Resolves once the subscriber is connected and subscribed; `unavailable` when it is not within {@link SOURCE_WAIT_MS}. */
  async #source(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const gone = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new CuadraError('unavailable', 'The event source (Redis) cannot be reached right now; reconnect shortly.')), SOURCE_WAIT_MS);
    });
    try {
      const subscribed = this.#subscribe();
      subscribed.catch(() => undefined);
      await Promise.race([subscribed, gone]);
      if (this.#subscriber.status !== 'ready') {
        await Promise.race([new Promise((resolve) => this.#subscriber.once('ready', resolve)), gone]);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether streams can open now: the subscriber connected, or never asked for yet (readiness, health.ts). */
  get ready(): boolean {
    return !this.#asked || this.#subscriber.status === 'ready';
  }

  #end(stream: Stream, reason: string): void {
    if (stream.ended) return;
    stream.ended = true;
    stream.res.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    stream.res.end();
  }

  #endAll(reason: string): void {
    for (const set of this.#streams.values()) for (const stream of set) this.#end(stream, reason);
  }

  /** The express handler. */
  handler(pipeline: InvokePipeline, refusalCtx: { publicUrl: string; log: Logger }) {
    return async (req: Request, res: Response) => {
      const authorization = req.header('authorization');
      const asked = Date.now();
      let principal: Principal;
      try {
        // The source first: without Redis there is nothing to stream, and the answer is 503 at once.
        if (this.#subscriber.status !== 'ready' && this.#asked) throw new CuadraError('unavailable', 'The event source (Redis) cannot be reached right now; reconnect shortly.');
        principal = await pipeline.authenticate(authorization);
        InvokePipeline.checkTenant(principal, req.header('x-tenant-id'));
        await this.#source();
      } catch (err) {
        return sendRefusal(res, err, refusalCtx);
      }
      const { workspace } = principal;
      const { revokedBy, expiresAt } = revocationsOf(principal, authorization);
      // A revocation heard while this request was being authenticated: the credential is refused now.
      if ([...revokedBy].some((r) => (this.#recent.get(r) ?? -Infinity) >= asked)) {
        return sendRefusal(res, new CuadraError('unauthenticated', 'This credential has been revoked.'), refusalCtx);
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
      res.write(': connected\n\n');
      const stream: Stream = { res, workspace, revokedBy, ended: false, timers: [] };
      const set = this.#streams.get(workspace) ?? new Set<Stream>();
      set.add(stream);
      this.#streams.set(workspace, set);
      stream.timers.push(setInterval(() => res.write(': keep-alive\n\n'), 25_000));
      if (expiresAt !== undefined) stream.timers.push(setTimeout(() => this.#end(stream, ENDED_BY_REVOCATION), Math.max(0, expiresAt - Date.now())));
      // The backstop: checked again every few seconds (an API key's expiry publishes nothing).
      stream.timers.push(setInterval(() => {
        pipeline.authenticate(authorization).then(
          (p) => { if (p.workspace !== workspace) this.#end(stream, ENDED_BY_REVOCATION); },
          (err: { code?: string }) => {
            if (err?.code === 'unavailable') return; // a store outage is not a revocation (and a Redis outage ends the stream anyway)
            this.#end(stream, ENDED_BY_REVOCATION);
          },
        );
      }, STREAM_RECHECK_MS));
      req.on('close', () => {
        stream.ended = true;
        for (const timer of stream.timers) clearInterval(timer);
        set.delete(stream);
        if (set.size === 0) this.#streams.delete(workspace);
      });
    };
  }

  async close(): Promise<void> {
    this.#endAll('the server is shutting down');
    this.#streams.clear();
    this.#subscriber.disconnect();
  }
}
