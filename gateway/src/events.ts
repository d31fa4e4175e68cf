import type { Logger } from '@cuadra/shared';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { sendRefusal } from './http.ts';
import { InvokePipeline } from './pipeline.ts';

/** How often an open stream's credential is checked again (`EVENTS_RECHECK_MS`, default 5 s). */
const STREAM_RECHECK_MS = Number(process.env.EVENTS_RECHECK_MS) > 0 ? Number(process.env.EVENTS_RECHECK_MS) : 5_000;

/**
 * `GET /v1/events`: the caller's workspace ledger as server-sent events (CONTRACT.md §6), each
 * `{module, tool, outcome, at}`. Every service publishes its ledger appends on Redis, so a
 * client connected to any gateway instance sees actions wherever they ran. One Redis
 * subscriber per gateway, fanned out to the connected clients of each workspace.
 */
export class LedgerEvents {
  readonly #subscriber: Redis;
  readonly #clients = new Map<string, Set<Response>>();
  readonly #log: Logger;
  #ready: Promise<unknown> | undefined;

  constructor(redis: Redis, log: Logger) {
    this.#subscriber = redis.duplicate();
    this.#log = log;
    this.#subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
      const workspace = channel.slice('cuadra:ledger:'.length);
      for (const res of this.#clients.get(workspace) ?? []) res.write(`event: ledger\ndata: ${message}\n\n`);
    });
    this.#subscriber.on('error', (err) => this.#log.warn({ err: err.message }, 'events subscriber'));
  }

  #subscribe(): Promise<unknown> {
    this.#ready ??= this.#subscriber.psubscribe('cuadra:ledger:*');
    return this.#ready;
  }

  /** The express handler. */
  handler(pipeline: InvokePipeline, refusalCtx: { publicUrl: string; log: Logger }) {
    return async (req: Request, res: Response) => {
      let workspace: string;
      const authorization = req.header('authorization');
      try {
        const principal = await pipeline.authenticate(authorization);
        InvokePipeline.checkTenant(principal, req.header('x-tenant-id'));
        workspace = principal.workspace;
        await this.#subscribe();
      } catch (err) {
        return sendRefusal(res, err, refusalCtx);
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
      res.write(': connected\n\n');
      const set = this.#clients.get(workspace) ?? new Set<Response>();
      set.add(res);
      this.#clients.set(workspace, set);
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 25_000);
      // A stream lives only as long as its credential: checked again every few seconds, so a
      // revoked or expired key or token stops receiving the workspace's events within seconds.
      const recheck = setInterval(() => {
        pipeline.authenticate(authorization).then(
          (p) => { if (p.workspace !== workspace) res.end(); },
          (err: { code?: string }) => {
            if (err?.code === 'unavailable') return; // a store outage is not a revocation; check again next time
            res.write('event: end\ndata: {"reason":"credential revoked or expired"}\n\n');
            res.end();
          },
        );
      }, STREAM_RECHECK_MS);
      req.on('close', () => {
        clearInterval(heartbeat);
        clearInterval(recheck);
        set.delete(res);
        if (set.size === 0) this.#clients.delete(workspace);
      });
    };
  }

  async close(): Promise<void> {
    for (const set of this.#clients.values()) for (const res of set) res.end();
    this.#clients.clear();
    this.#subscriber.disconnect();
  }
}
