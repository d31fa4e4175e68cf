// `/v1/events` after its first subscription failed: a gateway whose first stream was asked for while
// Redis was down (a gateway started during an outage, or its first client arriving in one) is
// refused `unavailable` then — and must stream again once Redis is back, not refuse every stream
// until it is restarted (the failed subscription must not be kept as the source's answer).
import { createLogger, failFastWhileRedisDown, type Principal } from '@cuadra/shared';
import express from 'express';
import { Redis } from 'ioredis';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startRedis, type RunningServer } from '../../scripts/infra.ts';
import { LedgerEvents } from '../src/events.ts';
import type { InvokePipeline } from '../src/pipeline.ts';
import { EVENT_WAIT_MS } from '../../test/helpers/until.ts';

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'events-source-'));
let redisServer: RunningServer | undefined;
let redis: Redis | undefined;
let events: LedgerEvents | undefined;
let http: Server | undefined;

afterAll(async () => {
  await events?.close();
  redis?.disconnect();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  await redisServer?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

const principal: Principal = {
  workspace: 'ws_events_source',
  role: 'owner',
  actor: { type: 'api_key', id: 'key_events_source' },
  credential_id: 'key_events_source',
  scopes: null,
  patterns: null,
} as Principal;

/** Opens the stream and reads its status and first bytes, then lets it go. */
async function openStream(url: string): Promise<{ status: number; first: string }> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  controller.abort();
  return { status: res.status, first: new TextDecoder().decode(value ?? new Uint8Array()) };
}

it('streams again once Redis is back after the first subscription failed during an outage', async () => {
  redisServer = await startRedis({ dir });
  const port = redisServer.port;
  redis = failFastWhileRedisDown(new Redis(redisServer.url, { maxRetriesPerRequest: 2 }));
  redis.on('error', () => undefined);
  expect(await redis.ping()).toBe('PONG');
  const log = createLogger('events-source-test', 'silent');
  events = new LedgerEvents(redis, log);
  // The pipeline's authentication is not what this test is about: a principal already checked.
  const pipeline = { authenticate: async () => principal } as unknown as InvokePipeline;
  const app = express();
  app.get('/v1/events', events.handler(pipeline, { publicUrl: 'http://127.0.0.1', log }));
  http = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = http.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/events`;

  // Redis goes down before any stream was asked for.
  process.kill(redisServer.pid, 'SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const during = await openStream(url);
  expect(during.status).toBe(503);
  // Long enough for the queued subscription to be given up by its reconnect attempts.
  await new Promise((resolve) => setTimeout(resolve, 3_000));

  const ready = new Promise((resolve) => redis!.once('ready', resolve));
  redisServer = await startRedis({ dir, port });
  await ready;
  expect(await redis.ping()).toBe('PONG');
  // Once the subscriber has reconnected, a stream opens.
  let after = { status: 0, first: '' };
  for (const deadline = Date.now() + EVENT_WAIT_MS; after.status !== 200 && Date.now() < deadline;) {
    after = await openStream(url);
    if (after.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(after.status).toBe(200);
  expect(after.first).toContain(': connected');
});
