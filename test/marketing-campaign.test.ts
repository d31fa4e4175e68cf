import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMaildir } from '../scripts/smtp.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

/*
 * Issue 36's "done when", over the real system: a template, a campaign to 200 crm parties (10 without
 * consent, 10 unsubscribed, 5 bouncing) sent through the real SMTP server (exim), the bounces read back
 * over IMAP from dovecot and suppressed, one recipient unsubscribing in one click (RFC 8058), a send
 * scheduled on a Sunday moved to Monday 7:00, and the marketing service SIGKILLed mid-send and
 * restarted: every recipient gets exactly one message, counted in the mailboxes.
 *
 * The marketing service's clock starts on Monday 30 November 2026, 10:00 in Bogotá (15:00 UTC), so the
 * Ley 2300 window it enforces is open whatever day the test runs.
 */

const MONDAY_10_BOGOTA = '2026-11-30T15:00:00.000Z';
const run = randomBytes(3).toString('hex');
const address = (i: number) => (i >= 195 ? `c36-${run}-${i}@undeliverable.test` : `c36-${run}-${i}@example.com`);

let sys: TestSystem;
let key: string;
let approverKey: string;

/** Messages the SMTP server delivered to an address (the test Maildir exim writes every non-local recipient to). */
function delivered(to: string): string[] {
  return readMaildir(process.env.CUADRA_MAILDIR!).map((m) => m.raw).filter((raw) => /^Envelope-to: (.*)$/mi.exec(raw)?.[1].toLowerCase().split(/,\s*/).includes(to.toLowerCase()));
}

/**
 * Verifies a message's DKIM signature with dkimpy (Debian's python3-dkim), an implementation that is
 * not ours, answering its DNS query with the TXT record the account told the owner to publish.
 */
function dkimVerifies(raw: string, records: { name: string; value: string; purpose: string }[]): boolean {
  const dkimRecord = records.find((r) => r.purpose === 'dkim')!;
  const script = `import sys, dkim
name, value = sys.argv[1], sys.argv[2]
def dns(q, timeout=5):
    return value.encode() if q.decode().rstrip('.') == name else None
print('PASS' if dkim.verify(sys.stdin.buffer.read(), dnsfunc=dns) else 'FAIL')`;
  return execFileSync('/usr/bin/python3', ['-c', script, dkimRecord.name, dkimRecord.value], { input: raw.replace(/\r?\n/g, '\r\n') }).toString().trim() === 'PASS';
}

/** How many messages of this run the SMTP server delivered, by recipient. */
function deliveredByRecipient(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { raw } of readMaildir(process.env.CUADRA_MAILDIR!)) {
    const to = /^Envelope-to: (.*)$/mi.exec(raw)?.[1].toLowerCase() ?? '';
    if (to.startsWith(`c36-${run}-`)) counts.set(to, (counts.get(to) ?? 0) + 1);
  }
  return counts;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A tool's output, as the workspace's key unless another is given (sys.output throws on any other status). */
function ok(tool: string, input: unknown, k = key) {
  return sys.output(tool, input, k);
}

/** Sends a campaign: held by default; a second person approves it after reading the dry run. */
async function sendApproved(campaignId: string) {
  const held = await sys.invoke('email_campaigns.send', { id: campaignId }, key);
  expect(held.status).toBe(202);
  const approval = (await ok('approvals.get', { id: held.body.approval_id }, approverKey)).approval;
  await ok('approvals.decide', { id: held.body.approval_id, decision: 'approve' }, approverKey);
  return approval;
}

beforeAll(async () => {
  sys = await startTestSystem('marketing', {
    MARKETING_CLOCK_START: MONDAY_10_BOGOTA, MARKETING_SEND_LEASE_MS: '3000', MARKETING_IN_DOUBT_GRACE_MS: '3000',
    MARKETING_SENDER_INTERVAL_MS: '200', MARKETING_MAILBOX_INTERVAL_MS: '500',
  });
  const ws = await sys.workspace('Campañas SAS');
  key = ws.api_key;
  approverKey = (await sys.person(ws.workspace_id, 'admin', 'Aprobadora')).api_key;
});

afterAll(async () => {
  await sys?.stop();
});

describe('a campaign to 200 parties through the real SMTP and IMAP servers', () => {
  it('sends each consenting recipient exactly one message across a crash, reads the bounces back, honours one-click unsubscribe and the Ley 2300 windows', async () => {
    // 200 parties: 0–9 without consent, 10–19 unsubscribed by an earlier campaign, 195–199 bounce.
    const parties: string[] = [];
    for (let i = 0; i < 200; i += 20) {
      parties.push(...await Promise.all(Array.from({ length: 20 }, (_, j) => ok('parties.create', { name: `Cliente ${i + j} Pérez`, kind: 'customer', email: address(i + j), tags: i + j < 20 && i + j >= 10 ? ['boletin', 'previo'] : ['boletin'] }).then((o) => o.party.id))));
    }
    for (let i = 10; i < 200; i += 10) {
      await Promise.all(parties.slice(i, i + 10).map((id) => ok('consents.grant', { party_id: id, channel: 'email', evidence: { source: 'form', text: 'Acepto recibir correos comerciales de Campañas SAS.', reference: 'formulario web' } })));
    }
    const account = (await ok('email_accounts.connect', { name: 'Boletín', from_email: 'boletin@campanas.example', from_name: 'Campañas SAS', rate_per_minute: 6000 })).account;
    expect(account.dns_records.map((r: { purpose: string }) => r.purpose)).toEqual(['spf', 'dkim', 'dmarc']);
    const verified = (await ok('email_accounts.verify', { id: account.id })).account;
    expect(verified.status, verified.last_error).toBe('verified');
    const template = (await ok('email_templates.create', { name: 'Boletín de diciembre', subject: 'Hola {{ party.first_name }}, novedades de {{ sender.name }}' })).template;

    // An earlier campaign to parties 10–19; each unsubscribes in one click (the POST RFC 8058 defines).
    const earlier = (await ok('email_campaigns.create', { name: 'Previo', template_id: template.id, account_id: account.id, audience: { tags: ['previo'] } })).campaign;
    await sendApproved(earlier.id);
    for (let i = 10; i < 20; i++) {
      const raw = await until(`the earlier message to ${i}`, () => delivered(address(i))[0]);
      const url = /^List-Unsubscribe: <([^>]+)>/mi.exec(raw.replace(/\r?\n[ \t]+/g, ' '))![1];
      expect(raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/mi);
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(res.status).toBe(200);
    }

    // The campaign: scheduled on a Sunday, it moves to Monday 7:00 in Bogotá.
    const campaign = (await ok('email_campaigns.create', { name: 'Diciembre', template_id: template.id, account_id: account.id, audience: { kind: 'customer', tags: ['boletin'] } })).campaign;
    const sunday = await ok('email_campaigns.schedule', { id: campaign.id, at: '2026-12-06T10:00:00-05:00' });
    expect(sunday.moved).toBe(true);
    expect(sunday.campaign.send_at).toBe('2026-12-07T12:00:00.000Z'); // Monday 7 December, 7:00 in Bogotá (UTC−5)
    expect(sunday.reason).toMatch(/domingo 2026-12-06/);
    // Back to now (Monday 10:00 on the service's clock), inside a window: not moved.
    const monday = await ok('email_campaigns.schedule', { id: campaign.id, at: MONDAY_10_BOGOTA });
    expect(monday.moved).toBe(false);

    // The approver sees the dry run: 200 − 10 without consent − 10 unsubscribed = 180 recipients.
    const before = deliveredByRecipient();
    const approval = await (async () => {
      const held = await sys.invoke('email_campaigns.send', { id: campaign.id }, key);
      expect(held.status).toBe(202);
      return (await ok('approvals.get', { id: held.body.approval_id }, approverKey)).approval;
    })();
    expect(approval.preview.recipients).toBe(180);
    expect(approval.preview.excluded_counts).toEqual({ no_consent: 10, unsubscribed: 10 });
    // It starts now on the service's clock (Monday just after 10:00, inside the window), not moved.
    expect(Date.parse(approval.preview.first_window.start) - Date.parse(MONDAY_10_BOGOTA)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(approval.preview.first_window.start) - Date.parse(MONDAY_10_BOGOTA)).toBeLessThan(10 * 60_000);
    expect(approval.preview.first_window.end).toBe('2026-12-01T00:00:00.000Z'); // 19:00 in Bogotá
    expect(approval.preview.first_window.moved_because).toBeUndefined();
    expect(approval.preview.sample.subject).toMatch(/^Hola Cliente, novedades de Campañas SAS$/);
    expect(approval.preview.sample.html).toContain('Cancelar la suscripción');

    // Approved: the service is killed once some messages are out, and started again.
    await ok('approvals.decide', { id: approval.id, decision: 'approve' }, approverKey);
    const sentBeforeKill = await until('the first 40 messages', () => {
      const n = [...deliveredByRecipient()].reduce((s, [to, c]) => s + c - (before.get(to) ?? 0), 0);
      return n >= 40 ? n : null;
    }, 60_000);
    await sys.killSubgraph('marketing');
    const atKill = deliveredByRecipient();
    await sys.restartSubgraph('marketing');
    expect(sentBeforeKill).toBeLessThan(175);

    const done = await until('the campaign to finish', async () => {
      const c = (await ok('email_campaigns.get', { id: campaign.id })).campaign;
      return c.status === 'sent' ? c : null;
    }, 120_000);
    expect(done.rows_total).toBe(180);

    // Counted in the mailboxes: each of the 175 deliverable recipients got exactly one message of this campaign.
    const after = deliveredByRecipient();
    for (let i = 20; i < 195; i++) expect({ i, n: (after.get(address(i)) ?? 0) - (before.get(address(i)) ?? 0) }).toEqual({ i, n: 1 });
    for (let i = 0; i < 10; i++) expect(after.get(address(i)) ?? 0).toBe(0);
    expect([...atKill.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

    // The 5 undeliverable recipients: exim bounced each with an RFC 3464 report to the bounce mailbox,
    // which dovecot serves over IMAP; the service read them and marked the rows bounced_hard.
    await until('5 bounced rows', async () => {
      const rows = await ok('email_rows.list', { campaign_id: campaign.id, status: 'bounced_hard', limit: 100 });
      return rows.rows.length === 5 ? rows : null;
    }, 60_000);
    const imap = new ImapFlow({ host: '127.0.0.1', port: Number(process.env.CUADRA_IMAP_PORT), secure: false, auth: { user: 'bounces', pass: new URL(process.env.MARKETING_IMAP_URL!).password }, logger: false });
    await imap.connect();
    const reports: string[] = [];
    const lock = await imap.getMailboxLock('INBOX');
    try {
      for await (const m of imap.fetch('1:*', { source: true })) {
        const text = m.source!.toString();
        if (/report-type=delivery-status/i.test(text) && text.includes(`c36-${run}-`) && text.includes(campaign.id)) reports.push(text);
      }
    } finally {
      lock.release();
      await imap.logout();
    }
    expect(reports).toHaveLength(5);
    for (const r of reports) expect(r).toMatch(/Action: failed\s+Final-Recipient: rfc822;c36-[0-9a-f]+-19[5-9]@undeliverable\.test\s+Status: 5\.0\.0/);

    // One recipient unsubscribes in one click from this campaign's message.
    const raw = delivered(address(42))[0];
    // Signed with the account's DKIM key (List-Unsubscribe and List-Unsubscribe-Post covered, RFC 8058 §3.1), checked by dkimpy.
    expect(raw).toMatch(/^DKIM-Signature:[^]*h=[^;]*List-Unsubscribe:List-Unsubscribe-Post/mi);
    expect(dkimVerifies(raw, account.dns_records)).toBe(true);
    expect(dkimVerifies(raw.replace('Hola Cliente', 'Hola Cliento'), account.dns_records)).toBe(false);
    const url = /^List-Unsubscribe: <([^>]+)>/mi.exec(raw.replace(/\r?\n[ \t]+/g, ' '))![1];
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Cancelar la suscripción'); // a GET changes nothing
    for (let n = 0; n < 2; n++) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(res.status).toBe(200); // idempotent
    }
    // A character of the signature changed where all six of its bits are data: the last character of a 32-byte
    // HMAC in base64url carries two bits that decode to nothing, so changing only those (A↔B) was no forgery at
    // all one time in sixteen.
    const forged = await fetch(url.replace(/.(.{5})$/, (_, rest: string) => `${_[0] === 'A' ? 'B' : 'A'}${rest}`), { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    expect(forged.status).toBe(404);

    // The next campaign to the same audience leaves out the bounced and the new unsubscriber.
    const next = (await ok('email_campaigns.create', { name: 'Enero', template_id: template.id, account_id: account.id, audience: { kind: 'customer', tags: ['boletin'] } })).campaign;
    const held = await sys.invoke('email_campaigns.send', { id: next.id }, key);
    const preview = (await ok('approvals.get', { id: held.body.approval_id }, approverKey)).approval.preview;
    expect(preview.excluded_counts).toEqual({ no_consent: 10, unsubscribed: 11, bounced: 5 });
    expect(preview.recipients).toBe(174);
    const consent = (await ok('consents.list', { party_id: parties[42] })).rows[0];
    expect(consent.status).toBe('withdrawn');
    expect(consent.evidence.source).toBe('unsubscribe');
  }, 240_000); // two waits of up to 60 s and one of 120 s inside: the default 60 s cut the test short on a loaded machine
});
