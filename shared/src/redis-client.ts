import type { Redis } from 'ioredis';

/**
 * Makes a Redis client refuse a command at once while its connection is lost, as the database's
 * connection does (db.ts, `failFastWhileDown`), and queue again once it is back.
 *
 * Why: a command issued while the connection is down waits in ioredis's offline queue until the
 * queue is flushed with `MaxRetriesPerRequestError` — after `maxRetriesPerRequest + 1` reconnect
 * attempts, whose delays grow by 50 ms to 2 s each: up to ~6 s before a call that needs Redis hears 503
 * `unavailable` (outage-edges: a dozen requests while Redis was down took 10.6 s). Refused at once,
 * it answers the same 503 (errors.ts `storeUnreachable` knows the refusal) without waiting on a
 * server known down; nothing was sent either way.
 *
 * Only after the connection was ready once: at start-up, commands wait for the first connection as
 * before. Commands already sent when the connection drops are resent on reconnect, as before.
 */
export function failFastWhileRedisDown(client: Redis): Redis {
  let wasReady = false;
  client.on('close', () => {
    if (wasReady) client.options.enableOfflineQueue = false;
  });
  client.on('ready', () => {
    wasReady = true;
    client.options.enableOfflineQueue = true;
  });
  return client;
}
