// Honest outcomes (CONTRACT.md §9): `unavailable` only when a call provably never reached its
// owner; `outcome_unknown` when it reached it and no answer came back; a retry with the same
// Idempotency-Key answers the real outcome and never runs twice; no key stays stuck when nothing ran.
// The crm subgraph is SIGKILLed in the middle of a burst of keyed writes, and everything is counted.
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let ws: string;
let crmDb: Connection;
// Recovery settles an attempt whose process died after this long (the default is 60 s; OWN_SYSTEM_SETTINGS).
const LEASE_MS = Number(OWN_SYSTEM_SETTINGS.CUADRA_ACTION_LEASE_MS);

beforeAll(async () => {
  sys = await startTestSystem('outcomes', OWN_SYSTEM_SETTINGS);
  ({ api_key: key, workspace_id: ws } = await sys.workspace('Outcomes SAS'));
  crmDb = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb.replace(/_gateway$/, '_crm'));
});

afterAll(async () => {
  await crmDb?.close();
  await sys?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function partiesNamed(name: string): Promise<number> {
  return crmDb.collection('parties').countDocuments({ name });
}

describe('a subgraph killed in the middle of a burst of keyed writes', () => {
  it('answers unavailable only for calls that did nothing, and every key ends with its real outcome, once', async () => {
    const total = 120;
    const first = new Map<string, { status: number; code?: string }>();
    let sent = 0;
    let killed = false;
    const keyOf = (i: number) => `burst-${i}`;
    const one = async (i: number) => {
      const res = await sys.invoke('parties.create', { name: `Burst ${i}`, kind: 'customer' }, key, { 'Idempotency-Key': keyOf(i) });
      first.set(keyOf(i), { status: res.status, code: res.body?.code });
    };
    // 12 at a time; crm dies once a third of the calls are out, and comes back a moment later.
    const workers = Array.from({ length: 12 }, async () => {
      for (;;) {
        const i = sent++;
        if (i >= total) return;
        if (i === Math.floor(total / 3) && !killed) {
          killed = true;
          void sys.killSubgraph('crm').then(async () => {
            await sleep(300);
            await sys.restartSubgraph('crm');
          });
        }
        await one(i);
      }
    });
    await Promise.all(workers);
    // Wait until crm is back (the restart may still be under way).
    for (let t = 0; t < 100 && (await sys.fetch('/healthz')).status !== 200; t++) await sleep(200);

    const counts = { ok: 0, unavailable: 0, outcome_unknown: 0, other: 0 };
    let unavailableButDone = 0;
    let okButMissing = 0;
    for (let i = 0; i < total; i++) {
      const answer = first.get(keyOf(i))!;
      const n = await partiesNamed(`Burst ${i}`);
      if (answer.status === 200) {
        counts.ok++;
        if (n !== 1) okButMissing++;
      } else if (answer.code === 'unavailable') {
        counts.unavailable++;
        if (n !== 0) unavailableButDone++;
      } else if (answer.code === 'outcome_unknown') counts.outcome_unknown++;
      else counts.other++;
    }
    console.log('[outcomes] first answers', counts, { unavailableButDone, okButMissing });
    expect(counts.ok + counts.unavailable + counts.outcome_unknown + counts.other).toBe(total);
    // Some calls must have been caught by the kill, or the test proved nothing.
    expect(counts.unavailable + counts.outcome_unknown).toBeGreaterThan(0);
    expect(counts.other).toBe(0);
    expect(unavailableButDone).toBe(0);
    expect(okButMissing).toBe(0);

    // Retry every call that had no 200 with its own key, until each gives a settled answer.
    await sleep(LEASE_MS + 1_500);
    const finals = new Map<string, { status: number; code?: string; replayed: boolean }>();
    for (let round = 0; round < 10; round++) {
      const pending = [...first.keys()].filter((k) => first.get(k)!.status !== 200 && !finals.has(k));
      if (pending.length === 0) break;
      await Promise.all(pending.map(async (k) => {
        const i = Number(k.slice('burst-'.length));
        const res = await sys.invoke('parties.create', { name: `Burst ${i}`, kind: 'customer' }, key, { 'Idempotency-Key': k });
        // 409 while an attempt still holds the key (it settles within the lease), 429 when this burst of
        // retries is past the workspace's fair share (come back later: nothing ran); anything else is final.
        if (res.status !== 409 && res.status !== 429 && res.body?.code !== 'unavailable') finals.set(k, { status: res.status, code: res.body?.code, replayed: res.headers.get('idempotent-replayed') === 'true' });
      }));
      if (finals.size < [...first.values()].filter((a) => a.status !== 200).length) await sleep(LEASE_MS);
    }
    const retried = [...first.values()].filter((a) => a.status !== 200).length;
    const stuck = retried - finals.size;
    const finalCounts = { ran_or_replayed_ok: 0, outcome_unknown: 0 };
    for (const f of finals.values()) {
      if (f.status === 200) finalCounts.ran_or_replayed_ok++;
      else if (f.code === 'outcome_unknown') finalCounts.outcome_unknown++;
    }
    console.log('[outcomes] after retries', { retried, stuck, ...finalCounts });
    expect(stuck).toBe(0);
    for (const f of finals.values()) expect(f.status === 200 || f.code === 'outcome_unknown').toBe(true);
    // An outcome_unknown is final only for a call whose records show it wrote something (issue 31,
    // finding 6): one that provably did nothing was run by its retry.
    let unknownButNothingWritten = 0;
    for (const [k, f] of finals) if (f.code === 'outcome_unknown' && (await partiesNamed(`Burst ${k.slice('burst-'.length)}`)) === 0) unknownButNothingWritten++;
    console.log('[outcomes] final outcome_unknown with nothing written', unknownButNothingWritten);
    expect(unknownButNothingWritten).toBe(0);

    // Nothing doubled; every key that ended 200 has its party; every party has its ledger entry.
    let doubled = 0;
    let settledOkButMissing = 0;
    for (let i = 0; i < total; i++) {
      const n = await partiesNamed(`Burst ${i}`);
      if (n > 1) doubled++;
      const f = finals.get(keyOf(i));
      if (f?.status === 200 && n !== 1) settledOkButMissing++;
    }
    const ledger = sys.governanceFor().ledger.entries;
    const parties = await crmDb.collection('parties').find({ name: /^Burst / }, { projection: { name: 1 } }).toArray();
    let withoutEntry = 0;
    for (const p of parties) {
      const k = `burst-${String(p.name).slice('Burst '.length)}`;
      const entry = await ledger.findOne({ idempotency_key: k, tool: 'parties.create', outcome: { $in: ['ok', 'interrupted', 'outcome_unknown'] } }).lean();
      if (!entry) withoutEntry++;
    }
    console.log('[outcomes] data', { parties: parties.length, doubled, settledOkButMissing, withoutEntry });
    expect(doubled).toBe(0);
    expect(settledOkButMissing).toBe(0);
    expect(withoutEntry).toBe(0);
    expect((await sys.governanceFor().ledger.verify(ws)).ok).toBe(true);
  }, 180_000);
});

describe('a keyed attempt whose process died before it acted', () => {
  it('is taken over by a retry once its lease passes: the key is not stuck and the call runs once', async () => {
    const governance = sys.governanceFor();
    const { workspace_id, api_key } = await sys.workspace('Stuck key SAS');
    // What a process killed right after taking the key leaves behind: a running record and no intent.
    const { idempotencyScope, inputDigest } = await import('@cuadra/shared');
    const principal = await sys.identity.authenticateApiKey(api_key);
    const input = { name: 'Never started', kind: 'customer' };
    // The key as the owner stores it: in the caller's own namespace (CONTRACT.md §9).
    const started = await governance.idempotency.begin(workspace_id, `${idempotencyScope(principal)}:died-early`, 'parties.create', inputDigest(input));
    if (started.kind !== 'run') throw new Error('expected to hold the key');
    // The lease as the dead crm process would have set it (this test process keeps the 60 s default).
    await governance.db.collection('idempotency').updateOne({ run: started.run }, { $set: { lease_until: new Date(Date.now() + LEASE_MS) } });
    // Within the lease the key is held: the retry waits; once the lease passes with no intent
    // written, the action provably never started, and the retry takes the key over and runs it.
    const t0 = Date.now();
    const retry = await sys.invoke('parties.create', input, api_key, { 'Idempotency-Key': 'died-early' });
    expect(retry.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(LEASE_MS - 500);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await partiesNamed('Never started')).toBe(1);
    const again = await sys.invoke('parties.create', input, api_key, { 'Idempotency-Key': 'died-early' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await partiesNamed('Never started')).toBe(1);
  }, 60_000);

  it('a keyed attempt that died while acting and wrote nothing is run by its retry, once (issue 31, finding 6)', async () => {
    const governance = sys.governanceFor();
    const { workspace_id, api_key } = await sys.workspace('Died acting SAS');
    const principal = await sys.identity.authenticateApiKey(api_key);
    const { idempotencyScope, inputDigest } = await import('@cuadra/shared');
    const input = { name: 'Maybe made', kind: 'customer' };
    const started = await governance.idempotency.begin(workspace_id, `${idempotencyScope(principal)}:died-acting`, 'parties.create', inputDigest(input));
    if (started.kind !== 'run') throw new Error('expected to hold the key');
    await governance.db.collection('idempotency').updateOne({ run: started.run }, { $set: { lease_until: new Date(Date.now() + LEASE_MS) } });
    // The intent of its action exists: the handler may have acted before the process died.
    await governance.intents.create({
      _id: `int_${started.run}`, workspace: workspace_id, subgraph: 'crm', tool: 'parties.create', risk: 'write', input_digest: inputDigest(input),
      principal, approval_id: null, idempotency_key: 'died-acting', started_at: new Date(), executor: 'dead-process',
    });
    // No record of crm carries its run: it provably wrote nothing. The retry runs it (well within the
    // lease: the intent names a process with no heartbeat, so recovery settles it in seconds).
    const t0 = Date.now();
    const retry = await sys.invoke('parties.create', input, api_key, { 'Idempotency-Key': 'died-acting' });
    expect(retry.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(LEASE_MS + 8_000);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await partiesNamed('Maybe made')).toBe(1);
    // The party it made carries the stamp of the run that made it.
    const made = await crmDb.collection('parties').findOne({ name: 'Maybe made' });
    expect(made!._runs).toHaveLength(1);
    expect(made!._runs[0]).toMatch(/^int_[0-9a-f]{24}$/);
    expect(made!._runs[0]).not.toBe(`int_${started.run}`);
    const again = await sys.invoke('parties.create', input, api_key, { 'Idempotency-Key': 'died-acting' });
    expect(again).toMatchObject({ status: 200 });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.output.party.id).toBe(retry.body.output.party.id);
    expect(await partiesNamed('Maybe made')).toBe(1);
    // The interrupted attempt has its entry, once; the run that made the party its own; the chain holds.
    const entries = await governance.ledger.entries.find({ workspace: workspace_id, idempotency_key: 'died-acting' }).sort({ seq: 1 }).lean();
    expect(entries.map((e) => [e.outcome, e.replayed ?? false])).toEqual([['interrupted', false], ['ok', false], ['ok', true]]);
    expect((await governance.ledger.verify(workspace_id)).ok).toBe(true);
  }, 60_000);

  /** A keyed attempt whose process died after its handler wrote `records` (stamped with its run), as crm left it: the records, then its intent. */
  async function diedAfterWriting(label: string, records: number) {
    const governance = sys.governanceFor();
    const { workspace_id, api_key } = await sys.workspace(`${label} SAS`);
    const principal = await sys.identity.authenticateApiKey(api_key);
    const { idempotencyScope, inputDigest } = await import('@cuadra/shared');
    const input = { name: label, kind: 'customer' };
    const key = label.replaceAll(' ', '-');
    const started = await governance.idempotency.begin(workspace_id, `${idempotencyScope(principal)}:${key}`, 'parties.create', inputDigest(input));
    if (started.kind !== 'run') throw new Error('expected to hold the key');
    // What the handler wrote before its process died, each write stamped with its run (made here
    // by the tool itself, without a key, then stamped as the interrupted run's write would be).
    const ids: string[] = [];
    for (let i = 0; i < records; i++) {
      const made = await sys.invoke('parties.create', { ...input, name: i === 0 ? label : `${label} ${i}` }, api_key);
      expect(made.status).toBe(200);
      ids.push(made.body.output.party.id);
      await crmDb.collection('parties').updateOne({ _id: made.body.output.party.id }, { $set: { _runs: [`int_${started.run}`] } });
    }
    // The intent last: crm's recovery sweep settles an intent of a dead executor half a second after it
    // started, and one written before the records would be settled from whatever was stamped by then.
    await governance.intents.create({
      _id: `int_${started.run}`, workspace: workspace_id, subgraph: 'crm', tool: 'parties.create', risk: 'write', input_digest: inputDigest(input),
      principal, approval_id: null, idempotency_key: key, started_at: new Date(), executor: 'dead-process',
    });
    const retry = await sys.invoke('parties.create', input, api_key, { 'Idempotency-Key': key });
    const entries = await governance.ledger.entries.find({ workspace: workspace_id, idempotency_key: key, outcome: 'interrupted' }).lean();
    expect(entries).toHaveLength(1);
    expect((await governance.ledger.verify(workspace_id)).ok).toBe(true);
    return { retry, ids, api_key };
  }

  it('a keyed attempt that died after writing its one record answers that record, read back, and never runs again', async () => {
    const { retry, ids, api_key } = await diedAfterWriting('Made before dying', 1);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.output.party).toMatchObject({ id: ids[0], name: 'Made before dying', kind: 'customer' });
    // The same shape as the answer it would have given: parties.create's output, nothing of parties.get's besides.
    expect(Object.keys(retry.body.output)).toEqual(['party']);
    expect(await partiesNamed('Made before dying')).toBe(1);
    const again = await sys.invoke('parties.create', { name: 'Made before dying', kind: 'customer' }, api_key, { 'Idempotency-Key': 'Made-before-dying' });
    expect(again.body).toEqual(retry.body);
  }, 60_000);

  it('a keyed attempt that died after writing more than one record stays outcome_unknown (what it answered cannot be proven), never run again', async () => {
    const { retry } = await diedAfterWriting('Made twice before dying', 2);
    expect(retry.status).toBe(502);
    expect(retry.body.code).toBe('outcome_unknown');
    expect(await partiesNamed('Made twice before dying')).toBe(1);
    expect(await partiesNamed('Made twice before dying 1')).toBe(1);
  }, 60_000);
});
