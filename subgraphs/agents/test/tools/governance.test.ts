import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';

// The refusals of the governance tools, at the subgraph that owns them.
let sg: TestSubgraph;
// A person's credential: only a person decides approvals (CONTRACT §10).
const owner = testPrincipal({ person: 'usr_owner' });

beforeAll(async () => {
  sg = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await sg?.close();
});

describe('policies', () => {
  it('creates, updates and deletes; refuses bad fields and unknown ids', async () => {
    const created = await sg.call('policies.create', { name: 'Hold big payments', priority: 5, match: { tools: ['payments.%'] }, conditions: { amount_over: 100000000 }, effect: 'hold' }, owner);
    expect(created.output.policy).toMatchObject({ id: expect.stringMatching(/^pol_/), effect: 'hold', conditions: { amount_over: 100000000 } });
    const id = created.output.policy.id;
    expect((await sg.call('policies.update', { id, effect: 'ask' }, owner)).output.policy.effect).toBe('ask');
    expect(await sg.call('policies.create', { name: 'x', match: {}, effect: 'maybe' }, owner)).toMatchObject({ code: 'invalid_input', field: '/effect' });
    expect(await sg.call('policies.create', { name: 'x', match: { tools: ['Payments.*'] }, effect: 'deny' }, owner)).toMatchObject({ code: 'invalid_input', field: '/match/tools/0' });
    expect(await sg.call('policies.update', { id }, owner)).toMatchObject({ code: 'invalid_input' });
    expect(await sg.call('policies.update', { id: 'pol_none', effect: 'deny' }, owner)).toMatchObject({ code: 'not_found' });
    // Another workspace neither sees nor changes it.
    const other = testPrincipal();
    expect((await sg.call('policies.list', {}, other)).output.rows).toEqual([]);
    expect(await sg.call('policies.delete', { id }, other)).toMatchObject({ code: 'not_found' });
    expect((await sg.call('policies.delete', { id }, owner)).output).toEqual({ deleted: true, id });
    expect(await sg.call('policies.delete', { id }, owner)).toMatchObject({ code: 'not_found' });
  });

  it('is out of reach of agents and viewers', async () => {
    const input = { name: 'x', match: {}, effect: 'allow' };
    expect(await sg.call('policies.create', input, { ...owner, role: 'agent', actor: { type: 'agent', id: 'key_a' } })).toMatchObject({ code: 'policy_denied' });
    expect(await sg.call('policies.create', input, { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
  });
});

describe('approvals', () => {
  it('refuses unknown ids, agents, and deciding twice', async () => {
    expect(await sg.call('approvals.get', { id: 'apr_none' }, owner)).toMatchObject({ code: 'not_found' });
    expect(await sg.call('approvals.decide', { id: 'apr_none', decision: 'approve' }, owner)).toMatchObject({ code: 'not_found' });
    expect(await sg.call('approvals.decide', { id: 'apr_none', decision: 'maybe' }, owner)).toMatchObject({ code: 'invalid_input', field: '/decision' });
    const requester = testPrincipal({ workspace: owner.workspace });
    const approval = await sg.governance.approvals.create({ id: 'apr_one', workspace: owner.workspace, subgraph: 'crm', mode: 'hold', tool: 'parties.create', input: {}, inputDigest: 'd', principal: requester });
    // An agent, even with an owner's reach over approvals, decides none.
    expect(await sg.call('approvals.decide', { id: approval._id, decision: 'approve' }, { ...owner, actor: { type: 'agent', id: 'key_agent' } })).toMatchObject({ code: 'policy_denied' });
    expect(await sg.call('approvals.decide', { id: approval._id, decision: 'approve' }, requester)).toMatchObject({ code: 'policy_denied' });
    // An owner's credential with no person behind it (the operator's key, or a key it made) decides none (issue 31, finding 3).
    const { person: _person, ...nobody } = owner;
    expect(await sg.call('approvals.decide', { id: approval._id, decision: 'approve' }, { ...nobody, credential_id: 'key_op', actor: { type: 'api_key', id: 'key_op' } })).toMatchObject({ code: 'policy_denied', message: expect.stringMatching(/no person/) });
    // A key made by the requester's person is the requester.
    const requesterPerson = testPrincipal({ workspace: owner.workspace, person: 'usr_requester' });
    const held = await sg.governance.approvals.create({ id: 'apr_two', workspace: owner.workspace, subgraph: 'crm', mode: 'hold', tool: 'parties.create', input: {}, inputDigest: 'd', principal: requesterPerson });
    expect(await sg.call('approvals.decide', { id: held._id, decision: 'approve' }, testPrincipal({ workspace: owner.workspace, person: 'usr_requester' }))).toMatchObject({ code: 'policy_denied', message: expect.stringMatching(/own request/) });
    expect((await sg.call('approvals.decide', { id: approval._id, decision: 'reject', reason: 'no' }, owner)).output.approval).toMatchObject({ status: 'rejected', reason: 'no' });
    expect(await sg.call('approvals.decide', { id: approval._id, decision: 'approve' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await sg.call('approvals.get', { id: approval._id }, testPrincipal())).toMatchObject({ code: 'not_found' });
    expect((await sg.call('approvals.list', { status: 'rejected' }, owner)).output.rows.map((a: { id: string }) => a.id)).toEqual(['apr_one']);
    expect((await sg.call('approvals.decide', { id: held._id, decision: 'reject' }, owner)).output.approval.status).toBe('rejected');
  });

  it('lists the inbox newest first by cursor, each approval once, filtered by status', async () => {
    const owner = testPrincipal({ person: 'usr_lister' });
    const requester = { ...owner, person: 'usr_requester', credential_id: 'key_req', actor: { type: 'api_key' as const, id: 'key_req' } };
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const made = await sg.governance.approvals.create({ id: `apr_p${i}_${owner.workspace.slice(3, 9)}`, workspace: owner.workspace, subgraph: 'crm', mode: 'hold', tool: 'parties.create', input: { i }, inputDigest: 'd', principal: requester });
      ids.unshift(made._id);
    }
    await sg.call('approvals.decide', { id: ids[1], decision: 'reject', reason: 'no' }, owner);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await sg.call('approvals.list', { limit: 3, ...(cursor ? { cursor } : {}) }, owner)).output;
      expect(page.rows.length).toBeLessThanOrEqual(3);
      seen.push(...page.rows.map((a: { id: string }) => a.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect((await sg.call('approvals.list', { status: 'pending' }, owner)).output.rows.map((a: { id: string }) => a.id)).toEqual(ids.filter((id) => id !== ids[1]));
    expect(await sg.call('approvals.list', { cursor: 'bm90LWEtY3Vyc29y.xxxx' }, owner)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
  });
});

describe('ledger', () => {
  it('lists this workspace’s entries and verifies the chain; refuses bad filters', async () => {
    const ws = testPrincipal();
    await sg.call('agents.list', {}, ws);
    await sg.call('agents.get', { id: 'agt_none' }, ws);
    const listed = await sg.call('ledger.list', {}, ws);
    expect(listed.output.rows.map((e: { tool: string; outcome: string }) => `${e.tool}:${e.outcome}`)).toEqual(['agents.get:not_found', 'agents.list:ok']);
    expect((await sg.call('ledger.verify', {}, ws)).output).toMatchObject({ ok: true, entries: 3 });
    expect(await sg.call('ledger.list', { from: 'yesterday' }, ws)).toMatchObject({ code: 'invalid_input', field: '/from' });
    expect(await sg.call('ledger.list', { tool: 'Agents' }, ws)).toMatchObject({ code: 'invalid_input', field: '/tool' });
    // A full walk answers in pages: a cursor continues one (with `full`), is honoured only as given out, and a full walk takes no receipts.
    const full = (await sg.call('ledger.verify', { full: true }, ws)).output;
    expect(full).toMatchObject({ ok: true, mode: 'full', checked_from: 0 });
    expect(full.next_cursor).toBeUndefined();
    expect(await sg.call('ledger.verify', { cursor: 'eyJzIjoxfQ.xxxx' }, ws)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await sg.call('ledger.verify', { full: true, cursor: 'eyJzIjoxfQ.xxxx' }, ws)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await sg.call('ledger.verify', { full: true, receipts: [] }, ws)).toMatchObject({ code: 'invalid_input', field: '/receipts' });
  });
});
