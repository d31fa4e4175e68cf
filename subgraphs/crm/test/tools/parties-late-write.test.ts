import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvedAndKilled, killedAndSettled, landBeforeRerun, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { createServer, name } from '../../src/server.ts';

// The double payment after a kill (subgraphs/invoices/test/payments-late-write.test.ts), for a party:
// a parties.create that can run again (keyed, or approved) whose process dies with its insert
// already sent. The store applies that insert late — after recovery settled the dead attempt as
// having written nothing (no record carried its run yet) and handed its key back, or put its
// approval back to approved. The rerun then made a second party under a new random id (a customer
// billed twice over, a vendor paid under two records), or — with a tax id — was refused `conflict`
// by its own party. Under the call's repeatable id (repeatableId, runs.ts) the two inserts collide
// on `_id` and the rerun answers the party that exists.
//
// The order is forced, not hoped for: the dead attempt's insert is held in this process until the
// test lets it reach the store (holdNextInsert).

let crm: TestSubgraph;

beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await crm?.close();
});

async function partiesOf(owner: Principal) {
  return crm.db.collection('parties').find({ workspace: owner.workspace }).toArray();
}

/** A keyed parties.create killed inside its insert, settled by recovery as having written nothing (its key handed back). */
const killed = (owner: Principal, input: Record<string, unknown>, key: string) => killedAndSettled(crm, owner, { tool: 'parties.create', collection: 'parties', input, key });

describe('a keyed parties.create whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('lands before the retry: the retry answers that party, and no second one is made', async () => {
    const owner = testPrincipal();
    const input = { name: 'Ferretería El Tornillo', kind: 'customer', email: 'compras@tornillo.example' };
    const held = await killed(owner, input, 'party-1');
    expect(await held.land()).toBe('stored');

    const retry = await crm.call('parties.create', input, owner, { idempotencyKey: 'party-1' });
    expect(retry.ok).toBe(true);
    expect((await partiesOf(owner)).map((p) => p._id)).toEqual([retry.output.party.id]);
    const listed = (await crm.output('parties.list', {}, owner)).rows.map((p: { id: string }) => p.id);
    expect(listed).toEqual([retry.output.party.id]);
  });

  it('lands after the retry made the party: refused as the same party, one party stays', async () => {
    const owner = testPrincipal();
    const input = { name: 'Ferretería El Tornillo', kind: 'customer' };
    const held = await killed(owner, input, 'party-2');
    const retry = await crm.call('parties.create', input, owner, { idempotencyKey: 'party-2' });
    expect(retry.ok).toBe(true);
    expect(await held.land()).toBe('duplicate');
    expect((await partiesOf(owner)).map((p) => p._id)).toEqual([retry.output.party.id]);
  });

  it('with a tax id: the retry answers its own party instead of refusing it as a duplicate NIT', async () => {
    const owner = testPrincipal();
    const input = { name: 'Tienda Andina SAS', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' } };
    const held = await killed(owner, input, 'party-3');
    expect(await held.land()).toBe('stored');
    const retry = await crm.call('parties.create', input, owner, { idempotencyKey: 'party-3' });
    expect(retry).toMatchObject({ ok: true });
    expect((await partiesOf(owner)).map((p) => p._id)).toEqual([retry.output.party.id]);
    // Another call (another key) creating the same NIT is still refused.
    expect(await crm.call('parties.create', input, owner, { idempotencyKey: 'party-4' })).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('an approved parties.create run again after its first attempt died inside its insert', () => {
  /** A held parties.create, approved; the sweep runs it and it dies with its insert held; the attempt is then aged as a kill leaves it. */
  const approvedKilled = (owner: Principal, input: Record<string, unknown>) => approvedAndKilled(crm, owner, { tool: 'parties.create', collection: 'parties', input });

  it('the late insert lands between recovery and the rerun: the rerun answers that party, the approval executed with it', async () => {
    const owner = testPrincipal();
    const { held, approvalId } = await approvedKilled(owner, { name: 'Distribuciones Caribe', kind: 'vendor' });
    // The sweep settles the dead attempt (nothing carries its run: the approval goes back to approved),
    // then runs the approved call again; the dead attempt's insert reaches the store in between.
    const landed = landBeforeRerun(crm, held);
    await crm.sweep();
    expect(landed()).toBe('stored');
    const approval = await crm.governance.approvals.get(owner.workspace, approvalId);
    expect(approval?.status).toBe('executed');
    const stored = await partiesOf(owner);
    expect(stored).toHaveLength(1);
    expect((approval?.result as { body?: { output?: { party?: { id?: string } } } } | null)?.body?.output?.party?.id).toBe(stored[0]._id);
  });

  it('the late insert lands after the rerun made the party: refused as the same party, one party stays', async () => {
    const owner = testPrincipal();
    const { held, approvalId } = await approvedKilled(owner, { name: 'Distribuciones Caribe', kind: 'vendor' });
    await crm.sweep();
    expect((await crm.governance.approvals.get(owner.workspace, approvalId))?.status).toBe('executed');
    expect(await held.land()).toBe('duplicate');
    expect(await partiesOf(owner)).toHaveLength(1);
  });
});
