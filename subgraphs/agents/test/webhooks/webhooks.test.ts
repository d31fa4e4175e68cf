import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createSealer, newId } from '@cuadra/shared';
import { dumpDatabase, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LEASE_MS, WebhookDeliverer } from '../../src/modules/webhooks/deliverer.ts';
import { createServer, name } from '../../src/server.ts';

// The receiver a customer would run: it verifies every message with the Standard Webhooks library's own verifier.
interface Received { path: string; headers: IncomingHttpHeaders; body: string }
let receiver: Server;
let receiverUrl = '';
const received: Received[] = [];
/** Statuses the receiver answers, one per request, then 204. */
let answers: number[] = [];
/** Told of each request as it arrives; while `holding`, the receiver does not answer (a send in flight). */
let onRequest: (() => void) | null = null;
let holding = false;

let svc: TestSubgraph;
const sealKey = randomBytes(32);
const saved = { seal: process.env.CUADRA_SEAL_KEY, outbound: process.env.CUADRA_OUTBOUND_PRIVATE };
const log = createLogger('webhooks-test', 'silent');

/** The service's deliverer, as the agents service runs it; `allowPrivate` as the tests' setting says. */
function deliverer(allowPrivate = true): WebhookDeliverer {
  return new WebhookDeliverer({ db: svc.db, governance: svc.governance, sealer: createSealer(sealKey), log, allowPrivate, random: () => 0.5 });
}

beforeAll(async () => {
  process.env.CUADRA_SEAL_KEY = sealKey.toString('base64');
  process.env.CUADRA_OUTBOUND_PRIVATE = 'allow';
  receiver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      onRequest?.();
      if (holding) return;
      res.statusCode = answers.shift() ?? 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  svc = await startTestSubgraph(name, createServer);
});

afterAll(async () => {
  await svc?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  for (const [k, v] of [['CUADRA_SEAL_KEY', saved.seal], ['CUADRA_OUTBOUND_PRIVATE', saved.outbound]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

beforeEach(() => {
  received.length = 0;
  answers = [];
  onRequest = null;
  holding = false;
});

/** A tool's output, or a throw with the refusal. */
async function output(tool: string, input: Record<string, unknown>, who: ReturnType<typeof testPrincipal>): Promise<any> {
  const r = await svc.call(tool, input, who);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.field ?? ''} ${r.message}`);
  return r.output;
}

/** An endpoint on the test receiver for a fresh workspace; its secret as answered once. */
async function subscribe(input: Record<string, unknown> = {}) {
  const owner = testPrincipal({ person: newId('mem') });
  const created = await output('webhooks.create', { url: receiverUrl, events: ['ledger.action'], tools: ['agents.%'], ...input }, owner);
  return { owner, webhook: created.webhook, secret: created.secret as string };
}

/** Records one ledger action of `agents.create` in the owner's workspace. */
async function anAction(owner: ReturnType<typeof testPrincipal>) {
  return output('agents.create', { name: `Agente ${newId('x')}`, model: 'embedded' }, owner);
}

describe('webhooks: signed, logged, retried', () => {
  it('signs each ledger action as Standard Webhooks says: the library\'s verifier accepts it; the secret is shown once and stored only sealed', async () => {
    const { owner, webhook, secret } = await subscribe();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await anAction(owner);
    await output('webhooks.list', {}, owner); // not selected by agents.%: not sent
    await deliverer().tick();
    expect(received).toHaveLength(1);
    const [msg] = received;
    const payload = new Webhook(secret).verify(msg.body, msg.headers as Record<string, string>) as { type: string; data: Record<string, any> };
    expect(payload.type).toBe('ledger.action');
    expect(payload.data).toMatchObject({ tool: 'agents.create', module: 'agents', outcome: 'ok', risk: 'write' });
    expect(msg.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    // A tampered body is refused by the same verifier.
    expect(() => new Webhook(secret).verify(msg.body.replace('agents.create', 'agents.delete'), msg.headers as Record<string, string>)).toThrow(/signature/i);
    // The secret is in no listing and nowhere in the database.
    const listed = await output('webhooks.list', {}, owner);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(6));
    expect(listed.rows[0]).toMatchObject({ id: webhook.id, status: 'active', signing_secrets: [{ expires_at: null }] });
    expect(await dumpDatabase(svc.db)).not.toContain(secret.slice(6));
    expect(await dumpDatabase(svc.governance.db)).not.toContain(secret.slice(6));
    const log = await output('webhooks.deliveries', { id: webhook.id }, owner);
    expect(log.rows).toHaveLength(1);
    expect(log.rows[0]).toMatchObject({ id: msg.headers['webhook-id'], status: 'succeeded', attempt_count: 1, attempts: [{ status_code: 204, error: null, address: '127.0.0.1' }] });
  });

  it('retries a 500 with backoff, with the same webhook-id, and logs every attempt', async () => {
    const { owner, webhook, secret } = await subscribe();
    await anAction(owner);
    answers = [500, 503];
    const now = new Date();
    const d = deliverer();
    await d.tick(now);
    expect(received).toHaveLength(1);
    let log = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0];
    // First retry after 5 s × (0.8 + 0.4 × 0.5) = 5 s exactly with the jitter fixed at 0.5.
    expect(log).toMatchObject({ status: 'pending', attempt_count: 1, attempts: [{ status_code: 500, error: 'The endpoint answered 500.' }] });
    expect(Date.parse(log.next_attempt_at) - now.getTime()).toBe(5_000);
    await d.tick(new Date(now.getTime() + 4_000)); // not due yet
    expect(received).toHaveLength(1);
    await d.tick(new Date(now.getTime() + 5_000));
    expect(received).toHaveLength(2);
    log = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0];
    // Second retry after 5 min × 1.0 = 300 s.
    expect(Date.parse(log.next_attempt_at) - (now.getTime() + 5_000)).toBe(300_000);
    await d.tick(new Date(now.getTime() + 305_000));
    expect(received).toHaveLength(3);
    for (const r of received) new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    log = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0];
    expect(log).toMatchObject({ status: 'succeeded', attempt_count: 3, next_attempt_at: null });
    expect(log.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 503, 204]);
  });

  it('gives up three days after the event', async () => {
    const { owner, webhook } = await subscribe();
    await anAction(owner);
    const d = deliverer();
    const start = Date.now();
    answers = Array(50).fill(500);
    let at = start;
    await d.tick(new Date(at));
    for (let i = 0; i < 40; i++) {
      const row = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0];
      if (row.status !== 'pending') break;
      at = Date.parse(row.next_attempt_at);
      await d.tick(new Date(at));
    }
    const row = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0];
    expect(row.status).toBe('failed');
    expect(row.reason).toMatch(/3 days/);
    // Attempt 1 at 0, then waits of 5 s, 5 min, 30 min, 2 h, 5 h (attempt 6 at 7 h 35 min 5 s), then 10 h each:
    // attempts 7–12 at 17 h 35, 27 h 35, 37 h 35, 47 h 35, 57 h 35, 67 h 35 (+5 s); a 13th at 77 h 35 would pass 72 h.
    expect(row.attempt_count).toBe(12);
    expect(at - start).toBe(5_000 + 300_000 + 1_800_000 + 7_200_000 + 18_000_000 + 6 * 36_000_000);
  });

  it('disables the endpoint when it answers 410, and sends it nothing more', async () => {
    const { owner, webhook } = await subscribe();
    await anAction(owner);
    answers = [410];
    const d = deliverer();
    await d.tick();
    expect(received).toHaveLength(1);
    const [endpoint] = (await output('webhooks.list', { status: 'disabled' }, owner)).rows;
    expect(endpoint).toMatchObject({ id: webhook.id, status: 'disabled', disabled_reason: expect.stringMatching(/410/) });
    expect((await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0]).toMatchObject({ status: 'failed', attempts: [{ status_code: 410 }] });
    await anAction(owner);
    await d.tick(new Date(Date.now() + 3600_000));
    expect(received).toHaveLength(1);
    expect(await svc.call('webhooks.test', { id: webhook.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('rotates without downtime: both secrets sign during the overlap, only the new one after', async () => {
    const { owner, webhook, secret: old } = await subscribe();
    const rotated = await output('webhooks.update', { id: webhook.id, rotate: true, overlap_hours: 1 }, owner);
    const fresh = rotated.secret as string;
    expect(fresh).not.toBe(old);
    expect(rotated.webhook.signing_secrets).toHaveLength(2);
    await anAction(owner);
    const d = deliverer();
    await d.tick();
    expect(received).toHaveLength(1);
    const [during] = received;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    new Webhook(old).verify(during.body, during.headers as Record<string, string>);
    new Webhook(fresh).verify(during.body, during.headers as Record<string, string>);
    // After the hour: one signature, by the new secret only.
    await anAction(owner);
    await d.tick(new Date(Date.now() + 3600_000 + 1_000));
    expect(received).toHaveLength(2);
    const after = received[1];
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    new Webhook(fresh).verify(after.body, after.headers as Record<string, string>);
    expect(() => new Webhook(old).verify(after.body, after.headers as Record<string, string>)).toThrow(/No matching signature/);
  });

  it('webhooks.test sends now and answers the attempt; redeliver sends the same message again with the same webhook-id', async () => {
    const { owner, webhook, secret } = await subscribe();
    const tested = (await output('webhooks.test', { id: webhook.id }, owner)).delivery;
    expect(tested).toMatchObject({ event_type: 'webhook.test', status: 'succeeded', attempts: [{ status_code: 204, address: '127.0.0.1' }] });
    expect(new Webhook(secret).verify(received[0].body, received[0].headers as Record<string, string>)).toMatchObject({ type: 'webhook.test' });
    const again = (await output('webhooks.redeliver', { delivery_id: tested.id }, owner)).delivery;
    expect(again).toMatchObject({ id: tested.id, status: 'pending' });
    await deliverer().tick();
    expect(received.map((r) => r.headers['webhook-id'])).toEqual([tested.id, tested.id]);
    expect(received[1].body).toBe(received[0].body);
  });

  it('announces an approval decided by a person', async () => {
    const { owner, webhook, secret } = await subscribe({ events: ['approval.decided'], tools: undefined });
    expect(webhook.tools).toEqual([]);
    const requester = testPrincipal({ workspace: owner.workspace, person: newId('mem'), role: 'member' });
    const approval = await svc.governance.approvals.create({ id: newId('apv'), workspace: owner.workspace, subgraph: 'agents', mode: 'hold', tool: 'agents.delete', input: { id: 'agt_x' }, inputDigest: 'd', principal: requester });
    await output('approvals.decide', { id: approval._id, decision: 'reject', reason: 'No' }, owner);
    const d = deliverer();
    await d.tick();
    await d.tick(); // the mark is cleared: announced once
    expect(received).toHaveLength(1);
    expect(new Webhook(secret).verify(received[0].body, received[0].headers as Record<string, string>)).toMatchObject({
      type: 'approval.decided', data: { id: approval._id, tool: 'agents.delete', status: 'rejected', reason: 'No' },
    });
  });

  it('refuses private and loopback addresses when the setting is off: at subscription, and at delivery (names resolved and checked at connect time)', async () => {
    const { owner, webhook } = await subscribe({ url: receiverUrl.replace('127.0.0.1', 'localhost') });
    await anAction(owner);
    await deliverer(false).tick();
    expect(received).toHaveLength(0);
    const row = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows[0];
    expect(row).toMatchObject({ status: 'pending', attempts: [{ status_code: null, address: null }] });
    expect(row.attempts[0].error).toMatch(/not public/);
    // An address literal is refused before any connection.
    const literal = await subscribe();
    await anAction(literal.owner);
    await deliverer(false).tick();
    expect(received).toHaveLength(0);
    expect((await output('webhooks.deliveries', { id: literal.webhook.id }, literal.owner)).rows[0].attempts[0].error).toMatch(/127\.0\.0\.1 is not a public address/);
    // With the setting off, subscribing refuses such URLs outright, and plain http.
    delete process.env.CUADRA_OUTBOUND_PRIVATE;
    try {
      for (const url of ['https://127.0.0.1/h', 'https://[::1]/h', 'https://10.1.2.3/h', 'https://169.254.169.254/latest', 'https://[fd00::1]/h', 'https://localhost/h', 'http://example.com/h']) {
        expect(await svc.call('webhooks.create', { url, events: ['ledger.action'] }, owner), url).toMatchObject({ ok: false, code: 'invalid_input', field: '/url' });
      }
    } finally {
      process.env.CUADRA_OUTBOUND_PRIVATE = 'allow';
    }
  });

  it('refuses bad input with the field, and another workspace\'s endpoint as not found', async () => {
    const { owner, webhook } = await subscribe();
    expect(await svc.call('webhooks.create', { url: receiverUrl, events: [] }, owner)).toMatchObject({ code: 'invalid_input', field: '/events' });
    expect(await svc.call('webhooks.create', { url: receiverUrl, events: ['approval.decided'], tools: ['agents.%'] }, owner)).toMatchObject({ code: 'invalid_input', field: '/tools' });
    expect(await svc.call('webhooks.update', { id: webhook.id, overlap_hours: 2 }, owner)).toMatchObject({ code: 'invalid_input', field: '/overlap_hours' });
    const stranger = testPrincipal({ person: newId('mem') });
    for (const [tool, input] of [['webhooks.update', { id: webhook.id, status: 'disabled' }], ['webhooks.delete', { id: webhook.id }], ['webhooks.test', { id: webhook.id }], ['webhooks.deliveries', { id: webhook.id }]] as const) {
      expect(await svc.call(tool, input, stranger), tool).toMatchObject({ ok: false, code: 'not_found' });
    }
    const deleted = await output('webhooks.delete', { id: webhook.id }, owner);
    expect(deleted.webhook).toMatchObject({ status: 'deleted', signing_secrets: [] });
  });

  it('survives a SIGKILL of the deliverer mid-send: every message arrives, none lost, a repeat only of the one in flight and with its webhook-id', async () => {
    // Its own path: messages other tests left pending to the same receiver are sent too, and told apart by it.
    const { owner, webhook, secret } = await subscribe({ url: `${receiverUrl}/crash` });
    for (let i = 0; i < 5; i++) await anAction(owner);
    holding = true;
    const firstRequest = new Promise<void>((resolve) => { onRequest = () => { if (received.some((r) => r.path.endsWith('/crash'))) resolve(); }; });
    const child = spawn(process.execPath, [fileURLToPath(new URL('./deliverer-process.ts', import.meta.url))], {
      env: { ...process.env, WEBHOOKS_DB: svc.db.name, WEBHOOKS_GOVERNANCE_DB: svc.governance.db.name, WEBHOOKS_SEAL_KEY: sealKey.toString('base64') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await firstRequest; // the child has queued the messages and one is on the wire, unanswered
      child.kill('SIGKILL');
      await once(child, 'exit');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    const mine = () => received.filter((r) => r.path.endsWith('/crash'));
    const inFlight = mine().length;
    expect(inFlight).toBeGreaterThanOrEqual(1);
    holding = false;
    onRequest = null;
    // Another deliverer, once the dead one's claims have lapsed.
    await deliverer().tick(new Date(Date.now() + LEASE_MS + 1_000));
    const ids = mine().map((r) => String(r.headers['webhook-id']));
    const rows = (await output('webhooks.deliveries', { id: webhook.id }, owner)).rows as { id: string; status: string; event_id: string }[];
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => r.id)));
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(5);
    // At least once: the only repeats are the sends the kill interrupted, with the same id and body.
    expect(ids.length).toBe(5 + inFlight);
    for (const r of mine()) new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    const byId = new Map<string, Set<string>>();
    for (const r of mine()) byId.set(String(r.headers['webhook-id']), (byId.get(String(r.headers['webhook-id'])) ?? new Set()).add(r.body));
    expect([...byId.values()].every((bodies) => bodies.size === 1)).toBe(true);
  });
});
