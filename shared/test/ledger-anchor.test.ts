// The anchored ledger against a real mongo-java-server and Redis: receipts checked by an
// independent implementation, and each tampering (edit, delete, reorder, tail truncation with
// head rollback, rewritten suffix, forged checkpoint, replaced or removed signed head) found by
// routine verify, receipts or a full walk — and the one rollback the threat model leaves open.
import { createHash, createPublicKey, generateKeyPairSync, verify as cryptoVerify } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../src/db.ts';
import { LedgerSigner } from '../src/governance/anchor.ts';
import { CHECKPOINT_SPAN, entryHash, Ledger, ledgerReceiptScope, type AppendedEntry, type LedgerEntry } from '../src/governance/ledger.ts';
import type { Principal } from '../src/principal.ts';
import { positionsAsked } from './ledger-positions-asked.ts';

const dbName = `test_ledger_anchor_${randomBytes(4).toString('hex')}`;
const redisPrefix = `t_anchor_${randomBytes(3).toString('hex')}`;
const EVERY = 10;
let db: Connection;
let redis: Redis;
let ledger: Ledger;
const keys = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });

beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, dbName);
  redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  ledger = new Ledger(db, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix });
  await ledger.init();
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
  redis.disconnect();
});

/** A process that verifies but never wrote these workspaces' entries: it remembers no head of its own. */
const freshVerifier = () => new Ledger(db, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix });
/** What Redis restarting empty does to one workspace's anchors. */
const forgetInRedis = (ws: string) => redis.del(`${redisPrefix}:ledger:anchor:${ws}`, `${redisPrefix}:ledger:cut:${ws}`);
/** Ed25519 over "cuadra-ledger-head/v1\n<workspace>\n<seq>\n<hash>": the database's signed head, checked independently. */
function headVerifies(ws: string, head: { seq: number; hash: string; signature: string }): boolean {
  return cryptoVerify(null, Buffer.from(`cuadra-ledger-head/v1\n${ws}\n${head.seq}\n${head.hash}`, 'utf8'), createPublicKey(keys.publicKey), Buffer.from(head.signature, 'base64url'));
}

const principal = (workspace: string): Principal => ({ workspace, role: 'owner', actor: { type: 'api_key', id: 'key_1' }, credential_id: 'key_1', scopes: null, patterns: null });

/** Appends `n` entries at once (group-committed) and answers them in seq order. */
async function seed(ws: string, n: number): Promise<AppendedEntry[]> {
  const out = await Promise.all(Array.from({ length: n }, (_, i) =>
    ledger.append({ principal: principal(ws), tool: 'parties.create', risk: 'write', input_digest: String(i), outcome: 'ok', duration_ms: 1 })));
  return out.sort((a, b) => a.seq - b.seq);
}

const entries = () => db.collection('ledger');
const heads = () => db.collection('ledger_heads');
const checkpoints = () => db.collection('ledger_checkpoints');
const newWs = () => `ws_${randomBytes(4).toString('hex')}`;

// ── An independent implementation of the documented formats (not the ledger's code) ──
function canon(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  const keys = Object.keys(v as object).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`).join(',')}}`;
}
function recomputeHash(stored: Record<string, unknown>): string {
  const { _id, hash, ...rest } = stored;
  return createHash('sha256').update(String(rest.prev_hash) + canon(rest)).digest('hex');
}
function receiptVerifies(ws: string, receipt: string, publicKeyPem: string): { seq: number; hash: string } | null {
  const [seq, hash, sig] = receipt.split(';');
  const bytes = Buffer.from(`cuadra-ledger/v1\n${ws}\n${seq}\n${hash}`, 'utf8');
  return cryptoVerify(null, bytes, createPublicKey(publicKeyPem), Buffer.from(sig, 'base64url')) ? { seq: Number(seq), hash } : null;
}

/** What an attacker with database write access does: rewrites entries from `from` on with valid hashes. */
async function rewriteFrom(ws: string, from: number, change: Record<string, unknown>): Promise<void> {
  const rows = (await entries().find({ workspace: ws, seq: { $gte: from } }).toArray()).sort((a, b) => a.seq - b.seq);
  let prev = (await entries().findOne({ workspace: ws, seq: from - 1 }))!.hash as string;
  for (const [i, row] of rows.entries()) {
    const { _id, hash: _old, ...rest } = row as unknown as LedgerEntry & { _id: string };
    const body = { ...rest, ...(i === 0 ? change : {}), prev_hash: prev };
    const hash = entryHash(body);
    await entries().updateOne({ _id: _id as never }, { $set: { ...body, hash } });
    prev = hash;
  }
  const last = rows[rows.length - 1];
  await heads().updateOne({ _id: ws as never }, { $set: { seq: last.seq, hash: prev } });
}

describe('receipts', () => {
  it('gives every appended entry a receipt that an independent implementation verifies against the stored entry', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    expect(appended.map((e) => e.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    for (const e of appended) {
      expect(e.receipt).toMatch(/^\d+;[0-9a-f]{64};[A-Za-z0-9_-]{86}$/);
      const signed = receiptVerifies(ws, e.receipt!, keys.publicKey);
      expect(signed).toEqual({ seq: e.seq, hash: e.hash });
      const stored = await entries().findOne({ workspace: ws, seq: e.seq });
      expect(recomputeHash(stored!)).toBe(signed!.hash);
    }
    // Bound to its workspace: the same receipt does not verify for another one.
    expect(receiptVerifies(`${ws}x`, appended[0].receipt!, keys.publicKey)).toBeNull();
    // Checkpoints at every multiple of EVERY, signed the same way; the signed head in Redis is the last entry.
    const cps = (await checkpoints().find({ workspace: ws }).toArray()).map((c) => c.seq).sort((a, b) => a - b);
    expect(cps).toEqual([10, 20]);
    const verified = await ledger.verify(ws, { receipts: appended.map((e) => e.receipt!) });
    expect(verified).toMatchObject({ ok: true, entries: 25, mode: 'routine', anchored: true, checked_from: 20, checkpoint: { seq: 20 }, anchor: { seq: 25 } });
    expect(verified.receipts!.every((r) => r.ok)).toBe(true);
  });

  it('refuses receipts that are malformed, forged by another key, or for another workspace', async () => {
    const ws = newWs();
    const [e] = await seed(ws, 1);
    const other = new LedgerSigner({ privateKey: generateKeyPairSync('ed25519').privateKey });
    const forged = `${e.seq};${e.hash};${other.sign(ws, e.seq, e.hash)}`;
    const otherWs = (await seed(newWs(), 1))[0].receipt!;
    const v = await ledger.verify(ws, { receipts: ['garbage', forged, otherWs, e.receipt!] });
    expect(v.ok).toBe(false);
    expect(v.receipts!.map((r) => r.ok)).toEqual([false, false, false, true]);
    expect(v.receipts![1].reason).toMatch(/signature/);
  });

  it('hands the receipt of the last entry appended in a scope to whoever opened it', async () => {
    const ws = newWs();
    const scope: { receipt?: string } = {};
    const entry = await ledgerReceiptScope.run(scope, () => ledger.append({ principal: principal(ws), tool: 'x.y', risk: 'read', input_digest: null, outcome: 'ok', duration_ms: 0 }));
    expect(scope.receipt).toBe(entry.receipt);
  });
});

describe('tampering', () => {
  it('finds an edited entry after the newest checkpoint by routine verify; before it, by the full walk or a receipt', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await entries().updateOne({ workspace: ws, seq: 23 }, { $set: { outcome: 'policy_denied' } });
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 23, reason: expect.stringMatching(/changed/) } });
    await entries().updateOne({ workspace: ws, seq: 23 }, { $set: { outcome: 'ok' } });
    expect((await ledger.verify(ws)).ok).toBe(true);

    await entries().updateOne({ workspace: ws, seq: 5 }, { $set: { outcome: 'policy_denied' } });
    // Routine verify trusts what the checkpoint at 20 vouches for (it does not re-read 1–20)…
    expect((await ledger.verify(ws)).ok).toBe(true);
    // …the full walk and the entry's receipt do not.
    expect(await ledger.verify(ws, { full: true })).toMatchObject({ ok: false, mode: 'full', broken_at: { seq: 5 } });
    const withReceipt = await ledger.verify(ws, { receipts: [appended[4].receipt!] });
    expect(withReceipt).toMatchObject({ ok: false, receipts: [{ ok: false, reason: expect.stringMatching(/changed/) }] });
  });

  it('takes a receipt as proof of its entry and of every entry before it: an edit before the newest checkpoint fails every later receipt', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await entries().updateOne({ workspace: ws, seq: 5 }, { $set: { outcome: 'policy_denied' } });
    // Receipts for 25 (past the checkpoints at 10 and 20) and for 6: both commit to entry 5.
    const v = await ledger.verify(ws, { receipts: [appended[24].receipt!, appended[5].receipt!, appended[3].receipt!] });
    expect(v.ok).toBe(false);
    expect(v.prefix_checked).toBe(4);
    expect(v.broken_at).toMatchObject({ seq: 5, reason: expect.stringMatching(/changed/) });
    expect(v.receipts!.map((r) => r.ok)).toEqual([false, false, true]);
    expect(v.receipts![0].reason).toMatch(/^entry 5, which this receipt commits to: the entry was changed/);
    // Undone, every receipt holds again.
    await entries().updateOne({ workspace: ws, seq: 5 }, { $set: { outcome: 'ok' } });
    const again = await ledger.verify(ws, { receipts: [appended[24].receipt!] });
    expect(again).toMatchObject({ ok: true, prefix_checked: 25, receipts: [{ ok: true }] });
    // The same edit with every later hash recomputed (the chain looks whole) breaks the signatures instead.
    await rewriteFrom(ws, 5, { outcome: 'policy_denied' });
    const rewritten = await freshVerifier().verify(ws, { receipts: [appended[24].receipt!, appended[3].receipt!] });
    expect(rewritten.ok).toBe(false);
    expect(rewritten.receipts!.map((r) => r.ok)).toEqual([false, true]);
    expect(rewritten.broken_at!.seq).toBeLessThanOrEqual(25);
  });

  it('finds a deleted and a reordered entry', async () => {
    const ws = newWs();
    await seed(ws, 25);
    const row = await entries().findOne({ workspace: ws, seq: 22 });
    await entries().deleteOne({ _id: row!._id });
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 22, reason: expect.stringMatching(/missing/) } });
    expect(await ledger.verify(ws, { full: true })).toMatchObject({ ok: false, mode: 'full', broken_at: { seq: 22, reason: expect.stringMatching(/missing/) } });
    await entries().insertOne(row!);
    expect((await ledger.verify(ws)).ok).toBe(true);

    await entries().updateOne({ workspace: ws, seq: 23 }, { $set: { seq: 99 } });
    await entries().updateOne({ workspace: ws, seq: 24 }, { $set: { seq: 23 } });
    await entries().updateOne({ workspace: ws, seq: 99 }, { $set: { seq: 24 } });
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 23 } });
    expect(await ledger.verify(ws, { full: true })).toMatchObject({ ok: false, broken_at: { seq: 23 } });
  });

  it('finds a cut-back tail with the head rolled back: by the signed head in Redis, and by a receipt when Redis forgot it', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await entries().deleteMany({ workspace: ws, seq: { $gt: 22 } });
    const e22 = appended[21];
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 22, hash: e22.hash } });
    const v = await ledger.verify(ws);
    expect(v).toMatchObject({ ok: false, entries: 22, anchor: { seq: 25 }, broken_at: { seq: 23, reason: expect.stringMatching(/signed but are gone/) } });

    // Without the Redis copy (flushed, restarted), and verified by a process that never wrote
    // this chain, the signed head kept in the database beside the chain still finds the cut…
    await forgetInRedis(ws);
    for (const full of [false, true]) {
      const w = await freshVerifier().verify(ws, { full });
      expect(w).toMatchObject({ ok: false, entries: 22, anchor: { seq: 25, kept_in: ['database'] }, broken_at: { seq: 23, reason: expect.stringMatching(/signed but are gone .*kept in database/) } });
    }
    // …as does the receipt the caller kept for entry 25.
    const r = await freshVerifier().verify(ws, { receipts: [appended[24].receipt!] });
    expect(r).toMatchObject({ ok: false, receipts: [{ ok: false, reason: expect.stringMatching(/missing|gone/) }] });
  });

  it('keeps the signed head in the database: signed over its own context, moved forward only, checked by an independent implementation', async () => {
    const ws = newWs();
    const appended = await seed(ws, 13);
    const signed = await heads().findOne({ _id: `signed:${ws}` as never });
    expect(signed).toMatchObject({ seq: 13, hash: appended[12].hash });
    expect(headVerifies(ws, signed as never)).toBe(true);
    // Not a receipt: the same signature does not verify as an entry's.
    expect(receiptVerifies(ws, `13;${appended[12].hash};${signed!.signature}`, keys.publicKey)).toBeNull();
    expect(await freshVerifier().verify(ws)).toMatchObject({ ok: true, anchor: { seq: 13, kept_in: expect.arrayContaining(['database', 'redis']) } });
  });

  it('finds a signed head replaced by a checkpoint or a receipt (another context), or removed', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await forgetInRedis(ws);
    // The attacker cuts back to the checkpoint at 20 and puts the checkpoint's signed statement in the head's place.
    await entries().deleteMany({ workspace: ws, seq: { $gt: 20 } });
    const cp = await checkpoints().findOne({ workspace: ws, seq: 20 });
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 20, hash: cp!.hash } });
    await heads().updateOne({ _id: `signed:${ws}` as never }, { $set: { seq: 20, hash: cp!.hash, signature: cp!.signature } });
    expect(await freshVerifier().verify(ws)).toMatchObject({ ok: false, broken_at: { reason: expect.stringMatching(/signed head kept in the database does not verify/) } });
    // The receipt of entry 20 in its place: the same.
    await heads().updateOne({ _id: `signed:${ws}` as never }, { $set: { signature: appended[19].receipt!.split(';')[2] } });
    expect((await freshVerifier().verify(ws)).ok).toBe(false);
    // Removed altogether.
    await heads().deleteOne({ _id: `signed:${ws}` as never });
    expect(await freshVerifier().verify(ws)).toMatchObject({ ok: false, broken_at: { reason: expect.stringMatching(/no signed head/) } });
  });

  it('the limit of the threat model: an older signed head, replayed after Redis lost everything, passes routine and full verification in a process that never saw a newer one — a kept receipt or a process that remembers the newer head still finds the cut', async () => {
    const ws = newWs();
    await seed(ws, 22);
    // An attacker who reads the database over time keeps the signed head of entry 22…
    const old = await heads().findOne({ _id: `signed:${ws}` as never });
    const appended = [...(await seed(ws, 0)), ...(await Promise.all(Array.from({ length: 3 }, () => ledger.append({ principal: principal(ws), tool: 'parties.create', risk: 'write', input_digest: 'later', outcome: 'ok', duration_ms: 1 }))))];
    const last = appended.sort((a, b) => a.seq - b.seq).at(-1)!;
    expect(last.seq).toBe(25);
    // …and once Redis has lost its copy, cuts the tail back to 22 and puts that head back.
    await forgetInRedis(ws);
    await entries().deleteMany({ workspace: ws, seq: { $gt: 22 } });
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 22, hash: old!.hash } });
    await heads().replaceOne({ _id: `signed:${ws}` as never }, old!);
    for (const full of [false, true]) expect(await freshVerifier().verify(ws, { full })).toMatchObject({ ok: true, entries: 22, anchor: { seq: 22, kept_in: ['database'] } });
    // The caller's receipt for entry 25 commits to entries 1–25: two of them are gone.
    expect(await freshVerifier().verify(ws, { receipts: [last.receipt!] })).toMatchObject({ ok: false, receipts: [{ ok: false }] });
    // The process that wrote entry 25 remembers its signed head.
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, anchor: { seq: 25, kept_in: ['process'] }, broken_at: { seq: 23, reason: expect.stringMatching(/kept in process/) } });
  });

  it('keeps finding a cut-back tail after new entries have been written past the old end', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await entries().deleteMany({ workspace: ws, seq: { $gt: 22 } });
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 22, hash: appended[21].hash } });
    // A freshly started writer (no cached head) extends the cut chain past the old end.
    const writer = new Ledger(db, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix });
    for (let i = 0; i < 5; i++) await writer.append({ principal: principal(ws), tool: 'parties.create', risk: 'write', input_digest: 'new', outcome: 'ok', duration_ms: 1 });
    const v = await ledger.verify(ws);
    expect(v).toMatchObject({ ok: false, entries: 27, anchor: { seq: 27 }, broken_at: { seq: 25, reason: expect.stringMatching(/cut back below 25/) } });
    // The receipt of the old entry 25 says the same.
    expect((await ledger.verify(ws, { receipts: [appended[24].receipt!] })).receipts![0]).toMatchObject({ ok: false, reason: expect.stringMatching(/not the one that was signed/) });
  });

  it('does not take a lagging head hint for a cut', async () => {
    const ws = newWs();
    const appended = await seed(ws, 12);
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 10, hash: appended[9].hash } });
    const writer = new Ledger(db, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix });
    const next = await writer.append({ principal: principal(ws), tool: 'parties.create', risk: 'write', input_digest: 'next', outcome: 'ok', duration_ms: 1 });
    expect(next.seq).toBe(13);
    expect(await ledger.verify(ws)).toMatchObject({ ok: true, entries: 13 });
  });

  it('finds a cut reaching below a checkpoint even when the attacker deletes that checkpoint too', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await entries().deleteMany({ workspace: ws, seq: { $gt: 15 } });
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 15, hash: appended[14].hash } });
    // With the checkpoint at 20 still there, its entry is gone.
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 20 } });
    await checkpoints().deleteMany({ workspace: ws, seq: { $gt: 15 } });
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 16, reason: expect.stringMatching(/16–25 were signed/) } });
  });

  it('finds a rewritten suffix (hashes recomputed from some point on): by the checkpoint, the signed head, or a receipt', async () => {
    const ws = newWs();
    const appended = await seed(ws, 25);
    await rewriteFrom(ws, 15, { outcome: 'policy_denied' });
    // The full walk alone cannot see it (every hash matches its entry); the signatures can.
    const v = await ledger.verify(ws);
    expect(v).toMatchObject({ ok: false, broken_at: { seq: 20, reason: expect.stringMatching(/not the one that was signed/) } });
    expect(await ledger.verify(ws, { full: true })).toMatchObject({ ok: false, mode: 'full', broken_at: { seq: 20, reason: expect.stringMatching(/checkpoint 20/) } });
    await checkpoints().deleteMany({ workspace: ws, seq: { $gte: 15 } });
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 25, reason: expect.stringMatching(/signed head 25/) } });
    await forgetInRedis(ws);
    // The signed head in the database still names the entry that was signed at 25.
    expect(await freshVerifier().verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 25, reason: expect.stringMatching(/signed head 25, kept in database/) } });
    const r = await freshVerifier().verify(ws, { receipts: [appended[16].receipt!, appended[3].receipt!] });
    expect(r.receipts!.map((x) => x.ok)).toEqual([false, true]);
    expect(r.broken_at).toMatchObject({ seq: 17 });
  });

  it('finds a forged checkpoint (not signed by the ledger key)', async () => {
    const ws = newWs();
    await seed(ws, 12);
    await rewriteFrom(ws, 5, { outcome: 'policy_denied' });
    const e10 = await entries().findOne({ workspace: ws, seq: 10 });
    const other = new LedgerSigner({ privateKey: generateKeyPairSync('ed25519').privateKey });
    await checkpoints().updateOne({ workspace: ws, seq: 10 }, { $set: { hash: e10!.hash, signature: other.sign(ws, 10, e10!.hash as string) } });
    expect(await ledger.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 10, reason: expect.stringMatching(/forged/) } });
  });
});

describe('cost', () => {
  it('routine verify starts at the newest checkpoint, so it reads only what was appended since', async () => {
    const ws = newWs();
    await seed(ws, 57);
    const v = await ledger.verify(ws);
    expect(v).toMatchObject({ ok: true, entries: 57, checked_from: 50 });
    const full = await ledger.verify(ws, { full: true });
    expect(full).toMatchObject({ ok: true, entries: 57, checked_from: 0, mode: 'full' });
  });

  it('after many appends, routine verify reads by position what was appended since the newest checkpoint and no tenant\'s other checkpoints; below the checkpoint a tampered entry is the full walk\'s to find, above it the routine one\'s', async () => {
    const ws = newWs();
    await seed(ws, 1_004); // checkpoints at 10, 20, …, 1,000
    await seed(newWs(), 300); // another tenant's chain and checkpoints in the same collections
    const watched = await connectDatabase(process.env.MONGO_URL!, dbName, { monitorCommands: true });
    try {
      // A process that never wrote this chain (as the agents service, which answers ledger.verify).
      const verifier = new Ledger(watched, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix });
      const routine = () => positionsAsked(watched, () => positionsAsked(watched, () => verifier.verify(ws)), 'ledger_checkpoints');
      const { result: { result: v, asked, finds }, asked: checkpointPositions, finds: checkpointFinds } = await routine();
      expect(v).toMatchObject({ ok: true, entries: 1_004, checked_from: 1_000, checkpoint: { seq: 1_000 } });
      // The checkpoint's entry, the 4 after it and a few positions past the end: one find for the walk, one for the
      // checkpoint's entry (a findOne per position, 25 at a time, asked 27 positions in 27 finds).
      expect(asked).toBeLessThanOrEqual(1 + EVERY + 8);
      expect(finds).toBeLessThanOrEqual(2);
      // The newest checkpoint by its position in the index (a query by workspace alone read every tenant's checkpoints).
      expect(checkpointPositions).toBeLessThanOrEqual(2 * CHECKPOINT_SPAN);
      expect(checkpointFinds).toBe(1);

      // Below the checkpoint: routine verify does not read it; the full walk finds it.
      await entries().updateOne({ workspace: ws, seq: 500 }, { $set: { outcome: 'policy_denied' } });
      expect((await verifier.verify(ws)).ok).toBe(true);
      expect(await verifier.verify(ws, { full: true })).toMatchObject({ ok: false, broken_at: { seq: 500, reason: expect.stringMatching(/changed/) } });
      await entries().updateOne({ workspace: ws, seq: 500 }, { $set: { outcome: 'ok' } });
      // Above it: the routine one finds it.
      await entries().updateOne({ workspace: ws, seq: 1_003 }, { $set: { outcome: 'policy_denied' } });
      expect(await verifier.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 1_003, reason: expect.stringMatching(/changed/) } });
      await entries().updateOne({ workspace: ws, seq: 1_003 }, { $set: { outcome: 'ok' } });

      // A run of checkpoints near the end missing (never written, or removed): the newest one left is found anywhere.
      await checkpoints().deleteMany({ workspace: ws, seq: { $gt: 700 } });
      expect(await verifier.verify(ws)).toMatchObject({ ok: true, entries: 1_004, checked_from: 700 });
      await entries().updateOne({ workspace: ws, seq: 800 }, { $set: { outcome: 'policy_denied' } });
      expect(await verifier.verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 800 } });
    } finally {
      await watched.close();
    }
  });

  it('finds a cut below a checkpoint when every head was rolled back with it, as long as the checkpoint is kept', async () => {
    const ws = newWs();
    await seed(ws, 22);
    const old = await heads().findOne({ _id: `signed:${ws}` as never });
    await seed(ws, 13); // to 35: a checkpoint at 30
    await forgetInRedis(ws);
    await entries().deleteMany({ workspace: ws, seq: { $gt: 22 } });
    await heads().updateOne({ _id: ws as never }, { $set: { seq: 22, hash: old!.hash } });
    await heads().replaceOne({ _id: `signed:${ws}` as never }, old!);
    // A process that never saw the newer heads: the checkpoint at 30 names an entry that is gone.
    expect(await freshVerifier().verify(ws)).toMatchObject({ ok: false, broken_at: { seq: 30, reason: expect.stringMatching(/gone \(checkpoint 30\)/) } });
  });

  it('walks a long chain in pages, each bounded: signed cursors carry the walk on, a break ends it, and a cursor is honoured only as given out', async () => {
    const ws = newWs();
    const appended = await seed(ws, 60);
    // Pages of 25 entries: 1–25, 26–50, 51–60.
    const paged = new Ledger(db, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix, fullWalkPage: { entries: 25, ms: 60_000 } });
    const first = await paged.verify(ws, { full: true });
    expect(first).toMatchObject({ ok: true, mode: 'full', entries: 25, checked_from: 0, anchor: null });
    // The head a page reports is the stored entry 25's hash, recomputed here independently.
    expect(first.head).toBe(recomputeHash((await entries().findOne({ workspace: ws, seq: 25 }))!));
    const second = await paged.verify(ws, { full: true, cursor: first.next_cursor });
    expect(second).toMatchObject({ ok: true, entries: 50, next_cursor: expect.any(String) });
    const last = await paged.verify(ws, { full: true, cursor: second.next_cursor });
    expect(last).toMatchObject({ ok: true, entries: 60, head: appended[59].hash, anchor: { seq: 60 } });
    expect(last.next_cursor).toBeUndefined();

    // A cursor edited, or given out for another workspace, is refused at /cursor.
    const [body, mac] = first.next_cursor!.split('.');
    const forged = `${Buffer.from(JSON.stringify({ s: 50, h: second.head })).toString('base64url')}.${mac}`;
    await expect(paged.verify(ws, { full: true, cursor: forged })).rejects.toMatchObject({ code: 'invalid_input', field: '/cursor' });
    await expect(paged.verify(newWs(), { full: true, cursor: `${body}.${mac}` })).rejects.toMatchObject({ code: 'invalid_input', field: '/cursor' });

    // An edit on the second page: the first still passes and carries on; the second finds it and gives no cursor.
    await entries().updateOne({ workspace: ws, seq: 37 }, { $set: { input_digest: 'edited' } });
    const again = await paged.verify(ws, { full: true });
    expect(again).toMatchObject({ ok: true, entries: 25 });
    const found = await paged.verify(ws, { full: true, cursor: again.next_cursor });
    expect(found).toMatchObject({ ok: false, entries: 36, broken_at: { seq: 37, reason: expect.stringMatching(/changed/) } });
    expect(found.next_cursor).toBeUndefined();
  });

  it('ends a page on time: past its time a page stops at the first whole window, and the next goes on from there', async () => {
    const ws = newWs();
    await seed(ws, 501);
    // No time at all: each page walks one window of 500 positions.
    const hurried = new Ledger(db, redis, { signer: new LedgerSigner({ privateKey: keys.privateKey }), checkpointEvery: EVERY, redisPrefix, fullWalkPage: { entries: 50_000, ms: 0 } });
    const first = await hurried.verify(ws, { full: true });
    expect(first).toMatchObject({ ok: true, entries: 500, next_cursor: expect.any(String) });
    expect(await hurried.verify(ws, { full: true, cursor: first.next_cursor })).toMatchObject({ ok: true, entries: 501, anchor: { seq: 501 } });
  });

  it('lets one full walk per workspace start a minute', async () => {
    const ws = newWs();
    expect(await ledger.claimFullWalk(ws)).toBe(0);
    const wait = await ledger.claimFullWalk(ws);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await ledger.claimFullWalk(newWs())).toBe(0);
  });

  it('a verify that runs while entries are appended answers whole: an append landing mid-verify is never "missing"', async () => {
    const ws = newWs();
    await seed(ws, 3);
    // Appends one after another while verifies run beside them: each verify reads the head, walks, and compares.
    let appending = true;
    const writer = (async () => {
      for (let i = 0; i < 120; i++) await ledger.append({ principal: principal(ws), tool: 'parties.create', risk: 'write', input_digest: `w${i}`, outcome: 'ok', duration_ms: 1 });
      appending = false;
    })();
    const answers: { ok: boolean; reason?: string }[] = [];
    while (appending) {
      const v = await ledger.verify(ws);
      answers.push({ ok: v.ok, reason: (v as { broken_at?: { reason?: string } }).broken_at?.reason });
    }
    await writer;
    expect(answers.length).toBeGreaterThan(5);
    expect(answers.filter((a) => !a.ok)).toEqual([]);
  });
});
