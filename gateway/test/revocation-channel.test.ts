import { connectDatabase, CuadraError, RateLimiter, type RateCount } from '@cuadra/shared';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../test/helpers/until.ts';
import { IdentityStore } from '../src/identity/store.ts';

// Issue 33, the hop: a gateway serves a known key's calls from a block counted ahead in Redis while
// its revocations channel is live. Two gateways here are two identity stores and limiters on one
// database and one Redis (each with its own connections), as two gateway processes are.
let db: Connection;
const redises: Redis[] = [];
const stores: IdentityStore[] = [];
let observer: Redis;
let a: { identity: IdentityStore; limiter: RateLimiter };
let b: { identity: IdentityStore; limiter: RateLimiter };

async function gateway(prefix: string) {
  const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  redises.push(redis);
  const identity = new IdentityStore(db, redis);
  stores.push(identity);
  const limiter = new RateLimiter(redis, { credential: { points: 1000, seconds: 60 }, workspace: { points: 5000, seconds: 60 } }, prefix);
  identity.listenForRevocations(limiter);
  return { identity, limiter };
}

beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, `test_gateway_revocations_${Math.random().toString(36).slice(2, 10)}`);
  observer = new Redis(process.env.REDIS_URL!);
  const prefix = `rltest:${Math.random().toString(36).slice(2, 10)}`;
  a = await gateway(prefix);
  await a.identity.init();
  b = await gateway(prefix);
  const live = await until(async () => [a, b].every((g) => g.identity.revocations.live), (v) => v, 5_000, 5);
  expect(live).toBe(true);
});
afterAll(async () => {
  for (const s of stores) s.close();
  for (const r of redises) r.disconnect();
  observer?.disconnect();
  await db?.close();
});

/** A call through a gateway as the pipeline makes it: who, and counted (a first sight is counted after). */
async function call(g: typeof a, key: string): Promise<string> {
  try {
    const { principal, count } = await g.identity.authenticateApiKeyCounted(key, g.limiter);
    const settled: RateCount = count ?? (await g.limiter.count(principal));
    if ('refusal' in settled) throw settled.refusal;
    return 'ok';
  } catch (err) {
    return err instanceof CuadraError ? err.code : String(err);
  }
}

/** A key used twice on each gateway: seen, then holding a block. */
async function keyInUse(): Promise<{ key: string; id: string; workspace: string; hash: string }> {
  const opened = await a.identity.createWorkspace({ name: 'Canal SAS', ownerEmail: 'dueña@canal.example' });
  for (const g of [a, b]) for (let i = 0; i < 3; i++) expect(await call(g, opened.api_key)).toBe('ok');
  const { createHash } = await import('node:crypto');
  return { key: opened.api_key, id: opened.key_id, workspace: opened.workspace_id, hash: createHash('sha256').update(opened.api_key).digest('hex') };
}

describe('a key revoked on one gateway, with the other serving it from a block', () => {
  it('is refused at once where revoked, and on the other on its first call after the message arrives', async () => {
    const k = await keyInUse();
    // The other serves from its block: the shared entry overwritten without a message is not seen (the control).
    const entry = `cred:${k.hash}`;
    const text = await observer.get(entry);
    await observer.set(entry, 'revoked', 'KEEPTTL');
    expect(await call(b, k.key)).toBe('ok');
    await observer.set(entry, text!, 'KEEPTTL');
    expect(await a.identity.revokeApiKey(k.workspace, k.id)).toBe(true);
    expect(await call(a, k.key)).toBe('unauthenticated');
    // B serves until the message arrives (at most the calls made meanwhile), then never again.
    const answers: string[] = [];
    await until(async () => { answers.push(await call(b, k.key)); return answers.at(-1); }, (v) => v === 'unauthenticated', 2_000, 1);
    expect(answers.at(-1)).toBe('unauthenticated');
    expect(answers.indexOf('unauthenticated')).toBe(answers.length - 1);
    for (let i = 0; i < 3; i++) expect(await call(b, k.key)).toBe('unauthenticated');
  });

  it('with the channel dropped, the other asks Redis on every call: a revocation whose message it missed is refused at once', async () => {
    const k = await keyInUse();
    const name = b.identity.revocations.connectionName!;
    const clients = (await observer.client('LIST')) as string;
    const id = /id=(\d+) .*name=(\S+)/g;
    const ours = [...clients.matchAll(id)].find((m) => m[2] === name)?.[1];
    expect(ours).toBeDefined();
    await observer.client('KILL', 'ID', ours!);
    await until(async () => b.identity.revocations.live, (live) => !live, 2_000, 1);
    // Revoked with its message lost to B (published while B's channel is down): the entry alone.
    await observer.set(`cred:${k.hash}`, 'revoked', 'EX', 120);
    expect(await call(b, k.key)).toBe('unauthenticated');
    // The channel comes back by itself; blocks are served again only after it is subscribed anew.
    expect(await until(async () => b.identity.revocations.live, (live) => live, 5_000, 5)).toBe(true);
    expect(await call(b, k.key)).toBe('unauthenticated');
    const fresh = await keyInUse();
    expect(await call(b, fresh.key)).toBe('ok');
  });
});
