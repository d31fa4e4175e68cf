import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from 'mongoose';
import { connectDatabase } from '../src/db.ts';
import { inputDigest } from '../src/governance/digest.ts';
import { Governance } from '../src/governance/index.ts';
import { createLogger } from '../src/logger.ts';
import { ToolOwner } from '../src/owner.ts';
import type { Principal } from '../src/principal.ts';
import { createRegistry } from '../src/registry.ts';

// Found by the agents' kill test (issue 37): an outside call whose process died was made a second
// time. Recovery deleted the dead attempt's intent before it answered the attempt's key; a retry
// arriving in between saw a running key past its lease and no intent — "provably never started" —
// and ran the call again. The invariant: while a key is running, its intent is gone only if its
// action never started.

const dbName = `test_settle_${randomBytes(4).toString('hex')}`;
let db: Connection;

beforeAll(async () => {
  db = await connectDatabase(process.env.MONGO_URL!, dbName);
  await new Governance(db).init();
});
afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await db.close();
});

/** What a process killed mid-action leaves: a running key past its lease and its intent, long started. */
async function deadAttempt(governance: Governance) {
  const ws = `ws_${randomBytes(4).toString('hex')}`;
  const principal: Principal = { workspace: ws, role: 'owner', actor: { type: 'api_key', id: 'key_1' }, credential_id: 'key_1', scopes: null, patterns: null };
  const digest = inputDigest({ name: 'x' });
  const started = await governance.idempotency.begin(ws, 'cred:key_1:k1', 'parties.create', digest);
  if (started.kind !== 'run') throw new Error('expected to hold the key');
  const intentId = `int_${started.run}`;
  const scope = started.scope;
  await db.collection('idempotency').updateOne({ run: started.run }, { $set: { lease_until: new Date(Date.now() - 1_000) } });
  await governance.intents.create({
    _id: intentId, workspace: ws, subgraph: 'crm', tool: 'parties.create', risk: 'write', input_digest: digest, principal, approval_id: null, idempotency_key: 'k1',
    started_at: new Date(Date.now() - 10 * 60_000),
  });
  return { ws, digest, run: started.run, intentId, scope };
}

/** Recovers, recording at the moment it writes the ledger entry whether the intent exists and the key's state. */
async function recoverWatching(governance: Governance, intentId: string, run: string) {
  const owner = new ToolOwner({ subgraph: 'crm', registry: createRegistry('crm', ['parties'], []), governance, db, log: createLogger('test') });
  const seen: { intent: boolean; state: string }[] = [];
  const append = governance.ledger.append.bind(governance.ledger);
  governance.ledger.append = async (record) => {
    const [intent, key] = await Promise.all([governance.intents.exists({ _id: intentId }), db.collection('idempotency').findOne({ run })]);
    seen.push({ intent: intent !== null, state: String(key?.state ?? 'released') });
    return append(record);
  };
  await owner.recover();
  return seen;
}

describe('settling an attempt that died while acting', () => {
  it('one that wrote records: answers its key before its intent goes, so no retry can take the key over in between', async () => {
    const governance = new Governance(db);
    const { ws, digest, run, intentId } = await deadAttempt(governance);
    // Two records carry its run (issue 31, finding 6: more than one record written → the outcome stays unknown).
    await db.collection('policies').insertMany([{ _id: `pol_${run}_a`, workspace: ws, _runs: [intentId] }, { _id: `pol_${run}_b`, workspace: ws, _runs: [intentId] }] as never[]);
    const seen = await recoverWatching(governance, intentId, run);
    expect(seen).toHaveLength(1);
    expect(seen.every((s) => s.intent || s.state === 'done')).toBe(true);
    expect(await governance.intents.exists({ _id: intentId })).toBeNull();
    const key = await db.collection('idempotency').findOne({ run });
    expect(key).toMatchObject({ state: 'done' });
    // A retry now replays the unknown outcome; it never runs the call.
    const retry = await governance.idempotency.begin(ws, 'cred:key_1:k1', 'parties.create', digest);
    expect(retry.kind).toBe('replay');
    expect(retry.kind === 'replay' && retry.answer.status).toBe(502);
  });

  it('one that provably wrote nothing: hands its key back while its intent still stands; the retry runs the call', async () => {
    const governance = new Governance(db);
    const { ws, digest, run, intentId, scope } = await deadAttempt(governance);
    const seen = await recoverWatching(governance, intentId, run);
    expect(seen).toHaveLength(1);
    // The entry is written while the intent stands; the intent is removed only after the key was handed back.
    expect(seen[0].intent).toBe(true);
    expect(await governance.intents.exists({ _id: intentId })).toBeNull();
    expect(await db.collection('idempotency').findOne({ run })).toBeNull();
    const retry = await governance.idempotency.begin(ws, 'cred:key_1:k1', 'parties.create', digest);
    expect(retry.kind).toBe('run');
    // The rerun is the same call: the records it creates take the dead attempt's ids (repeatableId), so
    // a write of the dead attempt the store applies only now collides with the rerun's.
    expect(retry.kind === 'run' && retry.scope).toBe(scope);
  });

  it('a key handed back and then used for another input: a new call, with a scope of its own', async () => {
    const governance = new Governance(db);
    const { ws, run, intentId, scope } = await deadAttempt(governance);
    await recoverWatching(governance, intentId, run);
    const other = await governance.idempotency.begin(ws, 'cred:key_1:k1', 'parties.create', inputDigest({ name: 'y' }));
    expect(other.kind).toBe('run');
    expect(other.kind === 'run' && other.scope).not.toBe(scope);
  });
});
