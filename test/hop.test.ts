import { createHmac, hkdfSync } from 'node:crypto';
import { ASSERTION_HEADER, signAssertion, type Principal } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// The hop between the gateway and a subgraph (issues 32, 33): the subgraph's POST /invoke answers
// as the REST surface does, and trusts the reach, bounds and schema checks of a call only when the
// gateway vouched for that very call (a MAC over its assertion and body under a key derived from
// the seal key); any other call is checked in full.
let sys: TestSystem;
let workspace: string;
let ownerKey: string;

beforeAll(async () => {
  sys = await startTestSystem('hop');
  const ws = await sys.workspace('Salto SAS');
  workspace = ws.workspace_id;
  ownerKey = ws.api_key;
});
afterAll(async () => {
  await sys?.stop();
});

/**
 * The vouch, computed here from the system's seal key by the RFC 5869 / RFC 2104 primitives, not by
 * the product's checked-call module: HKDF-SHA256 (no salt, info "cuadra/checked-call/v1", 32 bytes),
 * then HMAC-SHA256 over `assertion "\n" body`, base64url.
 */
function vouch(assertion: string, body: string, sealKey = sys.sealKey): string {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(sealKey, 'base64'), Buffer.alloc(0), 'cuadra/checked-call/v1', 32));
  return createHmac('sha256', key).update(`${assertion}\n${body}`).digest('base64url');
}

/** POST /invoke on crm, as the gateway's forwarder sends it. */
async function invokeCrm(principal: Principal, call: { tool: string; input: unknown }, headers: (assertion: string, body: string) => Record<string, string> = () => ({})) {
  const assertion = signAssertion(principal, sys.keys.privateKey);
  const body = JSON.stringify({ tool: call.tool, input: call.input, idempotencyKey: null, approvalId: null });
  const res = await fetch(`${sys.subgraphs.crm.url}/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion, ...headers(assertion, body) }, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const member = (): Principal => ({ workspace, role: 'admin', actor: { type: 'api_key', id: 'key_hop' }, credential_id: 'key_hop', scopes: null, patterns: null });
/** A caller whose key patterns reach no crm tool: only a vouched call gets past reach. */
const narrowed = (): Principal => ({ ...member(), patterns: ['invoices.%'] });

describe("a subgraph's POST /invoke", () => {
  it('answers a refusal as REST does: its status and {error, code, field}, the owner-answer mark and the Ledger-Receipt of its entry', async () => {
    const r = await invokeCrm(member(), { tool: 'parties.create', input: { name: 7, kind: 'customer' } });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ error: expect.any(String), code: 'invalid_input', field: '/name' });
    expect(r.headers.get('cuadra-owner-answer')).toBe('1');
    expect(r.headers.get('ledger-receipt')).toMatch(/^\d+;[0-9a-f]{64};/);

    const denied = await invokeCrm(narrowed(), { tool: 'parties.list', input: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: expect.any(String), code: 'policy_denied' });
  });

  it("answers a tool's output as REST does: 200 and {tool, output}", async () => {
    await sys.output('parties.create', { name: 'Salto Cliente', kind: 'customer' }, ownerKey);
    const r = await invokeCrm(member(), { tool: 'parties.list', input: { limit: 5 } });
    expect(r.status).toBe(200);
    expect(r.body.tool).toBe('parties.list');
    expect(r.body.output.rows.map((p: { name: string }) => p.name)).toContain('Salto Cliente');
    expect(r.headers.get('ledger-receipt')).toMatch(/^\d+;[0-9a-f]{64};/);
  });

  it("trusts the checks of exactly the call the gateway vouched for, and checks every other call in full", async () => {
    // Vouched: the owner does not check reach again (a key narrowed to invoices.% is past the gateway's check here only by the vouch).
    const vouched = await invokeCrm(narrowed(), { tool: 'parties.list', input: { limit: 1 } }, (a, b) => ({ 'cuadra-checked': vouch(a, b) }));
    expect(vouched.status).toBe(200);
    expect(vouched.body).toMatchObject({ tool: 'parties.list', output: { rows: expect.any(Array) } });
    // The same vouch on another body (the input changed after the check): checked, refused.
    const altered = await invokeCrm(narrowed(), { tool: 'parties.list', input: { limit: 2 } }, (a) => ({ 'cuadra-checked': vouch(a, JSON.stringify({ tool: 'parties.list', input: { limit: 1 }, idempotencyKey: null, approvalId: null })) }));
    expect(altered.status).toBe(403);
    expect(altered.body.code).toBe('policy_denied');
    // A vouch under another key (not the gateway's), and a malformed one: checked, refused.
    const otherKey = Buffer.alloc(32, 7).toString('base64');
    const forged = await invokeCrm(narrowed(), { tool: 'parties.list', input: {} }, (a, b) => ({ 'cuadra-checked': vouch(a, b, otherKey) }));
    expect(forged.body.code).toBe('policy_denied');
    const junk = await invokeCrm(narrowed(), { tool: 'parties.list', input: {} }, () => ({ 'cuadra-checked': 'x'.repeat(43) }));
    expect(junk.body.code).toBe('policy_denied');
    // Schema too: an input the schema refuses, sent without the gateway, is refused with its pointer.
    const invalid = await invokeCrm(member(), { tool: 'parties.list', input: { limit: 'many' } });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toMatchObject({ code: 'invalid_input', field: '/limit' });
  });

  it("answers its own refusals (no assertion, a malformed call) without the owner-answer mark, which the gateway never relays as the owner's", async () => {
    const none = await fetch(`${sys.subgraphs.crm.url}/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool: 'parties.list', input: {} }) });
    expect(none.status).toBe(401);
    expect(none.headers.get('cuadra-owner-answer')).toBeNull();
    expect(((await none.json()) as { code: string }).code).toBe('unauthenticated');
    const assertion = signAssertion(member(), sys.keys.privateKey);
    const malformed = await fetch(`${sys.subgraphs.crm.url}/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: assertion }, body: JSON.stringify({ tool: 5 }) });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('cuadra-owner-answer')).toBeNull();
  });
});

describe('through the gateway', () => {
  it('relays the owner’s answer and refusals with the same body, status and receipt', async () => {
    const refused = await sys.invoke('parties.create', { name: 7, kind: 'customer' }, ownerKey);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: expect.any(String), code: 'invalid_input', field: '/name' });
    const made = await sys.invoke('parties.create', { name: 'Salto Dos', kind: 'customer' }, ownerKey, { 'idempotency-key': `hop-${workspace}` });
    expect(made.status).toBe(200);
    expect(made.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(made.headers.get('ledger-receipt')).toMatch(/^\d+;[0-9a-f]{64};/);
    const again = await sys.invoke('parties.create', { name: 'Salto Dos', kind: 'customer' }, ownerKey, { 'idempotency-key': `hop-${workspace}` });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(made.body);
  });
});
