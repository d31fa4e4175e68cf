// `node bench/campaign-sender.ts`: how fast the campaign sender hands a campaign's messages to the SMTP
// server (issue 33: a campaign of N recipients must not be N sequential round trips). Real parts: the
// MongoDB-protocol server (memory backend), exim (scripts/smtp.ts) and dovecot (scripts/imap.ts) as the
// account's bounce mailbox, so every message also carries the copy kept as proof of hand-over
// (sender.ts), DKIM-signed with a 2048-bit key, as a system account sends. The campaign (BENCH_RECIPIENTS,
// default 300) is written in its stored shape and queued (queue.ts); the sender's passes are run back to
// back until the campaign is `sent`. Each setting of MARKETING_SMTP_CONNECTIONS given in BENCH_CONNECTIONS
// (default "1,4") is run BENCH_ROUNDS times (default 2), alternating, and the messages per second printed,
// with exim's count of what it took (each recipient exactly once, checked in the Maildir).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mongoose from 'mongoose';
import { createLogger } from '../shared/src/index.ts';
import { buildMongoServerJar, ensureJavaAndMaven, startMongo, stopAll } from '../scripts/infra.ts';
import { startImap } from '../scripts/imap.ts';
import { LOCAL_MAIL_DOMAIN, readMaildir, startSmtp } from '../scripts/smtp.ts';

const recipients = Number(process.env.BENCH_RECIPIENTS ?? 300);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const settings = (process.env.BENCH_CONNECTIONS ?? '1,4').split(',').map((s) => s.trim());

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-campaign-'));
await ensureJavaAndMaven();
await buildMongoServerJar();
const [mongo, smtp] = await Promise.all([startMongo({ backend: 'memory' }), startSmtp({ dir: path.join(dir, 'mail') })]);
const imap = await startImap({ dir: path.join(dir, 'imap'), mailboxes: smtp.mailboxes, users: ['bounces'] });
Object.assign(process.env, {
  CUADRA_SEAL_KEY: randomBytes(32).toString('base64'), SMTP_URL: smtp.url, MARKETING_IMAP_URL: imap.urlFor('bounces'),
  MARKETING_BOUNCE_ADDRESS: `bounces@${LOCAL_MAIL_DOMAIN}`, MARKETING_ALLOW_PRIVATE_SERVERS: '1',
});
// Imported after the environment is set: the sender's modules read it when first used.
const { CampaignSender } = await import('../subgraphs/marketing/src/modules/email_campaigns/sender.ts');
const { emailCampaigns } = await import('../subgraphs/marketing/src/modules/email_campaigns/model.ts');
const { emailRows } = await import('../subgraphs/marketing/src/modules/email_rows/model.ts');
const { seedSendingCampaign, seedSystemAccount } = await import('../subgraphs/marketing/test/campaign-fixture.ts');

const db = await mongoose.createConnection(mongo.url, { dbName: 'bench_campaign' }).asPromise();
const log = createLogger('bench', 'silent');
const WS = 'ws_bench';
await seedSystemAccount(db, WS, 'eac_bench', 100_000, `bounces@${LOCAL_MAIL_DOMAIN}`);

/** Sends one campaign of `recipients` messages; answers messages per second. */
async function round(tag: string): Promise<number> {
  const id = await seedSendingCampaign(db, WS, 'eac_bench', `ecm_${tag}`, Array.from({ length: recipients }, (_, i) => `bench-${tag}-${i}@example.com`), new Date());
  const sender = new CampaignSender(db, log, { intervalMs: 3_600_000 });
  const started = performance.now();
  for (;;) {
    await sender.tick();
    if ((await emailCampaigns(db).findById(id, { status: 1 }).lean())?.status === 'sent') break;
  }
  const seconds = (performance.now() - started) / 1000;
  await sender.stop();
  const sent = await emailRows(db).countDocuments({ campaign_id: id, status: 'sent' });
  // exim delivers in the background: wait until every message is in the Maildir, then count per recipient.
  const end = Date.now() + 60_000;
  let counts = new Map<string, number>();
  while (Date.now() < end) {
    counts = new Map();
    for (const { raw } of readMaildir(smtp.maildir)) {
      const to = /^Envelope-to: (.*)$/mi.exec(raw)?.[1].toLowerCase() ?? '';
      if (to.startsWith(`bench-${tag}-`)) counts.set(to, (counts.get(to) ?? 0) + 1);
    }
    if (counts.size >= recipients) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const once = [...counts.values()].filter((n) => n === 1).length;
  if (sent !== recipients || once !== recipients) throw new Error(`round ${tag}: ${sent} rows sent, ${once} of ${recipients} recipients with exactly one message`);
  return recipients / seconds;
}

try {
  const results = new Map<string, number[]>(settings.map((s) => [s, []]));
  for (let r = 0; r < rounds; r++) {
    for (const s of settings) {
      process.env.MARKETING_SMTP_CONNECTIONS = s;
      const rate = await round(`c${s}r${r}${randomBytes(2).toString('hex')}`);
      results.get(s)!.push(rate);
      console.log(`MARKETING_SMTP_CONNECTIONS=${s.padEnd(3)} round ${r + 1}: ${rate.toFixed(1).padStart(7)} messages/s (${recipients} recipients, each exactly once in the Maildir)`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(results.get(settings[0])!);
  for (const s of settings) console.log(`MARKETING_SMTP_CONNECTIONS=${s.padEnd(3)} median ${median(results.get(s)!).toFixed(1).padStart(7)} messages/s  ×${(median(results.get(s)!) / base).toFixed(2)}`);
} finally {
  await db.close();
  await imap.stop();
  await smtp.stop();
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
