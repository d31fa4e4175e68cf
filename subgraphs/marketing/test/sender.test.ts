import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { connectDatabase, createLogger } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMaildir } from '../../../scripts/smtp.ts';
import { emailCampaigns } from '../src/modules/email_campaigns/model.ts';
import { TEST_CLOCKS, workspaceClock } from '../src/lib/clock.ts';
import { CampaignSender } from '../src/modules/email_campaigns/sender.ts';
import { emailRows } from '../src/modules/email_rows/model.ts';
import { seedSendingCampaign, seedSystemAccount } from './campaign-fixture.ts';

/*
 * The campaign sender's pace (issue 33): an account's messages go out over a pool of SMTP connections,
 * several at once, not one connection per message one after another — and the account's rate limit
 * still holds with several in flight. The run's real SMTP server (exim) is reached through a TCP relay
 * of this test that counts the connections the sender opens and how many are open at once. (Exactly
 * once across a SIGKILL mid-send: test/marketing-campaign.test.ts.)
 */

const run = randomBytes(3).toString('hex');
const WS = `ws_sender_${run}`;
// Monday 30 November 2026, 10:00 in Bogotá: inside a Ley 2300 window, whatever day the test runs.
const MONDAY_10_BOGOTA = new Date('2026-11-30T15:00:00.000Z');
const log = createLogger('sender-test', 'silent');
const restore: Record<string, string | undefined> = {};
let db: Connection;
let relay: net.Server;
let opened = 0;
let open = 0;
let mostAtOnce = 0;

/** Sets an environment variable for this file, put back afterwards (the worker's process runs other files). */
function setEnv(name: string, value: string): void {
  if (!(name in restore)) restore[name] = process.env[name];
  process.env[name] = value;
}

beforeAll(async () => {
  const smtp = new URL(process.env.SMTP_URL!);
  relay = net.createServer((client) => {
    opened++;
    mostAtOnce = Math.max(mostAtOnce, ++open);
    const server = net.connect(Number(smtp.port), smtp.hostname);
    client.pipe(server).pipe(client);
    const end = () => { client.destroy(); server.destroy(); };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    client.once('close', () => open--);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  setEnv('SMTP_URL', `smtp://127.0.0.1:${(relay.address() as net.AddressInfo).port}`);
  // The account's DKIM key and the unsubscribe links are sealed and signed with the deployment's key.
  if (!process.env.CUADRA_SEAL_KEY) setEnv('CUADRA_SEAL_KEY', randomBytes(32).toString('base64'));
  db = await connectDatabase(process.env.MONGO_URL!, `t_sender_${run}`);
});

afterAll(async () => {
  await db?.close();
  await new Promise((resolve) => relay?.close(resolve));
  for (const [name, value] of Object.entries(restore)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Messages of this file the SMTP server delivered, by recipient. */
function deliveredTo(prefix: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { raw } of readMaildir(process.env.CUADRA_MAILDIR!)) {
    const to = /^Envelope-to: (.*)$/mi.exec(raw)?.[1].toLowerCase() ?? '';
    if (to.startsWith(prefix)) counts.set(to, (counts.get(to) ?? 0) + 1);
  }
  return counts;
}

async function deliveredAll(prefix: string, n: number): Promise<Map<string, number>> {
  const end = Date.now() + 20_000;
  for (;;) {
    const counts = deliveredTo(prefix);
    if ([...counts.values()].reduce((a, b) => a + b, 0) >= n || Date.now() > end) return counts;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the campaign sender', () => {
  it('sends a campaign over at most MARKETING_SMTP_CONNECTIONS connections, several at once, each recipient exactly once', async () => {
    await seedSystemAccount(db, WS, 'eac_pace', 100_000, null);
    const prefix = `pace-${run}-`;
    const addresses = Array.from({ length: 40 }, (_, i) => `${prefix}${i}@example.com`);
    const id = await seedSendingCampaign(db, WS, 'eac_pace', `ecm_pace_${run}`, addresses, MONDAY_10_BOGOTA);
    const sender = new CampaignSender(db, log, { now: () => MONDAY_10_BOGOTA, intervalMs: 3_600_000, connections: 4 });
    opened = 0;
    mostAtOnce = 0;
    try {
      for (let pass = 0; pass < 10 && (await emailCampaigns(db).findById(id).lean())?.status !== 'sent'; pass++) await sender.tick();
    } finally {
      await sender.stop();
    }
    expect((await emailCampaigns(db).findById(id).lean())?.status).toBe('sent');
    expect(await emailRows(db).countDocuments({ campaign_id: id, status: 'sent' })).toBe(40);
    // A connection per message would be 40 connections, one at a time.
    expect(opened).toBeLessThanOrEqual(4);
    expect(mostAtOnce).toBeGreaterThan(1);
    const counts = await deliveredAll(prefix, 40);
    expect(addresses.map((a) => counts.get(a) ?? 0)).toEqual(addresses.map(() => 1));
  });

  it('keeps to the account\'s messages per minute with several connections: a minute of 10 sends 10, the rest wait for the next minute', async () => {
    await seedSystemAccount(db, WS, 'eac_rate', 10, null);
    const prefix = `rate-${run}-`;
    const addresses = Array.from({ length: 25 }, (_, i) => `${prefix}${i}@example.com`);
    const id = await seedSendingCampaign(db, WS, 'eac_rate', `ecm_rate_${run}`, addresses, MONDAY_10_BOGOTA);
    let now = MONDAY_10_BOGOTA;
    const sender = new CampaignSender(db, log, { now: () => now, intervalMs: 3_600_000, connections: 4 });
    try {
      await sender.tick();
      await sender.tick();
      expect(await emailRows(db).countDocuments({ campaign_id: id, status: 'sent' })).toBe(10);
      expect(await emailRows(db).countDocuments({ campaign_id: id, status: 'queued' })).toBe(15);
      now = new Date(MONDAY_10_BOGOTA.getTime() + 60_000);
      await sender.tick();
      expect(await emailRows(db).countDocuments({ campaign_id: id, status: 'sent' })).toBe(20);
    } finally {
      await sender.stop();
    }
    const counts = await deliveredAll(prefix, 20);
    expect([...counts.values()]).toEqual(Array.from({ length: 20 }, () => 1));
  });

  it('keeps each workspace\'s Ley 2300 window by that workspace\'s test clock, and no test clock is read without MARKETING_TEST_CLOCKS', async () => {
    const [open, closed] = [`${WS}_open`, `${WS}_closed`];
    // Set 5 s ago: Monday 10:00 in Bogotá (inside the 7:00–19:00 window) and Sunday 6 December 10:00 (never on a Sunday).
    const setAt = new Date(Date.now() - 5_000);
    await db.collection<{ _id: string; at: Date; set_at: Date }>(TEST_CLOCKS).insertMany([
      { _id: open, at: MONDAY_10_BOGOTA, set_at: setAt },
      { _id: closed, at: new Date('2026-12-06T15:00:00.000Z'), set_at: setAt },
    ]);
    // Off (production): the machine's clock for every workspace, the collection unread.
    setEnv('MARKETING_TEST_CLOCKS', 'off');
    expect(Math.abs((await workspaceClock(db, open))().getTime() - Date.now())).toBeLessThan(1_000);
    setEnv('MARKETING_TEST_CLOCKS', 'on');
    // On: the clock read `at` at `set_at` and has run on since (5 s), within the second this line takes.
    expect((await workspaceClock(db, open))().getTime() - MONDAY_10_BOGOTA.getTime()).toBeGreaterThanOrEqual(5_000);
    expect((await workspaceClock(db, open))().getTime() - MONDAY_10_BOGOTA.getTime()).toBeLessThan(6_000);
    expect(Math.abs((await workspaceClock(db, `${WS}_none`))().getTime() - Date.now())).toBeLessThan(1_000);

    const prefix = `clock-${run}-`;
    await seedSystemAccount(db, open, 'eac_clock_open', 100_000, null);
    await seedSystemAccount(db, closed, 'eac_clock_closed', 100_000, null);
    const sending = await seedSendingCampaign(db, open, 'eac_clock_open', `ecm_clock_open_${run}`, [`${prefix}open@example.com`], MONDAY_10_BOGOTA);
    const waiting = await seedSendingCampaign(db, closed, 'eac_clock_closed', `ecm_clock_closed_${run}`, [`${prefix}closed@example.com`], MONDAY_10_BOGOTA);
    const sender = new CampaignSender(db, log, { intervalMs: 3_600_000 });
    try {
      await sender.tick();
    } finally {
      await sender.stop();
    }
    expect((await emailCampaigns(db).findById(sending).lean())?.status).toBe('sent');
    // The Sunday workspace's campaign waits for Monday 7 December, 7:00 in Bogotá (12:00 UTC), its row unsent.
    const held = (await emailCampaigns(db).findById(waiting).lean())!;
    expect([held.status, held.send_at?.toISOString()]).toEqual(['sending', '2026-12-07T12:00:00.000Z']);
    expect(await emailRows(db).countDocuments({ campaign_id: waiting, status: 'queued' })).toBe(1);
    expect([...(await deliveredAll(prefix, 1)).keys()]).toEqual([`${prefix}open@example.com`]);
  });
});
