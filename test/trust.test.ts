// Issue 12's holes, reproduced and shown closed: secrets reach only the principal that ran the call
// (never a viewer through approvals, never another principal through a replayed Idempotency-Key,
// never at rest in plaintext); "nobody decides their own request" means the person, whatever app
// carries them; an admin cannot revoke an owner's key.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { connectDatabase } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormAgent, formFields, signInToNewApp } from './helpers/oauth.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { OWN_SYSTEM_SETTINGS, startTestSystem, type TestSystem } from './helpers/system.ts';
import { repoRoot } from '../scripts/infra.ts';
import { EVENT_WAIT_MS } from './helpers/until.ts';

let sys: TestSystem;
let owner: string;
let workspace: string;
let admin: string;
let viewer: string;
/** A person's key (an admin): only a person decides approvals (CONTRACT §10). */
let approver: string;
let governanceDb: Connection;
// People are shared by every file of the system: addresses no other test uses.
const mail = {
  nueva: uniqueAddress('nueva@confianza.example'),
  dora: uniqueAddress('dora@confianza.example'),
};

beforeAll(async () => {
  sys = await startTestSystem('trust', OWN_SYSTEM_SETTINGS);
  ({ api_key: owner, workspace_id: workspace } = await sys.workspace('Confianza SAS'));
  admin = (await sys.key(workspace, 'admin')).api_key;
  viewer = (await sys.key(workspace, 'viewer')).api_key;
  approver = (await sys.person(workspace, 'admin', 'Aprobadora')).api_key;
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
  for (const deadline = Date.now() + EVENT_WAIT_MS; Date.now() < deadline;) {
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
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, approver)).status).toBe(200);
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
    const held = await sys.invoke('members.invite', { email: mail.nueva, role: 'admin' }, owner);
    expect(held.status).toBe(202);
    expect((await sys.invoke('approvals.decide', { id: held.body.approval_id, decision: 'approve' }, approver)).status).toBe(200);
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
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, approver)).status).toBe(200);
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
    const dora = { email: mail.dora, password: 'dora contraseña 2026' };
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
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, approver)).status).toBe(200);
    await waitFor(id, owner, 'executed');
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });
});

// ------------------------------------------------------------------------------------------------
// Issue 31, finding 1: a secret input is declared in its tool's schema (`writeOnly`), wherever it is,
// and never shown or kept in plain text — the payroll software PIN leaked through a held call.

/** Canonical JSON as the contract defines it (keys sorted at every depth), written here independently of the product's. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value as object).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
}
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every log line the system's services wrote for this test file. */
function logText(): string {
  const dir = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'logs', sys.gatewayDb.replace(/_gateway$/, ''));
  if (!existsSync(dir)) return '';
  return readdirSync(dir).map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
}

const EPAYROLL = (pin: string) => ({
  nit: '900373115', company_name: 'Confianza SAS', department: '11', municipality: '11001', address: 'Calle 1 # 2-3',
  software_id: 'soft-nomina-0001', software_pin: pin, prefix: 'NE',
});

describe('issue 31, finding 1: the payroll software PIN of a held call', () => {
  it('is [redacted] for everyone in approvals.get and approvals.list, sealed at rest, and opened only to run the approved call', async () => {
    const policyId = await hold('payroll.epayroll_configure');
    const pin = '48213';
    const held = await sys.invoke('payroll.epayroll_configure', EPAYROLL(pin), owner);
    expect(held.status).toBe(202);
    const id = held.body.approval_id;
    for (const who of [viewer, admin, owner, approver]) {
      const seen = (await sys.invoke('approvals.get', { id }, who)).body.output.approval;
      expect(seen.input).toMatchObject({ software_pin: '[redacted]', company_name: 'Confianza SAS' });
      const listed = await sys.invoke('approvals.list', {}, who);
      expect(JSON.stringify(listed.body)).not.toContain(`"${pin}"`);
    }
    const atRest = await rawText('approvals');
    expect(atRest).not.toContain(`"${pin}"`);
    expect(atRest).toContain('$sealed');
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, approver)).status).toBe(200);
    // It ran with the PIN opened: the settings say a PIN is set.
    const done = await waitFor(id, owner, 'executed');
    expect(done.result).toMatchObject({ status: 200, body: { output: { settings: { software_pin_set: true } } } });
    for (const c of ['approvals', 'idempotency', 'ledger', 'intents']) expect(await rawText(c)).not.toContain(`"${pin}"`);
    expect(logText()).not.toContain(pin);
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });

  it('cannot be found by hashing guesses against the ledger\'s input digest', async () => {
    // A viewer sees the held input without its PIN (approvals.get) and the attempt's digest (ledger.list):
    // with a plain SHA-256 of the input, trying every 5-digit PIN would find it in a moment.
    const policyId = await hold('payroll.epayroll_configure');
    const pin = '73519';
    const held = await sys.invoke('payroll.epayroll_configure', EPAYROLL(pin), owner);
    const seen = (await sys.invoke('approvals.get', { id: held.body.approval_id }, viewer)).body.output.approval;
    const rows = (await sys.invoke('ledger.list', { tool: 'payroll.epayroll_configure' }, viewer)).body.output.rows as { approval_id?: string; input_digest: string }[];
    const digest = rows.find((r) => r.approval_id === held.body.approval_id)!.input_digest;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const guess = (candidate: string) => sha256Hex(canonical({ ...seen.input, software_pin: candidate }));
    expect(guess(pin)).not.toBe(digest);
    // Equal inputs still give equal digests (idempotency and ask approvals compare them): same key, same PIN → replayed.
    const input = EPAYROLL('11111');
    const first = await sys.invoke('payroll.epayroll_configure', input, owner, { 'idempotency-key': 'pin-digest-1' });
    const again = await sys.invoke('payroll.epayroll_configure', input, owner, { 'idempotency-key': 'pin-digest-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const otherPin = await sys.invoke('payroll.epayroll_configure', EPAYROLL('22222'), owner, { 'idempotency-key': 'pin-digest-1' });
    expect(otherPin.body.code).toBe('idempotency_conflict');
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });

  it('held in plain text by an approval stored before the declaration, is sealed when the owning service starts', async () => {
    // The database as an earlier version left it: a pending approval with the PIN in plain text, and no migration marker.
    const pin = '60628';
    const principal = { workspace, role: 'owner', actor: { type: 'api_key', id: 'key_legacy' }, credential_id: 'key_legacy', scopes: null, patterns: null };
    await governanceDb.collection('approvals').insertOne({
      _id: 'apr_legacy_pin' as never, workspace, subgraph: 'payroll', status: 'pending', mode: 'hold', tool: 'payroll.epayroll_configure', input: EPAYROLL(pin),
      input_digest: sha256Hex(canonical(EPAYROLL(pin))), idempotency_key: null, principal,
      requested_by: { type: 'api_key', id: 'key_legacy', credential_id: 'key_legacy', role: 'owner' }, requested_at: new Date().toISOString(),
      decided_by: null, decided_at: null, reason: null, result: null, expires_at: new Date(Date.now() + 86_400_000).toISOString(), lease_until: null, executor: null,
    });
    await governanceDb.collection('migrations').deleteMany({ _id: { $regex: '^approval-inputs-sealed:payroll:' } as never });
    expect(await rawText('approvals')).toContain(`"${pin}"`);
    await sys.killSubgraph('payroll');
    await sys.restartSubgraph('payroll');
    expect(await rawText('approvals')).not.toContain(`"${pin}"`);
    const seen = (await sys.invoke('approvals.get', { id: 'apr_legacy_pin' }, viewer)).body.output.approval;
    expect(seen.input.software_pin).toBe('[redacted]');
    // Sealed for that approval: approved, it runs with the PIN opened.
    expect((await sys.invoke('approvals.decide', { id: 'apr_legacy_pin', decision: 'approve' }, approver)).status).toBe(200);
    const done = await waitFor('apr_legacy_pin', viewer, 'executed');
    expect(done.result).toMatchObject({ status: 200, body: { output: { settings: { software_pin_set: true } } } });
  });
});

describe('issue 31, finding 1: plain secrets of any tool in stored approvals', () => {
  it('are sealed by a gateway before it listens (every caller reaches approvals through one), whichever service owns the tool', async () => {
    const technicalKey = 'fc8eac422eba16e22ffd8c6f94b3f40aLegacy';
    const input = { issuer: { nit: '900373115-3', name: 'Confianza SAS' }, technical_key: technicalKey, software_pin: '31415', numbering: { invoice: { prefix: 'SETT', from: 1, to: 5000 } } };
    const principal = { workspace, role: 'owner', actor: { type: 'api_key', id: 'key_legacy' }, credential_id: 'key_legacy', scopes: null, patterns: null };
    await governanceDb.collection('approvals').insertOne({
      _id: 'apr_legacy_key' as never, workspace, subgraph: 'invoices', status: 'pending', mode: 'hold', tool: 'einvoicing.configure', input,
      input_digest: sha256Hex(canonical(input)), idempotency_key: null, principal,
      requested_by: { type: 'api_key', id: 'key_legacy', credential_id: 'key_legacy', role: 'owner' }, requested_at: new Date().toISOString(),
      decided_by: null, decided_at: null, reason: null, result: null, expires_at: new Date(Date.now() + 86_400_000).toISOString(), lease_until: null, executor: null,
    });
    await governanceDb.collection('migrations').deleteMany({ _id: { $regex: '^approval-inputs-sealed:' } as never });
    expect(await rawText('approvals')).toContain(technicalKey);
    // No subgraph restarts: a gateway starting is enough.
    await sys.startAnotherGateway();
    const atRest = await rawText('approvals');
    expect(atRest).not.toContain(technicalKey);
    expect(atRest).not.toContain('"31415"');
    const seen = (await sys.invoke('approvals.get', { id: 'apr_legacy_key' }, viewer)).body.output.approval;
    expect(seen.input).toMatchObject({ technical_key: '[redacted]', software_pin: '[redacted]', issuer: { name: 'Confianza SAS' } });
    expect((await sys.invoke('approvals.decide', { id: 'apr_legacy_key', decision: 'reject', reason: 'prueba' }, approver)).status).toBe(200);
  });
});

// ------------------------------------------------------------------------------------------------
// Issue 31, finding 3: "nobody decides their own request" follows the chain of creation, and only a
// person decides (CONTRACT §10).
describe('issue 31, finding 3: self-approval through a chain of credentials', () => {
  it('the operator\'s key (no person), a key it made, and a key that key made never decide', async () => {
    const made = await sys.invoke('api_keys.create', { name: 'hecha por el operador', role: 'admin' }, owner);
    expect(made.status).toBe(200);
    const child = made.body.output.api_key;
    const grandchild = (await sys.invoke('api_keys.create', { name: 'hecha por la hecha', role: 'admin' }, child)).body.output.api_key;
    const policyId = await hold('parties.create');
    const held = await sys.invoke('parties.create', { name: 'El operador pide', kind: 'customer' }, owner);
    expect(held.status).toBe(202);
    const id = held.body.approval_id;
    for (const credential of [child, grandchild, owner, admin]) {
      const refused = await sys.invoke('approvals.decide', { id, decision: 'approve' }, credential);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('policy_denied');
    }
    expect((await sys.invoke('approvals.get', { id }, owner)).body.output.approval.status).toBe('pending');
    // A person (not the requester's) decides.
    expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, approver)).status).toBe(200);
    await waitFor(id, owner, 'executed');
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });

  it('a key made by a person\'s key is that person: neither decides the other\'s requests; another person does', async () => {
    const paula = await sys.person(workspace, 'admin', 'Paula');
    const child = (await sys.invoke('api_keys.create', { name: 'de Paula', role: 'admin' }, paula.api_key)).body.output.api_key;
    const grandchild = (await sys.invoke('api_keys.create', { name: 'de la de Paula', role: 'admin' }, child)).body.output.api_key;
    const policyId = await hold('parties.create');
    const byGrandchild = (await sys.invoke('parties.create', { name: 'Pide la nieta', kind: 'customer' }, grandchild)).body.approval_id;
    const byPaula = (await sys.invoke('parties.create', { name: 'Pide Paula', kind: 'customer' }, paula.api_key)).body.approval_id;
    for (const [id, deciders] of [[byGrandchild, [paula.api_key, child]], [byPaula, [grandchild, child]]] as const) {
      for (const credential of deciders) {
        const refused = await sys.invoke('approvals.decide', { id, decision: 'approve' }, credential);
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ code: 'policy_denied', error: expect.stringMatching(/own request/) });
      }
      expect((await sys.invoke('approvals.decide', { id, decision: 'approve' }, approver)).status).toBe(200);
    }
    await waitFor(byGrandchild, owner, 'executed');
    await waitFor(byPaula, owner, 'executed');
    expect((await sys.invoke('policies.delete', { id: policyId }, owner)).status).toBe(200);
  });
});
