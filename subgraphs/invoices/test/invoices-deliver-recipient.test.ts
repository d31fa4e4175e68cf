// Issue 31, finding 9: invoices.deliver mails the buyer's e-mail of record; only a person with the
// right role, signed in themselves, names another address; and a workspace's e-mails per day are
// bounded by a quota (429 rate_limited, nothing sent, not kept for good under an Idempotency-Key).
// What was sent is read from the real SMTP server's mailbox (exim4, Maildir).
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ASSERTION_HEADER, newId, signAssertion, type Principal } from '@cuadra/shared';
import { makeP12 } from '@cuadra/shared/testing/signatures';
import { testSigningKeys, type TestSubgraph } from '@cuadra/shared/testing';
import { readMaildir } from '../../../scripts/smtp.ts';
import { configuredWorkspace, draftToday, party, startInvoices } from './setup.ts';
import { EVENT_WAIT_MS } from '../../../test/helpers/until.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});
afterEach(() => {
  delete process.env.MAIL_DAILY_QUOTA;
});

/** Messages the SMTP server delivered to `to`. */
const messagesTo = (to: string) => readMaildir(process.env.CUADRA_MAILDIR!).filter((m) => new RegExp(`^Envelope-to: ${to.replace(/[.+]/g, '\\$&')}$`, 'mi').test(m.raw)).length;

/** Waits until `to` has `n` messages (the SMTP server delivers a moment after accepting). */
async function expectMessages(to: string, n: number) {
  for (const deadline = Date.now() + EVENT_WAIT_MS; messagesTo(to) < n && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
  expect(messagesTo(to)).toBe(n);
}

/** A signed, configured workspace with a customer whose e-mail of record is `email`. */
async function setUp() {
  const owner = await configuredWorkspace(sg);
  const p12 = makeP12({ password: 'clave' });
  expect((await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password: 'clave' }, owner)).ok).toBe(true);
  const email = `compras.${randomBytes(4).toString('hex')}@andina.example.co`;
  const customer = await party(owner, { name: 'Comercial Pacífico SAS', kind: 'customer', email, tax_id: { type: 'NIT', number: '830012345-9' } });
  return { owner, email, customer };
}

/** A posted invoice the (sandbox) authority accepted: ready to deliver. Dated today: DIAN refuses an issue date other than the signing date (FAD09e). */
async function accepted(owner: Principal, customer: string) {
  const inv = await draftToday(sg, owner, { customer_id: customer });
  expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
  const sent = await sg.call('invoices.send', { id: inv.id }, owner);
  expect(sent.ok, sent.message).toBe(true);
  expect(sent.output?.authority?.is_valid, JSON.stringify(sent.output?.authority?.errors)).toBe(true);
  return inv.id as string;
}

/** The same workspace and role, as another kind of caller. */
const as = (owner: Principal, actor: Principal['actor']['type'], role = owner.role): Principal => ({
  ...owner, role, actor: { type: actor, id: newId(actor === 'member' ? 'mem' : 'key') }, credential_id: newId('cred'), person: actor === 'member' ? newId('usr') : null,
});

describe('invoices.deliver goes to the buyer of record', () => {
  it('an API key, an app or an agent cannot name another address (403, nothing sent); without `to` it goes to the e-mail of record', async () => {
    const { owner, email, customer } = await setUp();
    const id = await accepted(owner, customer);
    const victim = `victima.${randomBytes(4).toString('hex')}@elsewhere.example`;
    for (const who of [owner, as(owner, 'oauth_app'), as(owner, 'agent', 'agent'), as(owner, 'member', 'member')]) {
      const r = await sg.call('invoices.deliver', { id, to: victim }, who);
      expect(r, `${who.actor.type}/${who.role}`).toMatchObject({ ok: false, code: 'policy_denied', httpStatus: 403 });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(messagesTo(victim)).toBe(0);
    expect((await sg.call('invoices.get', { id }, owner)).output.invoice.delivery).toBeNull();

    const r = await sg.call('invoices.deliver', { id }, owner);
    expect(r.ok, r.message).toBe(true);
    expect(r.output.delivery).toMatchObject({ status: 'sent', to: email });
    await expectMessages(email, 1);
  });

  it('the e-mail of record named by anyone passes; an owner or accountant signed in names another address', async () => {
    const { owner, email, customer } = await setUp();
    const first = await accepted(owner, customer);
    expect((await sg.call('invoices.deliver', { id: first, to: email.toUpperCase() }, owner)).output.delivery).toMatchObject({ status: 'sent', to: email });
    const other = `recepcion.${randomBytes(4).toString('hex')}@andina.example.co`;
    const second = await accepted(owner, customer);
    const r = await sg.call('invoices.deliver', { id: second, to: other }, as(owner, 'member', 'accountant'));
    expect(r.ok, r.message).toBe(true);
    expect(r.output.delivery).toMatchObject({ status: 'sent', to: other });
    await expectMessages(other, 1);
    await expectMessages(email, 1);
  });

  it('a customer with no e-mail of record: refused at /to unless a person with the role names one', async () => {
    const owner = await configuredWorkspace(sg);
    const p12 = makeP12({ password: 'clave' });
    await sg.call('einvoicing.upload_certificate', { p12_base64: p12.base64, password: 'clave' }, owner);
    const customer = await party(owner, { name: 'Sin Correo SAS', kind: 'customer', tax_id: { type: 'NIT', number: '901234567-7' } });
    const id = await accepted(owner, customer);
    expect(await sg.call('invoices.deliver', { id }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/to' });
    expect(await sg.call('invoices.deliver', { id, to: 'x@sincorreo.example.co' }, owner)).toMatchObject({ ok: false, code: 'policy_denied' });
    expect((await sg.call('invoices.deliver', { id, to: 'x@sincorreo.example.co' }, as(owner, 'member', 'owner'))).output.delivery.status).toBe('sent');
  });
});

describe('the daily mail quota of a workspace', () => {
  it('refuses the message past the quota with 429 rate_limited, sends nothing, and a retry with the same key runs once the quota allows', async () => {
    process.env.MAIL_DAILY_QUOTA = '2';
    const { owner, email, customer } = await setUp();
    const ids = [await accepted(owner, customer), await accepted(owner, customer), await accepted(owner, customer)];
    expect((await sg.call('invoices.deliver', { id: ids[0] }, owner)).ok).toBe(true);
    expect((await sg.call('invoices.deliver', { id: ids[1] }, owner)).ok).toBe(true);
    await expectMessages(email, 2);
    const refused = await sg.call('invoices.deliver', { id: ids[2] }, owner, { idempotencyKey: 'deliver-3' });
    expect(refused).toMatchObject({ ok: false, code: 'rate_limited', httpStatus: 429 });
    expect(refused.message).toMatch(/2 e-mails/);
    // Over the hop the gateway relays (POST /invoke), the refusal says when to come back: the seconds
    // from the service's clock (read between `before` and `after`) to the next local (Bogotá, UTC−5)
    // midnight, recomputed here from both ends.
    const toMidnight = (at: number) => Math.ceil((86_400_000 - ((at - 5 * 3_600_000) % 86_400_000)) / 1000);
    const before = Date.now();
    const hop = await fetch(`${sg.url}/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: signAssertion(owner, testSigningKeys().privateKey) }, body: JSON.stringify({ tool: 'invoices.deliver', input: { id: ids[2] } }) });
    const after = Date.now();
    expect(hop.status).toBe(429);
    expect(Number(hop.headers.get('retry-after'))).toBeGreaterThanOrEqual(toMidnight(after));
    expect(Number(hop.headers.get('retry-after'))).toBeLessThanOrEqual(toMidnight(before));
    expect((await sg.call('invoices.get', { id: ids[2] }, owner)).output.invoice.delivery).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(messagesTo(email)).toBe(2);
    // Another workspace has its own quota.
    const other = await setUp();
    expect((await sg.call('invoices.deliver', { id: await accepted(other.owner, other.customer) }, other.owner)).ok).toBe(true);
    // The refusal is not kept under the key: once the operator raises the quota, the same key runs (once).
    process.env.MAIL_DAILY_QUOTA = '3';
    const retried = await sg.call('invoices.deliver', { id: ids[2] }, owner, { idempotencyKey: 'deliver-3' });
    expect(retried.ok, retried.message).toBe(true);
    expect(retried.replayed).toBeFalsy();
    await expectMessages(email, 3);
    const replay = await sg.call('invoices.deliver', { id: ids[2] }, owner, { idempotencyKey: 'deliver-3' });
    expect(replay).toMatchObject({ ok: true, replayed: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(messagesTo(email)).toBe(3);
  }, 60_000);

  it('of many sends at once, exactly the quota passes (one conditional upsert per message)', async () => {
    const workspace = newId('ws');
    const now = new Date();
    const answers = await Promise.allSettled(Array.from({ length: 12 }, () => sg.governance.mailQuota.take(workspace, now, 5)));
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(5);
    for (const a of answers.filter((x) => x.status === 'rejected')) expect((a as PromiseRejectedResult).reason).toMatchObject({ code: 'rate_limited' });
  });
});
