import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mongoose from 'mongoose';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';

// The guarantees of issue 4, each under the condition that breaks weak systems, over real HTTP
// against six real processes, a real MongoDB-protocol server and Redis.
let sys: TestSystem;
let owner: string;
let admin: string;
let workspace: string;
let mongo: mongoose.mongo.MongoClient;

beforeAll(async () => {
  sys = await startTestSystem('gov', OWN_SYSTEM_SETTINGS);
  const ws = await sys.workspace('Gobierno SAS');
  owner = ws.api_key;
  workspace = ws.workspace_id;
  // A person's key: only a person decides approvals (CONTRACT §10).
  admin = (await sys.person(workspace, 'admin', 'Admin')).api_key;
  mongo = await mongoose.mongo.MongoClient.connect(process.env.MONGO_URL!);
});
afterAll(async () => {
  await mongo?.close();
  await sys?.stop();
});

const governanceDb = () => mongo.db(sys.gatewayDb.replace(/_gateway$/, '_governance'));
const crmDb = () => mongo.db(sys.gatewayDb.replace(/_gateway$/, '_crm'));

// A condition, not a clock: 45 s is only the bound on a crowded machine (the suites run side by side).
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function policy(key: string, body: Record<string, unknown>): Promise<string> {
  const r = await sys.invoke('policies.create', body, key);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.output.policy.id;
}

// The four suites below run side by side (each test's waits — an approval's sweep, a 1.5 s window in which
// a rejected call would show — overlap the others'), and each keeps to what is its own: the approvals
// suite's tests share the first workspace's policies, so they run one after another (it.sequential); the
// idempotency keys are distinct; the ledger and lock-out tests each open a workspace. The test that kills
// crm runs after them, alone (the last suite): every other test calls crm.
describe.concurrent('Idempotency-Key', () => {
  it('runs 50 concurrent identical keyed calls once and replays the first answer to the rest', async () => {
    const input = { name: 'Idempotente SAS', kind: 'customer' };
    const answers = await Promise.all(Array.from({ length: 50 }, () => sys.invoke('parties.create', input, owner, { 'idempotency-key': 'burst-1' })));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    const bodies = new Set(answers.map((a) => JSON.stringify(a.body)));
    expect(bodies.size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    const stored = await crmDb().collection('parties').countDocuments({ workspace, name: 'Idempotente SAS' });
    expect(stored).toBe(1);
  });

  it('replays later, and refuses the same key with a different input', async () => {
    const first = await sys.invoke('parties.create', { name: 'Una Vez', kind: 'vendor' }, owner, { 'idempotency-key': 'k-2' });
    const again = await sys.invoke('parties.create', { name: 'Una Vez', kind: 'vendor' }, owner, { 'idempotency-key': 'k-2' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await sys.invoke('parties.create', { name: 'Otra Cosa', kind: 'vendor' }, owner, { 'idempotency-key': 'k-2' });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_conflict');
    // A refusal is an answer too: replayed as it was.
    const bad = await sys.invoke('parties.get', { id: 'pty_nope' }, owner, { 'idempotency-key': 'k-3' });
    const badAgain = await sys.invoke('parties.get', { id: 'pty_nope' }, owner, { 'idempotency-key': 'k-3' });
    expect([bad.status, badAgain.status]).toEqual([404, 404]);
    expect(badAgain.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a malformed key', async () => {
    const r = await sys.invoke('parties.list', {}, owner, { 'idempotency-key': 'x'.repeat(256) });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('invalid_input');
  });
});

describe.concurrent('autonomy policies and approvals', () => {
  it.sequential('holds a call (202), runs it exactly once when two people approve at the same moment', async () => {
    const id = await policy(owner, { name: 'Hold new projects', priority: 10, match: { tools: ['projects.create'] }, effect: 'hold' });
    const held = await sys.invoke('projects.create', { name: 'Retenido', key: 'HELD' }, owner);
    expect(held.status).toBe(202);
    expect(held.body).toEqual({ tool: 'projects.create', status: 'pending_approval', approval_id: expect.stringMatching(/^apr_/) });
    const approvalId = held.body.approval_id;

    // The requester cannot decide; an agent cannot decide.
    const own = await sys.invoke('approvals.decide', { id: approvalId, decision: 'approve' }, owner);
    expect(own.status).toBe(403);
    expect(own.body.code).toBe('policy_denied');

    const second = (await sys.person(workspace, 'admin', 'Segunda')).api_key;
    const [a, b] = await Promise.all([
      sys.invoke('approvals.decide', { id: approvalId, decision: 'approve' }, admin),
      sys.invoke('approvals.decide', { id: approvalId, decision: 'approve' }, second),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const done = await until(() => sys.invoke('approvals.get', { id: approvalId }, admin), (r) => r.body.output?.approval.status === 'executed');
    expect(done.body.output.approval).toMatchObject({ status: 'executed', result: { status: 200, body: { tool: 'projects.create', output: { project: { key: 'HELD' } } } } });
    const projects = await mongo.db(sys.gatewayDb.replace(/_gateway$/, '_projects')).collection('projects').countDocuments({ workspace, key: 'HELD' });
    expect(projects).toBe(1);
    await sys.invoke('policies.delete', { id }, owner);
  });

  it.sequential('never runs a rejected call', async () => {
    const id = await policy(owner, { name: 'Hold employees', priority: 10, match: { tools: ['employees.%'], risk: ['write'] }, effect: 'hold' });
    const held = await sys.invoke('employees.create', { name: 'No Contratado', document: { type: 'CC', number: '99887766' }, hire_date: '2026-03-01', position: 'X', salary: { amount: 200000000, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1 }, owner);
    expect(held.status).toBe(202);
    const r = await sys.invoke('approvals.decide', { id: held.body.approval_id, decision: 'reject', reason: 'no budget' }, admin);
    expect(r.body.output.approval).toMatchObject({ status: 'rejected', reason: 'no budget' });
    await new Promise((res) => setTimeout(res, 1500));
    const after = await sys.invoke('approvals.get', { id: held.body.approval_id }, admin);
    expect(after.body.output.approval.status).toBe('rejected');
    expect(await mongo.db(sys.gatewayDb.replace(/_gateway$/, '_payroll')).collection('employees').countDocuments({ workspace })).toBe(0);
    await sys.invoke('policies.delete', { id }, owner);
  });

  /** What a process killed between its intent and its ledger entry leaves behind: an approval `executing`, its intent. */
  async function diedMidRun(id: string, name: string) {
    const principal = { workspace, role: 'owner', actor: { type: 'api_key', id: 'key_dead' }, credential_id: 'key_dead', scopes: null, patterns: null };
    const gov = governanceDb();
    await gov.collection('approvals').insertOne({
      _id: id as never, workspace, subgraph: 'crm', status: 'executing', mode: 'hold', tool: 'parties.create', input: { name, kind: 'customer' },
      input_digest: 'x', idempotency_key: null, principal, requested_by: { type: 'api_key', id: 'key_dead', credential_id: 'key_dead', role: 'owner' },
      requested_at: new Date().toISOString(), decided_by: { type: 'api_key', id: 'key_admin' }, decided_at: new Date().toISOString(), reason: null, result: null,
      expires_at: new Date(Date.now() + 1e9).toISOString(), lease_until: new Date(Date.now() - 1000), executor: 'dead',
    });
    await gov.collection('intents').insertOne({
      _id: `int_${id}` as never, workspace, subgraph: 'crm', tool: 'parties.create', risk: 'write', input_digest: 'x', principal,
      approval_id: id, idempotency_key: null, started_at: new Date(Date.now() - 120_000),
    });
  }

  it.sequential('settles an approval whose executor died mid-run having written nothing: run again, once (issue 31, finding 6)', async () => {
    await diedMidRun('apr_interrupted', 'Quizá');
    const settled = await until(() => sys.invoke('approvals.get', { id: 'apr_interrupted' }, admin), (r) => r.body.output?.approval.status === 'executed');
    expect(settled.body.output.approval.status).toBe('executed');
    expect(await crmDb().collection('parties').countDocuments({ workspace, name: 'Quizá' })).toBe(1);
    const entries = (await sys.invoke('ledger.list', { tool: 'parties.create' }, owner)).body.output.rows as { outcome: string; approval_id?: string }[];
    expect(entries.filter((e) => e.approval_id === 'apr_interrupted').map((e) => e.outcome).sort()).toEqual(['interrupted', 'ok']);
  });

  it.sequential('settles an approval whose executor died mid-run after deleting something: failed with the reason, never run again', async () => {
    await diedMidRun('apr_interrupted_deleting', 'Quizá borró');
    // The mark a run's first delete leaves on its intent: its records cannot prove it did nothing.
    await governanceDb().collection('intents').updateOne({ _id: 'int_apr_interrupted_deleting' as never }, { $set: { deletes: true } });
    const settled = await until(() => sys.invoke('approvals.get', { id: 'apr_interrupted_deleting' }, admin), (r) => r.body.output?.approval.status === 'failed');
    expect(settled.body.output.approval.status).toBe('failed');
    expect(settled.body.output.approval.reason).toMatch(/stopped while running/);
    expect(await crmDb().collection('parties').countDocuments({ workspace, name: 'Quizá borró' })).toBe(0);
    const entries = (await sys.invoke('ledger.list', { tool: 'parties.create' }, owner)).body.output.rows as { outcome: string; approval_id?: string }[];
    expect(entries.filter((e) => e.approval_id === 'apr_interrupted_deleting').map((e) => e.outcome)).toEqual(['interrupted']);
  });

  it.sequential('asks first (403 approval_required), then runs the repeated call once with X-Approval-Id', async () => {
    const id = await policy(owner, { name: 'Ask for tasks', priority: 10, match: { tools: ['tasks.create'] }, effect: 'ask' });
    const project = await sys.invoke('projects.create', { name: 'Con Tareas', key: 'TAREAS' }, owner);
    const input = { project_id: project.body.output.project.id, title: 'Revisar' };
    const asked = await sys.invoke('tasks.create', input, owner);
    expect(asked.status).toBe(403);
    expect(asked.body).toMatchObject({ code: 'approval_required', approval_id: expect.stringMatching(/^apr_/) });
    const approvalId = asked.body.approval_id;
    // Before the approval: the id does not open the door.
    expect((await sys.invoke('tasks.create', input, owner, { 'x-approval-id': approvalId })).body.code).toBe('policy_denied');
    await sys.invoke('approvals.decide', { id: approvalId, decision: 'approve' }, admin);
    // Another input or another caller cannot use it.
    expect((await sys.invoke('tasks.create', { ...input, title: 'Otra' }, owner, { 'x-approval-id': approvalId })).body.code).toBe('policy_denied');
    expect((await sys.invoke('tasks.create', input, admin, { 'x-approval-id': approvalId })).body.code).toBe('policy_denied');
    const ran = await sys.invoke('tasks.create', input, owner, { 'x-approval-id': approvalId });
    expect(ran.status).toBe(200);
    const reused = await sys.invoke('tasks.create', input, owner, { 'x-approval-id': approvalId });
    expect(reused.status).toBe(403);
    expect(reused.body.code).toBe('policy_denied');
    expect((await sys.invoke('approvals.get', { id: approvalId }, admin)).body.output.approval.status).toBe('executed');
    await sys.invoke('policies.delete', { id }, owner);
  });

  it.sequential('denies by policy, and the highest priority wins', async () => {
    const deny = await policy(owner, { name: 'No new agents', priority: 5, match: { tools: ['agents.create'] }, effect: 'deny' });
    const r = await sys.invoke('agents.create', { name: 'Prohibido', model: 'embedded', instructions: 'y' }, owner);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('policy_denied');
    expect(r.body.error).toMatch(/No new agents/);
    const allow = await policy(owner, { name: 'Admins may', priority: 6, match: { tools: ['agents.create'], roles: ['admin'] }, effect: 'allow' });
    expect((await sys.invoke('agents.create', { name: 'Permitido', model: 'embedded', instructions: 'y' }, admin)).status).toBe(200);
    expect((await sys.invoke('agents.create', { name: 'Otra Vez No', model: 'embedded', instructions: 'y' }, owner)).status).toBe(403);
    await sys.invoke('policies.delete', { id: deny }, owner);
    await sys.invoke('policies.delete', { id: allow }, owner);
  });

  it.sequential('holds every non-read call of an agent by default when its workspace was opened by an agent', async () => {
    const opened = await sys.identity.createWorkspace({ name: 'Abierta Por Agente', ownerEmail: 'p@example.com', openedBy: 'agent' });
    // The agent sign-up creates this policy; here it is created the way sign-up does.
    const { createAgentWorkspaceDefaults } = await import('../gateway/src/governance-defaults.ts');
    await createAgentWorkspaceDefaults(sys.governanceFor(), opened.workspace_id);
    const write = await sys.invoke('parties.create', { name: 'Por El Agente', kind: 'customer' }, opened.api_key);
    expect(write.status).toBe(202);
    const read = await sys.invoke('parties.list', {}, opened.api_key);
    expect(read.status).toBe(200);
    const decide = await sys.invoke('approvals.decide', { id: write.body.approval_id, decision: 'approve' }, opened.api_key);
    expect(decide.status).toBe(403);
  });
});

describe.concurrent('the action ledger', () => {
  it('has one entry per authenticated attempt, refusals included, and none for unauthenticated ones', async () => {
    const ws = await sys.workspace('Libro Mayor SAS');
    await sys.invoke('parties.create', { name: 'Uno', kind: 'customer' }, ws.api_key);
    await sys.invoke('parties.create', { kind: 'customer' }, ws.api_key); // invalid_input at the gateway
    await sys.invoke('parties.nope', {}, ws.api_key); // unknown_tool
    await sys.invoke('parties.get', { id: 'pty_missing' }, ws.api_key); // not_found in crm
    await sys.invoke('parties.list', {}, 'nk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'); // not authenticated: no entry
    const listed = await sys.invoke('ledger.list', {}, ws.api_key);
    // The ledger.list call itself is written after its own answer is made.
    const outcomes = listed.body.output.rows.map((e: { tool: string; outcome: string }) => `${e.tool}:${e.outcome}`).reverse();
    expect(outcomes).toEqual(['parties.create:ok', 'parties.create:invalid_input', 'parties.nope:unknown_tool', 'parties.get:not_found']);
    const entry = listed.body.output.rows[0];
    expect(Object.keys(entry).sort()).toEqual(expect.arrayContaining(['id', 'at', 'workspace', 'actor', 'credential_id', 'tool', 'risk', 'input_digest', 'outcome', 'duration_ms', 'prev_hash', 'hash']));
    const verified = await sys.invoke('ledger.verify', {}, ws.api_key);
    expect(verified.body.output).toMatchObject({ ok: true, entries: 5 });
  });

  it('says where the chain breaks when an entry is edited, removed or reordered', async () => {
    const ws = await sys.workspace('Manipulada SAS');
    for (let i = 0; i < 4; i++) await sys.invoke('parties.create', { name: `P${i}`, kind: 'customer' }, ws.api_key);
    const entries = governanceDb().collection('ledger');
    expect((await sys.invoke('ledger.verify', {}, ws.api_key)).body.output.ok).toBe(true);

    await entries.updateOne({ workspace: ws.workspace_id, seq: 2 }, { $set: { outcome: 'policy_denied' } });
    const edited = (await sys.invoke('ledger.verify', {}, ws.api_key)).body.output;
    expect(edited).toMatchObject({ ok: false, broken_at: { seq: 2, reason: expect.stringMatching(/changed/) } });
    await entries.updateOne({ workspace: ws.workspace_id, seq: 2 }, { $set: { outcome: 'ok' } });
    expect((await sys.invoke('ledger.verify', {}, ws.api_key)).body.output.ok).toBe(true);

    const third = await entries.findOne({ workspace: ws.workspace_id, seq: 3 });
    await entries.deleteOne({ _id: third!._id });
    const removed = (await sys.invoke('ledger.verify', {}, ws.api_key)).body.output;
    expect(removed).toMatchObject({ ok: false, broken_at: { seq: 3 } });
    await entries.insertOne(third!);

    await entries.updateOne({ workspace: ws.workspace_id, seq: 3 }, { $set: { seq: 99 } });
    await entries.updateOne({ workspace: ws.workspace_id, seq: 4 }, { $set: { seq: 3 } });
    await entries.updateOne({ workspace: ws.workspace_id, seq: 99 }, { $set: { seq: 4 } });
    const reordered = (await sys.invoke('ledger.verify', {}, ws.api_key)).body.output;
    expect(reordered).toMatchObject({ ok: false, broken_at: { seq: 3 } });
  });

  it('streams the workspace ledger as server-sent events, and only that workspace', async () => {
    const ws = await sys.workspace('Eventos SAS');
    const other = await sys.workspace('Ajena SAS');
    const controller = new AbortController();
    const res = await fetch(`${sys.gatewayUrl}/v1/events`, { headers: { authorization: `Bearer ${ws.api_key}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const read = (async () => {
      const decoder = new TextDecoder();
      while (!text.includes('parties.create')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await sys.invoke('projects.create', { name: 'Ajeno', key: 'AJENO' }, other.api_key);
    await sys.invoke('parties.create', { name: 'Evento', kind: 'customer' }, ws.api_key);
    await Promise.race([read, new Promise((r) => setTimeout(r, 5000))]);
    controller.abort();
    const events = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(events).toContainEqual({ module: 'parties', tool: 'parties.create', outcome: 'ok', at: expect.any(String) });
    expect(events.some((e) => e.tool === 'projects.create')).toBe(false);
    expect((await fetch(`${sys.gatewayUrl}/v1/events`)).status).toBe(401);
  });
});

describe.concurrent('no policy locks the owners out (issue 31, finding 12; CONTRACT §10)', () => {
  const refusedBy = { ask: [403, 'approval_required'], hold: [202, undefined], deny: [403, 'policy_denied'] } as const;

  it.each(['ask', 'hold', 'deny'] as const)('a policy that %ss every call still lets the owner list policies, decide approvals and remove it', async (effect) => {
    const ws = await sys.workspace(`Cerrojo ${effect} SAS`);
    const ownerKey = ws.api_key;
    const ownerPerson = await sys.person(ws.workspace_id, 'owner', 'Dueña');
    const adminKey = (await sys.person(ws.workspace_id, 'admin', 'Administra')).api_key;
    const created = await sys.invoke('policies.create', { name: 'all', effect, match: {} }, ownerKey);
    expect(created.status).toBe(200);
    const policyId = created.body.output.policy.id;
    // The policy holds for everything else: the owner's other calls, and an admin's governance calls.
    const [status, code] = refusedBy[effect];
    const other = await sys.invoke('parties.list', {}, ownerKey);
    expect(other.status).toBe(status);
    if (code) expect(other.body.code).toBe(code);
    const adminList = await sys.invoke('policies.list', {}, adminKey);
    expect(adminList.status).toBe(status);
    // The owner's way to govern stays: reading the policies and the approvals, deciding, removing.
    for (const key of [ownerKey, ownerPerson.api_key]) {
      const listed = await sys.invoke('policies.list', {}, key);
      expect(listed.status).toBe(200);
      expect(listed.body.output.rows.map((p: { id: string }) => p.id)).toContain(policyId);
      expect((await sys.invoke('approvals.list', {}, key)).status).toBe(200);
    }
    if (effect !== 'deny') {
      const approvalId = adminList.body.approval_id;
      expect((await sys.invoke('approvals.get', { id: approvalId }, ownerKey)).status).toBe(200);
      const decided = await sys.invoke('approvals.decide', { id: approvalId, decision: 'reject', reason: 'cerrojo' }, ownerPerson.api_key);
      expect(decided.status).toBe(200);
      expect(decided.body.output.approval.status).toBe('rejected');
    }
    const removed = await sys.invoke('policies.delete', { id: policyId }, ownerKey);
    expect(removed.status).toBe(200);
    expect((await sys.invoke('parties.list', {}, ownerKey)).status).toBe(200);
  });

  it('a deny aimed at the owner role, at API keys, or made so by an update leaves the way too', async () => {
    const ws = await sys.workspace('Cerrojo Dirigido SAS');
    const ownerKey = ws.api_key;
    // policies.create is not part of the floor: the policy that denies owners everything comes last.
    const narrow = await policy(ownerKey, { name: 'narrow', priority: 1, match: { tools: ['projects.create'] }, effect: 'hold' });
    const atKeys = await policy(ownerKey, { name: 'keys', priority: 1000, match: { actors: ['api_key'], tools: ['policies.list', 'policies.update', 'policies.delete', 'approvals.%'] }, effect: 'deny' });
    const atOwners = await policy(ownerKey, { name: 'owners', priority: 1000, match: { roles: ['owner'] }, effect: 'deny' });
    expect((await sys.invoke('parties.list', {}, ownerKey)).body.code).toBe('policy_denied');
    expect((await sys.invoke('policies.list', {}, ownerKey)).status).toBe(200);
    // An update that widens a policy to everything, at the highest priority.
    expect((await sys.invoke('policies.update', { id: narrow, match: {}, effect: 'ask', priority: 10_000 }, ownerKey)).status).toBe(200);
    expect((await sys.invoke('policies.list', {}, ownerKey)).status).toBe(200);
    for (const id of [atOwners, atKeys, narrow]) expect((await sys.invoke('policies.delete', { id }, ownerKey)).status).toBe(200);
    expect((await sys.invoke('parties.list', {}, ownerKey)).status).toBe(200);
  });
});

describe('autonomy policies and approvals, while crm is down (alone: it kills crm)', () => {
  it('runs an approved call once when its subgraph comes back, not before, and never twice', async () => {
    const id = await policy(owner, { name: 'Hold parties', priority: 10, match: { tools: ['parties.create'] }, effect: 'hold' });
    const held = await sys.invoke('parties.create', { name: 'Tras La Caída', kind: 'customer' }, owner);
    expect(held.status).toBe(202);
    await sys.killSubgraph('crm');
    const decided = await sys.invoke('approvals.decide', { id: held.body.approval_id, decision: 'approve' }, admin);
    expect(decided.body.output.approval.status).toBe('approved');
    await new Promise((res) => setTimeout(res, 1000));
    expect((await sys.invoke('approvals.get', { id: held.body.approval_id }, admin)).body.output.approval.status).toBe('approved');
    await sys.restartSubgraph('crm');
    const done = await until(() => sys.invoke('approvals.get', { id: held.body.approval_id }, admin), (r) => r.body.output?.approval.status === 'executed');
    expect(done.body.output.approval.status).toBe('executed');
    await new Promise((res) => setTimeout(res, 1200));
    expect(await crmDb().collection('parties').countDocuments({ workspace, name: 'Tras La Caída' })).toBe(1);
    await sys.invoke('policies.delete', { id }, owner);
  });
});
