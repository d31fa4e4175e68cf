// Anchored ledger over real HTTP (CONTRACT.md §9, Ledger receipts), against the six real
// processes: every answer that wrote an entry carries a Ledger-Receipt that an independent
// implementation here verifies; routine verify finds a cut-back tail; receipts are confirmed or
// refused; the full walk is for owners and admins, once a minute.
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import mongoose from 'mongoose';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let mongo: mongoose.mongo.MongoClient;

beforeAll(async () => {
  sys = await startTestSystem('ledger');
  mongo = await mongoose.mongo.MongoClient.connect(process.env.MONGO_URL!);
});
afterAll(async () => {
  await mongo?.close();
  await sys?.stop();
});

const governanceDb = () => mongo.db(sys.gatewayDb.replace(/_gateway$/, '_governance'));

// ── The documented formats, implemented here independently of the service's code ──
function canon(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canon(o[k])}`).join(',')}}`;
}
/** CONTRACT.md §6: hash = SHA-256(prev_hash ‖ canonical JSON of the entry without its hash). */
function recomputeHash(entry: Record<string, unknown>): string {
  const { hash: _hash, _id: _ignored, ...rest } = entry;
  return createHash('sha256').update(String(rest.prev_hash) + canon(rest)).digest('hex');
}
/** Ed25519 over "cuadra-ledger/v1\n<workspace>\n<seq>\n<hash>"; signature base64url. */
function checkReceipt(workspace: string, receipt: string | null): { seq: number; hash: string } {
  expect(receipt).toMatch(/^\d+;[0-9a-f]{64};[A-Za-z0-9_-]{86}$/);
  const [seq, hash, sig] = receipt!.split(';');
  const ok = cryptoVerify(null, Buffer.from(`cuadra-ledger/v1\n${workspace}\n${seq}\n${hash}`, 'utf8'), createPublicKey(sys.ledgerKeys.publicKey), Buffer.from(sig, 'base64url'));
  expect(ok).toBe(true);
  return { seq: Number(seq), hash };
}

/**
 * What a receipt for entry `seq` proves, computed here independently: the stored entries 1…seq,
 * each hash recomputed and each prev_hash linked from the genesis hash, end at the receipt's hash.
 * Answers the first entry where that fails (0: the receipt holds).
 */
function firstBreakBefore(rows: Record<string, unknown>[], receipt: { seq: number; hash: string }): number {
  const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
  let prev = '0'.repeat(64);
  for (let seq = 1; seq <= receipt.seq; seq++) {
    const entry = bySeq.get(seq);
    if (!entry || entry.prev_hash !== prev || recomputeHash(entry) !== entry.hash) return seq;
    prev = String(entry.hash);
  }
  return prev === receipt.hash ? 0 : receipt.seq;
}

describe('Ledger-Receipt', () => {
  it('comes with answers that ran, owner refusals and gateway refusals, and verifies against the stored entry', async () => {
    const ws = await sys.workspace('Recibos SAS');
    const created = await sys.invoke('parties.create', { name: 'Cliente Recibo', kind: 'customer' }, ws.api_key);
    expect(created.status).toBe(200);
    const ranReceipt = checkReceipt(ws.workspace_id, created.headers.get('ledger-receipt'));

    const missing = await sys.invoke('parties.get', { id: 'pty_missing' }, ws.api_key); // not_found, decided by crm
    expect(missing.status).toBe(404);
    const ownerRefusal = checkReceipt(ws.workspace_id, missing.headers.get('ledger-receipt'));

    const unknown = await sys.invoke('parties.nope', {}, ws.api_key); // unknown_tool, decided by the gateway
    expect(unknown.status).toBe(404);
    const gatewayRefusal = checkReceipt(ws.workspace_id, unknown.headers.get('ledger-receipt'));
    expect([ranReceipt.seq, ownerRefusal.seq, gatewayRefusal.seq]).toEqual([1, 2, 3]);

    // Not authenticated: no entry, so no receipt.
    const anonymous = await sys.invoke('parties.list', {}, 'nk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ledger-receipt')).toBeNull();

    // Each receipt names the stored entry at its seq, whose hash this test recomputes itself.
    const rows = (await sys.invoke('ledger.list', {}, ws.api_key)).body.output.rows as Record<string, unknown>[];
    for (const r of [ranReceipt, ownerRefusal, gatewayRefusal]) {
      const entry = rows.find((e) => e.seq === r.seq)!;
      expect(entry.hash).toBe(r.hash);
      expect(recomputeHash(entry)).toBe(r.hash);
    }
    expect(rows.find((e) => e.seq === 3)!.outcome).toBe('unknown_tool');

    const receipts = [created, missing, unknown].map((a) => a.headers.get('ledger-receipt')!);
    const verified = await sys.invoke('ledger.verify', { receipts }, ws.api_key);
    expect(verified.status).toBe(200);
    expect(verified.body.output).toMatchObject({ ok: true, mode: 'routine', anchored: true, anchor: { seq: expect.any(Number) } });
    expect(verified.body.output.receipts.map((r: { ok: boolean }) => r.ok)).toEqual([true, true, true]);
    expect(createPublicKey(verified.body.output.public_key).equals(createPublicKey(sys.ledgerKeys.publicKey))).toBe(true);
    checkReceipt(ws.workspace_id, verified.headers.get('ledger-receipt'));
  });

  it('comes with MCP tool results as _meta["io.cuadra/ledger-receipt"]', async () => {
    const ws = await sys.workspace('Recibos MCP SAS');
    const client = new Client({ name: 'ledger-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${sys.gatewayUrl}/mcp`), { authProvider: { token: async () => ws.api_key } }));
    try {
      const result = await client.callTool({ name: 'parties.create', arguments: { name: 'Cliente MCP', kind: 'customer' } });
      expect(result.isError).toBeFalsy();
      const r = checkReceipt(ws.workspace_id, (result._meta as Record<string, string>)['io.cuadra/ledger-receipt']);
      const refused = await client.callTool({ name: 'parties.get', arguments: { id: 'pty_missing' } });
      expect(refused.isError).toBe(true);
      expect(checkReceipt(ws.workspace_id, (refused._meta as Record<string, string>)['io.cuadra/ledger-receipt']).seq).toBe(r.seq + 1);
    } finally {
      await client.close();
    }
  });
});

describe('ledger.verify', () => {
  it('finds a cut-back tail with the head rolled back, and refuses the receipt of a removed entry', async () => {
    const ws = await sys.workspace('Recortada SAS');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await sys.invoke('parties.create', { name: `P${i}`, kind: 'customer' }, ws.api_key));
    const last = checkReceipt(ws.workspace_id, answers[4].headers.get('ledger-receipt'));
    expect((await sys.invoke('ledger.verify', {}, ws.api_key)).body.output.ok).toBe(true);
    // The attacker (database write access) removes everything after entry 3 and sets the head hint back.
    const db = governanceDb();
    const third = await db.collection('ledger').findOne({ workspace: ws.workspace_id, seq: 3 });
    await db.collection('ledger').deleteMany({ workspace: ws.workspace_id, seq: { $gt: 3 } });
    await db.collection('ledger_heads').updateOne({ _id: ws.workspace_id as never }, { $set: { seq: 3, hash: third!.hash } });

    const verified = (await sys.invoke('ledger.verify', { receipts: [answers[4].headers.get('ledger-receipt')] }, ws.api_key)).body.output;
    expect(verified.ok).toBe(false);
    expect(verified.entries).toBe(3);
    expect(verified.anchor.seq).toBeGreaterThanOrEqual(last.seq);
    expect(verified.broken_at).toMatchObject({ seq: 4, reason: expect.stringMatching(/signed but are gone/) });
    expect(verified.receipts).toEqual([{ receipt: answers[4].headers.get('ledger-receipt'), ok: false, reason: expect.stringMatching(/gone/) }]);
  });

  it('refuses malformed receipts as invalid input', async () => {
    const ws = await sys.workspace('Entrada SAS');
    const r = await sys.invoke('ledger.verify', { receipts: 'x' }, ws.api_key);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('invalid_input');
    const many = await sys.invoke('ledger.verify', { receipts: Array.from({ length: 51 }, () => '1;a;b') }, ws.api_key);
    expect(many.status).toBe(422);
    expect(many.body.field).toBe("/receipts");
  });

  it('keeps the full walk for owners and admins, once a minute per workspace', async () => {
    const ws = await sys.workspace('Completa SAS');
    const viewer = (await sys.key(ws.workspace_id, 'viewer')).api_key;
    const member = (await sys.key(ws.workspace_id, 'member')).api_key;
    for (const key of [viewer, member]) {
      const denied = await sys.invoke('ledger.verify', { full: true }, key);
      expect(denied.status).toBe(403);
      expect(denied.body.code).toBe('policy_denied');
      // Their routine verify still runs.
      expect((await sys.invoke('ledger.verify', {}, key)).body.output.ok).toBe(true);
    }
    const full = await sys.invoke('ledger.verify', { full: true }, ws.api_key);
    expect(full.status).toBe(200);
    expect(full.body.output).toMatchObject({ ok: true, mode: 'full', checked_from: 0 });
    const again = await sys.invoke('ledger.verify', { full: true }, ws.api_key);
    expect(again.status).toBe(429);
    expect(again.body.code).toBe('rate_limited');
  });
});

describe('what a receipt and the signed heads prove (issue 31, finding 4)', () => {
  /** `n` entries in a new workspace, through the API; answers their receipts by seq. */
  async function workspaceWith(n: number) {
    const ws = await sys.workspace('Prueba SAS');
    const receipts = new Map<number, string>();
    for (let i = 0; i < n; i++) {
      const r = await sys.invoke('parties.create', { name: `P${i}`, kind: 'customer' }, ws.api_key);
      expect(r.status).toBe(200);
      const receipt = r.headers.get('ledger-receipt')!;
      receipts.set(checkReceipt(ws.workspace_id, receipt).seq, receipt);
    }
    return { ...ws, receipts };
  }

  it('130 entries, checkpoints every 100: an edit of entry 50 fails the receipts for 130 and for 60, and not the one for 40', async () => {
    const ws = await workspaceWith(130);
    expect([...ws.receipts.keys()].at(-1)).toBe(130);
    const db = governanceDb();
    // The checkpoint at 100 exists: routine verify starts there.
    expect((await sys.invoke('ledger.verify', {}, ws.api_key)).body.output).toMatchObject({ ok: true, checked_from: 100 });
    // Before the edit, this test's own walk of the stored chain confirms each receipt.
    const stored = () => db.collection('ledger').find({ workspace: ws.workspace_id }).toArray() as Promise<Record<string, unknown>[]>;
    for (const seq of [130, 60, 40]) expect(firstBreakBefore(await stored(), checkReceipt(ws.workspace_id, ws.receipts.get(seq)!))).toBe(0);
    await db.collection('ledger').updateOne({ workspace: ws.workspace_id, seq: 50 }, { $set: { outcome: 'policy_denied' } });
    // After it, the independent walk breaks at entry 50 for the receipts of 130 and 60, and not for 40.
    const after = await stored();
    expect([130, 60, 40].map((seq) => firstBreakBefore(after, checkReceipt(ws.workspace_id, ws.receipts.get(seq)!)))).toEqual([50, 50, 0]);

    const routine = (await sys.invoke('ledger.verify', {}, ws.api_key)).body.output;
    expect(routine.ok).toBe(true); // it reads only what follows the checkpoint at 100
    for (const seq of [130, 60]) {
      const v = (await sys.invoke('ledger.verify', { receipts: [ws.receipts.get(seq)] }, ws.api_key)).body.output;
      expect(v).toMatchObject({ ok: false, prefix_checked: 49, broken_at: { seq: 50, reason: expect.stringMatching(/changed/) } });
      expect(v.receipts[0]).toMatchObject({ ok: false, reason: expect.stringMatching(/^entry 50, which this receipt commits to/) });
    }
    const before = (await sys.invoke('ledger.verify', { receipts: [ws.receipts.get(40)] }, ws.api_key)).body.output;
    expect(before).toMatchObject({ ok: true, prefix_checked: 40, receipts: [{ ok: true }] });
  }, 120_000);

  it('after Redis lost the signed head, a tail cut with the head hint rolled back is found by routine and full verify (the head signed in the database)', async () => {
    const ws = await workspaceWith(12);
    const db = governanceDb();
    const tenth = await db.collection('ledger').findOne({ workspace: ws.workspace_id, seq: 10 });
    // Redis restarted empty (for this workspace: its anchor and cut evidence), then the attacker cuts and rolls the hint back.
    const redis = new Redis(process.env.REDIS_URL!);
    const prefix = sys.gatewayDb.replace(/_gateway$/, ''); // the system's REDIS_KEY_PREFIX
    expect(await redis.del(`${prefix}:ledger:anchor:${ws.workspace_id}`, `${prefix}:ledger:cut:${ws.workspace_id}`)).toBe(1);
    redis.disconnect();
    await db.collection('ledger').deleteMany({ workspace: ws.workspace_id, seq: { $gt: 10 } });
    await db.collection('ledger_heads').updateOne({ _id: ws.workspace_id as never }, { $set: { seq: 10, hash: tenth!.hash } });
    const routine = (await sys.invoke('ledger.verify', {}, ws.api_key)).body.output;
    expect(routine).toMatchObject({ ok: false, entries: 10, anchor: { seq: 12, kept_in: expect.arrayContaining(['database']) }, broken_at: { seq: 11, reason: expect.stringMatching(/signed but are gone/) } });
    // That call's own entry went on at 11 (its writer read the cut chain's end), after the writer kept
    // the signed head it found beyond it as evidence: the cut stays found.
    const full = (await sys.invoke('ledger.verify', { full: true }, ws.api_key)).body.output;
    expect(full).toMatchObject({ ok: false, mode: 'full', entries: 11, broken_at: { reason: expect.stringMatching(/cut back below 12 and written again|entry 12 was signed but is gone/) } });
  }, 60_000);
});

