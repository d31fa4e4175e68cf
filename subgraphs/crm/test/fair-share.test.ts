import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSERTION_HEADER, OWNER_ANSWER_HEADER, signAssertion, TOOL_INVOKE_PATH } from '@cuadra/shared';
import { FairShare } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, testSigningKeys, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../src/server.ts';

// A subgraph keeps each workspace's fair share of it too (shared/src/fair-share.ts, issue 33): the
// same mechanism as the gateway's, here with 1 slot and 1 waiting place, so a burst of one
// workspace straight at the service is cut to its share whatever gateway sent it.
const share = new FairShare({ slots: 1, queue: 1, waitMs: 30_000 });
let crm: TestSubgraph;
// Pacing by time (the default share's): a second crm on the same database whose share reads a
// clock the test moves, so how busy each workspace has been is exactly what the test says.
let now = 0;
const paced = new FairShare({ slots: 4, queue: 64, waitMs: 30_000, pace: 1.5 }, () => now);
let pacedCrm: TestSubgraph;
beforeAll(async () => {
  [crm, pacedCrm] = await Promise.all([startTestSubgraph(name, createServer, { fairShare: share }), startTestSubgraph(name, createServer, { fairShare: paced })]);
});
afterAll(async () => {
  await Promise.all([crm?.close(), pacedCrm?.close()]);
});

describe("a workspace's fair share of a subgraph", () => {
  it('refuses the calls of a burst past 1 running and 1 waiting with rate_limited, runs none of them, and serves another workspace meanwhile', async () => {
    const busy = testPrincipal();
    const other = testPrincipal();
    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => crm.call('parties.create', { kind: 'customer', name: `Ráfaga ${i} SAS` }, busy)));
    const [mine] = await Promise.all([crm.call('parties.list', { limit: 5 }, other), crm.call('parties.create', { kind: 'customer', name: 'Vecina SAS' }, other)]);
    expect(mine.ok).toBe(true);
    const created = burst.filter((r) => r.ok);
    const refused = burst.filter((r) => !r.ok);
    // The first call runs and the second waits; the twelve arrive before the first is done.
    expect(created.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r).toMatchObject({ httpStatus: 429, code: 'rate_limited' });
    const stored = await crm.db.collection('parties').find({ workspace: busy.workspace }).project({ name: 1 }).toArray();
    expect(stored.map((p) => p.name).sort()).toEqual(created.map((r) => r.output.party.name).sort());
    expect(await crm.db.collection('parties').countDocuments({ workspace: other.workspace })).toBe(1);
  });

  it('answers a refusal at /invoke with Retry-After and not as an owner answer, so the gateway records it', async () => {
    const busy = testPrincipal();
    const assertion = signAssertion(busy, testSigningKeys().privateKey);
    const post = (i: number) => fetch(`${crm.url}${TOOL_INVOKE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion },
      body: JSON.stringify({ tool: 'parties.create', input: { kind: 'customer', name: `Directa ${i} SAS` } }),
    });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(i)));
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.headers.get(OWNER_ANSWER_HEADER)).toBeNull();
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await r.json()).toEqual({ error: expect.any(String), code: 'rate_limited' });
    }
    for (const r of answers.filter((a) => a.status !== 429)) {
      expect(r.status).toBe(200);
      expect(r.headers.get(OWNER_ANSWER_HEADER)).toBe('1');
      await r.arrayBuffer();
    }
    expect(await crm.db.collection('parties').countDocuments({ workspace: busy.workspace })).toBe(answers.length - refused.length);
  });

  it('gives up the turn of a caller who hung up while waiting: its call never runs and the workspace keeps its slot', async () => {
    const busy = testPrincipal();
    const slot = await share.acquire(busy.workspace); // the workspace's one slot, taken
    const hangUp = new AbortController();
    const gone = fetch(`${crm.url}${TOOL_INVOKE_PATH}`, {
      method: 'POST', signal: hangUp.signal,
      headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: signAssertion(busy, testSigningKeys().privateKey) },
      body: JSON.stringify({ tool: 'parties.create', input: { kind: 'customer', name: 'Colgada SAS' } }),
    }).catch((err: Error) => err);
    await expect.poll(() => share.load(busy.workspace).waiting).toBe(1);
    hangUp.abort();
    expect(await gone).toMatchObject({ name: 'AbortError' });
    // The service sees the hang-up and takes the call out of the line.
    await expect.poll(() => share.load(busy.workspace).waiting, { timeout: 2_000 }).toBe(0);
    slot();
    expect(share.load(busy.workspace)).toEqual({ running: 0, waiting: 0 });
    // The workspace's next call runs at once (a slot kept for the gone caller would make it wait 30 s and be refused).
    const after = await crm.call('parties.create', { kind: 'customer', name: 'Después SAS' }, busy);
    expect(after).toMatchObject({ ok: true });
    await expect.poll(() => share.busyWorkspaces).toBe(0);
    const stored = await crm.db.collection('parties').find({ workspace: busy.workspace }).project({ name: 1 }).toArray();
    expect(stored.map((p) => p.name)).toEqual(['Después SAS']);
  });

  it('admits another workspace\'s call ahead of a much busier workspace\'s: the busy one\'s call waits, undone, while the other\'s runs, and runs after it (pacing)', async () => {
    const busy = testPrincipal();
    const other = testPrincipal();
    // The busy workspace has held this crm for 2 s of the last moments (a call over HTTP, then a slot held while the clock moves).
    expect(await pacedCrm.call('parties.create', { kind: 'customer', name: 'Ocupada 1 SAS' }, busy)).toMatchObject({ ok: true });
    const slot = await paced.acquire(busy.workspace);
    now += 2_000;
    slot();
    // The other workspace's call is running (its slot held here, as its HTTP call's would be).
    const otherTurn = await paced.acquire(other.workspace);
    const second = pacedCrm.call('parties.create', { kind: 'customer', name: 'Ocupada 2 SAS' }, busy);
    await expect.poll(() => paced.load(busy.workspace).waiting).toBe(1);
    // Held back, not run: only its first party is stored.
    expect(await pacedCrm.db.collection('parties').countDocuments({ workspace: busy.workspace })).toBe(1);
    // The other workspace's next call goes ahead of it (it is not behind the busy one's).
    expect(await pacedCrm.call('parties.create', { kind: 'customer', name: 'Vecina tranquila SAS' }, other)).toMatchObject({ ok: true });
    expect(paced.load(busy.workspace)).toEqual({ running: 0, waiting: 1 });
    otherTurn();
    expect(await second).toMatchObject({ ok: true });
    const stored = await pacedCrm.db.collection('parties').find({ workspace: busy.workspace }).project({ name: 1 }).toArray();
    expect(stored.map((p) => p.name).sort()).toEqual(['Ocupada 1 SAS', 'Ocupada 2 SAS']);
    await expect.poll(() => paced.busyWorkspaces).toBe(0);
  });
});
