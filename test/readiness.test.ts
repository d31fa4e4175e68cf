// Readiness that tells the truth (issue 33, ready14): `/healthz` says ok only when every connection
// a call may use is back. A subgraph holds three — its own database, the governance database
// (ledger, idempotency, policies) and Redis — and the gateway its database, the governance
// database and Redis; each client finds its server again on its own schedule after an outage. Here
// the governance database and Redis are reached through a TCP relay this test can cut and restore
// (the real servers behind it keep running), so one connection is down while the others answer:
// readiness must say so, and say ok again once that connection is back.
import { connectDatabase, createLogger, failFastWhileRedisDown, Governance, type Principal } from '@cuadra/shared';
import { testServiceKeys, testSigningKeys } from '@cuadra/shared/testing';
import express from 'express';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerEvents } from '../gateway/src/events.ts';
import { health } from '../gateway/src/health.ts';
import type { InvokePipeline } from '../gateway/src/pipeline.ts';
import { createServer } from '../subgraphs/crm/src/server.ts';

/** A TCP relay to `target` on a port of its own: `cut()` closes every connection and stops listening; `restore()` listens again on the same port. */
class Relay {
  port = 0;
  #server: net.Server | undefined;
  readonly #sockets = new Set<net.Socket>();
  readonly target: { host: string; port: number };
  constructor(target: { host: string; port: number }) {
    this.target = target;
  }

  async restore(): Promise<void> {
    const server = net.createServer((inbound) => {
      const outbound = net.connect(this.target.port, this.target.host);
      for (const s of [inbound, outbound]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => undefined);
      }
      inbound.pipe(outbound);
      outbound.pipe(inbound);
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.#server = server;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  }
}

function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

const mongoUrl = process.env.MONGO_URL!;
const redisUrl = process.env.REDIS_URL!;
const suffix = randomBytes(4).toString('hex');
const mongoRelay = new Relay(hostPort(mongoUrl));
const redisRelay = new Relay(hostPort(redisUrl));
let db: Connection;
let governanceDb: Connection;
let redis: Redis;
let server: Awaited<ReturnType<typeof createServer>>;
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  await mongoRelay.restore();
  await redisRelay.restore();
  db = await connectDatabase(mongoUrl, `test_readiness_${suffix}`);
  governanceDb = await connectDatabase(`mongodb://127.0.0.1:${mongoRelay.port}`, `test_readiness_${suffix}_governance`);
  redis = failFastWhileRedisDown(new Redis(`redis://127.0.0.1:${redisRelay.port}`, { maxRetriesPerRequest: 2 }));
  redis.on('error', () => undefined);
  const governance = new Governance(governanceDb, redis);
  await governance.init();
  server = await createServer({ db, log: createLogger('crm', 'silent'), assertionPublicKey: testSigningKeys().publicKey, governance, runApprovals: false, peers: { ...testServiceKeys(), urls: {} } });
  ({ url, close } = await server.listen(0));
}, 60_000);
afterAll(async () => {
  await close?.();
  await server?.stop();
  redis?.disconnect();
  await db?.dropDatabase().catch(() => undefined);
  await governanceDb?.dropDatabase().catch(() => undefined);
  await Promise.all([db?.close(), governanceDb?.close()]);
  await mongoRelay.cut();
  await redisRelay.cut();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function subgraphHealth(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/healthz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Asks until `ask` answers `status` (up to 15 s: the driver's heartbeat and ioredis's backoff); the last answer. */
async function until<T extends { status: number }>(ask: () => Promise<T>, status: number): Promise<T> {
  let last = await ask();
  for (const deadline = Date.now() + 15_000; last.status !== status && Date.now() < deadline; last = await ask()) await sleep(100);
  return last;
}

describe("a subgraph's /healthz", () => {
  it('answers 503 while its Redis connection is down (its own database answering), and 200 once it is back', async () => {
    expect(await subgraphHealth()).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok', redis: 'ok' } });
    await redisRelay.cut();
    const down = await until(subgraphHealth, 503);
    expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', database: 'ok', redis: 'unavailable' } });
    await redisRelay.restore();
    const back = await until(subgraphHealth, 200);
    expect(back).toMatchObject({ status: 200, body: { redis: 'ok' } });
    // Once ready, the connection it vouched for takes a command at once.
    expect(await redis.ping()).toBe('PONG');
  }, 60_000);

  it('answers 503 while the governance database is down (its own database answering), and 200 once it is back', async () => {
    await mongoRelay.cut();
    const down = await until(subgraphHealth, 503);
    expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', database: 'unavailable' } });
    await mongoRelay.restore();
    const back = await until(subgraphHealth, 200);
    expect(back).toMatchObject({ status: 200, body: { database: 'ok' } });
    // Once ready, the connection it vouched for serves an operation at once (no known-down refusal).
    expect(await governanceDb.db!.collection('health').findOne({})).not.toBeUndefined();
  }, 60_000);
});

describe("the gateway's /healthz", () => {
  it('answers 503 while the governance database is down (the gateway database and Redis answering), and 200 once it is back', async () => {
    const gatewayRedis = new Redis(redisUrl);
    try {
      const ask = () => health({ urls: {}, db, governanceDb, redis: gatewayRedis });
      expect(await ask()).toMatchObject({ status: 200 });
      await mongoRelay.cut();
      expect(await until(ask, 503)).toMatchObject({ status: 503, body: { database: 'unavailable', redis: 'ok' } });
      await mongoRelay.restore();
      expect(await until(ask, 200)).toMatchObject({ status: 200, body: { database: 'ok' } });
    } finally {
      gatewayRedis.disconnect();
    }
  }, 60_000);

  it('answers 503 while the event source (its own Redis subscriber) is not connected once a stream was asked for, and 200 once it is back', async () => {
    const gatewayRedis = new Redis(redisUrl);
    const relayed = failFastWhileRedisDown(new Redis(`redis://127.0.0.1:${redisRelay.port}`, { maxRetriesPerRequest: 2 }));
    relayed.on('error', () => undefined);
    const log = createLogger('readiness-test', 'silent');
    const events = new LedgerEvents(relayed, log);
    const app = express();
    const principal = { workspace: `ws_readiness_${suffix}`, role: 'owner', actor: { type: 'api_key', id: 'k' }, credential_id: 'k', scopes: null, patterns: null } as unknown as Principal;
    app.get('/v1/events', events.handler({ authenticate: async () => principal } as unknown as InvokePipeline, { publicUrl: 'http://127.0.0.1', log }));
    const http = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const ask = () => health({ urls: {}, db, governanceDb, redis: gatewayRedis, sources: () => events.ready });
      // A stream asked for: the subscriber is the event source from now on.
      const controller = new AbortController();
      const stream = await fetch(`http://127.0.0.1:${(http.address() as net.AddressInfo).port}/v1/events`, { signal: controller.signal });
      expect(stream.status).toBe(200);
      controller.abort();
      expect(await ask()).toMatchObject({ status: 200 });
      await redisRelay.cut();
      expect(await until(ask, 503)).toMatchObject({ status: 503, body: { redis: 'unavailable' } });
      await redisRelay.restore();
      expect(await until(ask, 200)).toMatchObject({ status: 200, body: { redis: 'ok' } });
    } finally {
      await events.close();
      relayed.disconnect();
      gatewayRedis.disconnect();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  }, 60_000);
});
