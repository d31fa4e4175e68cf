// Issue 12's holes, reproduced and shown closed: secrets reach only the principal that ran the call
// (never a viewer through approvals, never another principal through a replayed Idempotency-Key,
// never at rest in plaintext); "nobody decides their own request" means the person, whatever app
// carries them; an admin cannot revoke an owner's key.
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormAgent, formFields, signInToNewApp } from './helpers/oauth.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let owner: string;
let workspace: string;
let admin: string;
let viewer: string;
let governanceDb: Connection;

beforeAll(async () => {
  sys = await startTestSystem('trust');
  ({ api_key: owner, workspace_id: workspace } = await sys.workspace('Confianza SAS'));
  admin = (await sys.key(workspace, 'admin')).api_key;
  viewer = (await sys.key(workspace, 'viewer')).api_key;
  governanceDb = await connectDatabase(process.env.MONGO_URL!, sys.gatewayDb.replace(/_gateway$/, '_governance'));
});
afterAll(async () => {
  await governanceDb?.close();
  await sys?.stop();
});

/** Every document of a governance collection, as text, to search for a secret at rest. */
async function rawText(collection: string): Promise<string> {
  return JSON.stringify(await governanceDb.collection(collection).find({}).toArray());
}

async function hold(tool: string): Promise<string> {
  const policy = await sys.invoke('policies.create', { name: `hold ${tool}`, priority: 50, match: { tools: [tool] }, effect: 'hold' }, owner);
  expect(policy.status).toBe(200);
  return policy.body.output.policy.id;
}

async function waitFor(id: string, key: string, status: string) {
  for (let i = 0; i < 100; i++) {
    const got = await sys.invoke('approvals.get', { id }, key);
    if (got.body.output?.approval.status === status) return got.body.output.approval;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`approval ${id} never reached ${status}`);
}

describe('hole 1 and 3: a held call\'s secret', () => {
  it('reaches its requester once; a viewer and an admin see it redacted; nothing at rest holds it', async () => {
    const policyId = await hold('api_keys.create');
    const held = await sys.invoke('api_keys.create', { name: 'robot', role: 'owner' }, owner);
    expect(held.status).toBe(202);
    const id = held.body.approval_id;
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, admin)).status).toBe(200);
    const seenByViewer = await waitFor(id, viewer, 'executed');
    expect(seenByViewer.result.body.output.api_key).toBe('[redacted]');
    expect(seenByViewer.result.body.output.key.role).toBe('owner');
    const listed = await sys.invoke('approvals.list', {}, viewer);
    expect(JSON.stringify(listed.body)).not.toMatch(/nk_[A-Za-z0-9]{20,}/);
    expect((await sys.invoke('approvals.get', { id }, admin)).body.output.approval.result.body.output.api_key).toBe('[redacted]');
    // The requester gets it, once.
    const mine = await sys.invoke('approvals.get', { id }, owner);
    const key = mine.body.output.approval.result.body.output.api_key;
    expect(key).toMatch(/^nk_[A-Za-z0-9]{32,}$/);
    expect((await sys.invoke('approvals.get', { id }, owner)).body.output.approval.result.body.output.api_key).toBe('[redacted]');
    // It works, and it is nowhere at rest in plaintext.
    expect((await sys.invoke('parties.list', {}, key)).status).toBe(200);
    for (const c of ['approvals', 'idempotency', 'ledger', 'intents']) expect(await rawText(c)).not.toContain(key);
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });

  it('an invitation link in a held members.invite is redacted for a viewer', async () => {
    const policyId = await hold('members.invite');
    const held = await sys.invoke('members.invite', { email: 'nueva@confianza.example', role: 'admin' }, owner);
    expect(held.status).toBe(202);
    expect((await sys.invoke('approvals.decide', { id: held.body.approval_id, decision: 'approve' }, admin)).status).toBe(200);
    const seen = await waitFor(held.body.approval_id, viewer, 'executed');
    expect(seen.result.body.output.invite_url).toBe('[redacted]');
    expect(await rawText('approvals')).not.toMatch(/claim\?token=/);
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });
});

describe('secret inputs of a held call', () => {
  it('are sealed in the stored approval, shown to nobody, and opened only to run the approved call', async () => {
    const policyId = await hold('einvoicing.configure');
    const technicalKey = `tk${Date.now()}SecretTechnicalKey`;
    const pin = 'Pin7723Secret';
    const held = await sys.invoke('einvoicing.configure', {
      issuer: { nit: '900373115-3', name: 'Confianza SAS' }, technical_key: technicalKey, software_pin: pin,
      numbering: { invoice: { prefix: 'SETT', from: 1, to: 5000 } },
    }, owner);
    expect(held.status).toBe(202);
    const id = held.body.approval_id;
    for (const who of [owner, admin, viewer]) {
      const seen = (await sys.invoke('approvals.get', { id }, who)).body.output.approval;
      expect(seen.input).toMatchObject({ technical_key: '[redacted]', software_pin: '[redacted]', issuer: { name: 'Confianza SAS' } });
    }
    const atRest = await rawText('approvals');
    expect(atRest).not.toContain(technicalKey);
    expect(atRest).not.toContain(pin);
    expect(atRest).toContain('$sealed');
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, admin)).status).toBe(200);
    // Ran with the secrets opened: a sealed box or "[redacted]" would fail the key's and PIN's patterns.
    const done = await waitFor(id, owner, 'executed');
    expect(done.result.status).toBe(200);
    expect(JSON.stringify(done)).not.toContain(technicalKey);
    expect(await rawText('approvals')).not.toContain(technicalKey);
    expect(await rawText('ledger')).not.toContain(technicalKey);
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });
});

describe('hole 2 and 3: Idempotency-Keys are scoped to the principal', () => {
  it('another principal using the owner\'s key string starts its own request and learns nothing of the first', async () => {
    const input = { name: 'scoped', role: 'viewer' };
    const first = await sys.invoke('api_keys.create', input, owner, { 'Idempotency-Key': 'shared-string-1' });
    expect(first.status).toBe(200);
    const ownersKey = first.body.output.api_key;
    const replay = await sys.invoke('api_keys.create', input, owner, { 'Idempotency-Key': 'shared-string-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.output.api_key).toBe(ownersKey);
    // The admin sees the key string in ledger.list and tries it.
    const ledger = await sys.invoke('ledger.list', { tool: 'api_keys.create' }, admin);
    expect(ledger.body.output.rows.some((e: { idempotency_key?: string }) => e.idempotency_key === 'shared-string-1')).toBe(true);
    const stolen = await sys.invoke('api_keys.create', input, admin, { 'Idempotency-Key': 'shared-string-1' });
    expect(stolen.status).toBe(200);
    expect(stolen.headers.get('idempotent-replayed')).toBeNull();
    expect(stolen.body.output.api_key).not.toBe(ownersKey);
    // Different input under the admin's own namespace is no conflict with the owner's.
    const other = await sys.invoke('api_keys.create', { name: 'other', role: 'viewer' }, viewer, { 'Idempotency-Key': 'shared-string-1' });
    expect(other.body.code).toBe('policy_denied');
    // At rest, the idempotency record holds the key only sealed.
    expect(await rawText('idempotency')).not.toContain(ownersKey);
    expect(await rawText('idempotency')).toContain('$sealed');
  });

  it('an admin still cannot mint an owner key, replay or not', async () => {
    const res = await sys.invoke('api_keys.create', { name: 'up', role: 'owner' }, admin, { 'Idempotency-Key': 'up-1' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('policy_denied');
  });
});

describe('hole 10: an admin cannot revoke an owner\'s API key', () => {
  it('is refused for the admin and allowed for an owner', async () => {
    const made = await sys.invoke('api_keys.create', { name: 'second owner', role: 'owner' }, owner);
    const id = made.body.output.key.id;
    const byAdmin = await sys.invoke('api_keys.revoke', { id }, admin);
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.code).toBe('policy_denied');
    expect((await sys.invoke('parties.list', {}, made.body.output.api_key)).status).toBe(200);
    expect((await sys.invoke('api_keys.revoke', { id }, owner)).status).toBe(200);
    expect((await sys.invoke('parties.list', {}, made.body.output.api_key)).status).toBe(401);
  });
});

describe('hole 4: nobody decides their own request, whatever app or key carries them', () => {
  const signIn = (person: { email: string; password: string }, clientName: string) => signInToNewApp(sys.gatewayUrl, person, clientName);

  it('refuses the same person through a second app and through a key they made; another person decides', async () => {
    const dora = { email: 'dora@confianza.example', password: 'dora contraseña 2026' };
    const invite = await sys.invoke('members.invite', { email: dora.email, role: 'admin', name: 'Dora' }, owner);
    const agent = new FormAgent(sys.gatewayUrl);
    const page = await agent.get(invite.body.output.invite_url);
    expect((await agent.post('/claim', { ...formFields(page.text), name: 'Dora', password: dora.password })).status).toBeLessThan(400);
    const appOne = await signIn(dora, 'Caja');
    const appTwo = await signIn(dora, 'Tablero');
    const doraKey = (await sys.invoke('api_keys.create', { name: 'dora script', role: 'admin' }, appOne)).body.output.api_key;
    const policyId = await hold('parties.create');
    const held = await sys.invoke('parties.create', { name: 'Dora pide', kind: 'customer' }, appOne);
    expect(held.status).toBe(202);
    const id = held.body.approval_id;
    for (const credential of [appOne, appTwo, doraKey]) {
      const self = await sys.invoke('approvals.decide', { id, decision: 'approve' }, credential);
      expect(self.status).toBe(403);
      expect(self.body.code).toBe('policy_denied');
    }
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, admin)).status).toBe(200);
    await waitFor(id, owner, 'executed');
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });
});
