// failFastWhileRedisDown: once a client's connection was ready, a command issued while it is lost is
// refused at once (nothing sent; answered `unavailable`), not held in ioredis's offline queue until
// reconnect attempts give up; once Redis is back, the client works again. Before the first connection,
// commands wait for it as always.
import { Redis } from 'ioredis';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { afterAll, expect, it } from 'vitest';
import { startRedis, type RunningServer } from '../../scripts/infra.ts';
import { failFastWhileRedisDown, storeUnreachable } from '../src/index.ts';

let server: RunningServer | undefined;
let client: Redis | undefined;
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'redis-client-'));

afterAll(async () => {
  client?.disconnect();
  await server?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

it('refuses a command at once while the connection is lost (the refusal reads as unreachable), and answers again once Redis is back', async () => {
  server = await startRedis({ dir });
  const port = server.port;
  client = failFastWhileRedisDown(new Redis(server.url, { maxRetriesPerRequest: 2 }));
  // Issued before the first connection is ready: queued and answered, as without the guard.
  expect(await client.ping()).toBe('PONG');

  const lost = new Promise((resolve) => client!.once('close', resolve));
  process.kill(server.pid, 'SIGKILL');
  await lost;
  // Refused by the client itself (nothing sent), not `MaxRetriesPerRequestError` after reconnect
  // attempts gave up — what a queued command meets.
  const refused = await client.get('k').then(() => null, (err: Error) => err);
  expect(refused?.message).toMatch(/^Stream isn't writeable and enableOfflineQueue options is false/);
  expect(storeUnreachable(refused)).toBe(true);

  const ready = new Promise((resolve) => client!.once('ready', resolve));
  server = await startRedis({ dir, port });
  await ready;
  expect(await client.set('k', 'v')).toBe('OK');
  expect(await client.get('k')).toBe('v');
});
