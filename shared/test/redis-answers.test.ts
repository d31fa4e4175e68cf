// redisAnswers: a Redis that stops answering is seen as down at once, although the client's
// connection still says `ready` — what the sign-in pages' 503 relied on (outage-edges once got a
// 200 sign-in form just after Redis was killed, the gateway's connection not having heard yet).
import { Redis } from 'ioredis';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedis, type RunningServer } from '../../scripts/infra.ts';
import { redisAnswers } from '../src/index.ts';

let server: RunningServer;
let dir: string;
let client: Redis;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'redis-answers-'));
  server = await startRedis({ dir });
  client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  await client.ping();
});

afterAll(async () => {
  process.kill(server.pid, 'SIGCONT');
  client.disconnect();
  await server.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

it('is true while Redis answers, false within the wait once it stops answering though the connection still says ready', async () => {
  expect(await redisAnswers(client)).toBe(true);
  process.kill(server.pid, 'SIGSTOP');
  try {
    const asked = Date.now();
    expect(client.status).toBe('ready'); // the old check (`status === 'ready'`) would offer the form
    expect(await redisAnswers(client, 300)).toBe(false);
    expect(Date.now() - asked).toBeLessThan(2_000);
  } finally {
    process.kill(server.pid, 'SIGCONT');
  }
  expect(await redisAnswers(client)).toBe(true);
});
