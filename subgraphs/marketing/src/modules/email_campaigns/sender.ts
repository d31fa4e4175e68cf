import { randomBytes } from 'node:crypto';
import { CuadraError, positionKey, type Logger } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { Schema } from 'mongoose';
import { modelOn } from '@cuadra/shared';
import type { Transporter } from 'nodemailer';
import { HANDOVER_COPY_TAG, taggedAddress } from '@cuadra/shared/mail-handover';
import { workspaceClock } from '../../lib/clock.ts';
import { inSendWindow, nextSendWindow } from '../../lib/windows.ts';
import { emailAccounts, type EmailAccountDoc } from '../email_accounts/model.ts';
import { imapAddress, signInToken, smtpTransport } from '../email_accounts/servers.ts';
import { suppressionId, suppressions, suppress } from '../consents/model.ts';
import { emailRows, FINAL_ROW_STATUSES, rowSeries, type RowDoc, type RowStatus } from '../email_rows/model.ts';
import { messageFor, unsubscribeUrl } from './content.ts';
import { readMailbox } from './mailbox.ts';
import { emailCampaigns, sendingCampaigns, type CampaignDoc } from './model.ts';
import { queueRows } from './queue.ts';

/*
 * The campaign sender: a loop in every marketing process that works through the campaigns being
 * sent, row by row, exactly once per recipient.
 *
 * A row is claimed by one conditional write (`queued` → `sending`, with a random claim token and a
 * lease); only the claimer hands its message to the SMTP server, then marks it `sent` (conditional on
 * its token). The message's Message-ID is derived from the row, the same on every attempt.
 *
 * The one window no SMTP client can close (RFC 1047): the server has taken the message (its 250 to
 * the end of DATA) and the process dies before the row says `sent`. The row is then `sending` with a
 * lapsed lease: in doubt. Every message is sent to one more recipient in the same SMTP transaction —
 * the account's own bounce mailbox (`<bounce local part>+copy@…`) — and a transaction is taken for all
 * its accepted recipients or for none (RFC 5321 §4.1.1.4: one reply to the end of data). So the copy in
 * the mailbox, found over IMAP by its Message-ID, is proof that the server took the message. An
 * in-doubt row whose copy arrives is `sent`; one whose copy has not arrived after the grace period
 * (`MARKETING_IN_DOUBT_GRACE_MS`, 2 minutes: local delivery of the copy takes milliseconds) was never
 * taken and is sent again, with the same Message-ID. An account without a mailbox cannot tell: its
 * in-doubt rows end `in_doubt` and are never sent again (at most once).
 *
 * The pace: an account's messages go out over a pool of SMTP connections (`MARKETING_SMTP_CONNECTIONS`,
 * 4 by default), one message at a time on each, so a campaign of N recipients is not N round trips one
 * after another. Each row in flight is its own claim, its own transaction and its own rate-limit unit
 * (taken just before its hand-over), so nothing above changes with the number of connections: a crash
 * leaves at most that many rows in doubt, each settled by its copy.
 *
 * An account that signs in with a connection (XOAUTH2) asks agents whether it still can before each
 * bucket of rows: a connection revoked or gone pauses the campaign (`paused`, with the reason) with
 * its rows as they are — queued rows stay queued, nothing is sent twice — until a person sends it
 * again. A refused sign-in is not a message handed over: its row goes back to the queue untried.
 */

interface SendCountDoc { _id: string; n: number }
const sendCountSchema = new Schema<SendCountDoc>({ _id: String, n: Number }, { versionKey: false });

/** Messages an account sent per minute, counted where every marketing process counts (its rate limit). */
function sendCounts(db: Connection) {
  return modelOn<SendCountDoc>(db, 'EmailSendCount', sendCountSchema, 'email_send_counts');
}

/** Takes one message of an account's minute; false when the minute's quota is spent. */
async function takeRate(db: Connection, account: EmailAccountDoc, now: Date): Promise<boolean> {
  const _id = `${account._id}|${Math.floor(now.getTime() / 60_000)}`;
  try {
    const doc = await sendCounts(db).findOneAndUpdate({ _id, n: { $lt: account.rate_per_minute } }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' }).lean();
    return !!doc;
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return false; // the minute's document exists and is full
    throw err;
  }
}

/** What every row of one pass over a campaign shares. */
interface Pass {
  c: CampaignDoc;
  account: EmailAccountDoc;
  transport: Transporter;
  hasMailbox: boolean;
  /** Now, on the campaign's workspace's clock (`lib/clock.ts`). */
  now: () => Date;
  /** Reads the bounce mailbox once in the pass, for the first in-doubt row (the others wait on that read). */
  readMailboxOnce: () => Promise<void>;
}

/** What became of a row: `final` (done with), `open` (to look at again later), `stop` (the pass stops taking rows). */
type RowOutcome = 'final' | 'open' | 'stop';

/** Settings of the sender, from the environment unless given. */
export interface SenderOptions {
  /** How long a claim lasts; longer than a send can take (the SMTP timeouts end a send within 40 s). */
  leaseMs?: number;
  /** How long an in-doubt row waits for its copy before it is sent again. */
  inDoubtGraceMs?: number;
  /** How often the loop looks for work. */
  intervalMs?: number;
  /** SMTP connections per account, each carrying one message at a time. */
  connections?: number;
  /** A clock for every workspace instead of each workspace's own (`lib/clock.ts`): the module tests' fixed time. */
  now?: () => Date;
}

const num = (v: string | undefined, d: number) => (Number(v) > 0 ? Number(v) : d);

/** The sender loop of one process. */
export class CampaignSender {
  readonly #db: Connection;
  readonly #log: Logger;
  readonly #now: (() => Date) | undefined;
  readonly #leaseMs: number;
  readonly #graceMs: number;
  readonly #intervalMs: number;
  readonly #connections: number;
  readonly #transports = new Map<string, { transport: Transporter; at: number; revision: number }>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(db: Connection, log: Logger, options: SenderOptions = {}) {
    this.#db = db;
    this.#log = log;
    this.#now = options.now;
    this.#leaseMs = options.leaseMs ?? num(process.env.MARKETING_SEND_LEASE_MS, 120_000);
    this.#graceMs = options.inDoubtGraceMs ?? num(process.env.MARKETING_IN_DOUBT_GRACE_MS, 120_000);
    this.#intervalMs = options.intervalMs ?? num(process.env.MARKETING_SENDER_INTERVAL_MS, 1_000);
    // More connections than this to one server is what providers throttle or refuse as abuse.
    this.#connections = Math.max(1, Math.min(16, Math.floor(options.connections ?? num(process.env.MARKETING_SMTP_CONNECTIONS, 4))));
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.tick(), this.#intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
    for (const { transport } of this.#transports.values()) transport.close();
    this.#transports.clear();
  }

  /** One pass over every campaign being sent (overlapping passes are skipped). */
  async tick(): Promise<void> {
    if (this.#running) return this.#running;
    this.#running = this.#pass().catch((err) => this.#log.warn({ err }, 'campaign sender pass failed; will retry')).finally(() => { this.#running = null; });
    return this.#running;
  }

  async #pass(): Promise<void> {
    const work = await sendingCampaigns(this.#db).find({}).limit(50).lean();
    for (const item of work) {
      if (this.#stopped) return;
      const c = await emailCampaigns(this.#db).findOne({ _id: item._id, workspace: item.workspace }).lean();
      if (!c || c.status !== 'sending') {
        // A send puts its campaign on this list just before freezing (or resuming) it: a young entry of a draft or a paused campaign may be that.
        if (c && (c.status === 'draft' || c.status === 'scheduled' || c.status === 'paused') && Date.now() - item.since.getTime() < 300_000) continue;
        if (c) await this.#refreshCounts(c);
        await sendingCampaigns(this.#db).deleteOne({ _id: item._id });
        continue;
      }
      await this.#campaign(c);
    }
  }

  #transport(account: EmailAccountDoc): Transporter {
    const hit = this.#transports.get(account._id);
    // An account changed since (email_accounts.update: another connection, a new password) signs in anew at once.
    if (hit && Date.now() - hit.at < 60_000 && hit.revision === (account.revision ?? 0)) return hit.transport;
    hit?.transport.close();
    const transport = smtpTransport(account, { pool: this.#connections });
    this.#transports.set(account._id, { transport, at: Date.now(), revision: account.revision ?? 0 });
    return transport;
  }

  async #campaign(c: CampaignDoc): Promise<void> {
    // A campaign frozen by email_campaigns.send whose rows a crash cut short: write the rest first.
    const account = await emailAccounts(this.#db).findOne({ _id: c.account_id, workspace: c.workspace }).lean();
    if (!account || account.removed_at) {
      this.#log.warn({ campaign: c._id }, 'the campaign\'s account is gone; nothing sent');
      return;
    }
    const now = this.#now ?? await workspaceClock(this.#db, c.workspace);
    if (!c.queued_at && c.recipients) await queueRows(this.#db, c as CampaignDoc & { recipients: NonNullable<CampaignDoc['recipients']> }, account.domain, now());
    if (c.send_at && c.send_at > now()) return;
    // Taken once a pass (passes never overlap), so a transport renewed for a changed account is never closed under a send.
    const transport = this.#transport(account);
    const hasMailbox = imapAddress(account) !== null;
    let mailboxRead: Promise<void> | null = null;
    const pass: Pass = {
      c, account, transport, hasMailbox, now,
      readMailboxOnce: () => (mailboxRead ??= readMailbox(this.#db, account, this.#log).then(() => undefined, (err) => this.#log.warn({ err: (err as Error).message }, 'bounce mailbox not readable'))),
    };
    const series = rowSeries(c._id);
    let allFinal = true;
    let from = c.sender_from;
    for (let low = c.sender_from; low <= c.rows_total; low += 64) {
      if (this.#stopped) return;
      if (!(await this.#canSignIn(pass))) return;
      const keys = Array.from({ length: Math.min(64, c.rows_total - low + 1) }, (_, i) => positionKey(series, c.workspace, low + i));
      const rows = (await emailRows(this.#db).find({ pos_key: { $in: keys } }).lean()).sort((a, b) => a.pos - b.pos);
      const open = rows.filter((row) => !FINAL_ROW_STATUSES.includes(row.status));
      let bucketFinal = rows.length === keys.length;
      let halted = false;
      let next = 0;
      // One worker per connection, each taking the bucket's next row in order until the bucket is done or a row says stop.
      const worker = async () => {
        while (!halted && !this.#stopped && next < open.length) {
          const row = open[next++];
          let outcome: RowOutcome;
          try {
            outcome = await this.#row(pass, row);
          } catch (err) {
            halted = true;
            throw err;
          }
          if (outcome === 'stop') halted = true;
          else if (outcome === 'open') bucketFinal = false;
        }
      };
      // Every worker ends before the pass goes on or gives up: no send outlives its pass.
      const ended = await Promise.allSettled(Array.from({ length: Math.min(this.#connections, open.length) }, worker));
      const failed = ended.find((e): e is PromiseRejectedResult => e.status === 'rejected');
      if (failed) throw failed.reason;
      if (halted || this.#stopped) return;
      if (!bucketFinal) allFinal = false;
      else if (allFinal) from = low + 64;
    }
    if (from !== c.sender_from) await emailCampaigns(this.#db).updateOne({ _id: c._id, sender_from: c.sender_from }, { $set: { sender_from: from } });
    if (allFinal) {
      const done = await emailCampaigns(this.#db).findOneAndUpdate({ _id: c._id, status: 'sending' }, { $set: { status: 'sent', finished_at: now(), updated_at: now() } }, { returnDocument: 'after' }).lean();
      await sendingCampaigns(this.#db).deleteOne({ _id: c._id });
      if (done) await this.#refreshCounts(done);
    }
  }

  /**
   * Whether an XOAUTH2 account can still sign in: its connection revoked or gone pauses the campaign
   * (false); agents or the provider not answering leaves it for the next pass (false).
   */
  async #canSignIn(pass: Pass): Promise<boolean> {
    const { c, account } = pass;
    if (account.auth !== 'xoauth2') return true;
    try {
      await signInToken(account, 'smtp');
      return true;
    } catch (err) {
      if (err instanceof CuadraError && err.code === 'conflict') await this.#pause(pass, err.message);
      else this.#log.warn({ err: (err as Error).message, campaign: c._id }, 'the account cannot sign in now; will retry');
      return false;
    }
  }

  /** Pauses a sending campaign with its reason; its rows stay as they are. */
  async #pause({ c, now: clock }: Pass, reason: string): Promise<void> {
    const now = clock();
    const paused = await emailCampaigns(this.#db).findOneAndUpdate({ _id: c._id, status: 'sending' }, { $set: { status: 'paused', paused_reason: reason, updated_at: now } }, { returnDocument: 'after' }).lean();
    await sendingCampaigns(this.#db).deleteOne({ _id: c._id });
    if (paused) {
      this.#log.warn({ campaign: c._id, reason }, 'campaign paused: its account cannot sign in');
      await this.#refreshCounts(paused);
    }
  }

  /** One row of a pass: settles an in-doubt row, or checks the window, the campaign and the rate, then sends it. */
  async #row(pass: Pass, row: RowDoc): Promise<RowOutcome> {
    const { c, account } = pass;
    const now = pass.now();
    if (row.status === 'sending' && row.lease_until && row.lease_until > now) return 'open';
    if (row.status === 'sending') {
      // In doubt: the hand-over may have happened (see the top of this file).
      if (!pass.hasMailbox) {
        await this.#finish(pass, row, 'in_doubt', { detail: 'The service stopped while handing this message to the SMTP server and the account has no mailbox to check; it is not sent again.' });
        return 'final';
      }
      await pass.readMailboxOnce();
      const fresh = await emailRows(this.#db).findOne({ _id: row._id }).lean();
      if (!fresh || fresh.status !== 'sending') return 'final';
      if (now.getTime() - (fresh.claimed_at?.getTime() ?? 0) < this.#graceMs) return 'open';
    }
    if (!inSendWindow(now)) {
      // Ley 2300, checked before every message: wait for the next window.
      await emailCampaigns(this.#db).updateOne({ _id: c._id, status: 'sending' }, { $set: { send_at: nextSendWindow(now).start } });
      return 'stop';
    }
    const current = await emailCampaigns(this.#db).findOne({ _id: c._id }, { status: 1 }).lean();
    if (current?.status !== 'sending') return 'stop';
    if (!(await takeRate(this.#db, account, now))) return 'stop'; // the account's minute is spent
    const sent = await this.#sendRow(pass, row, now);
    return sent === 'stop' ? 'stop' : sent ? 'final' : 'open';
  }

  /** Claims a row and hands its message over. True when the row reached a final status; `stop` when the account could not sign in. */
  async #sendRow(pass: Pass, row: RowDoc, now: Date): Promise<boolean | 'stop'> {
    const { c, account } = pass;
    const claim = randomBytes(12).toString('base64url');
    const claimed = await emailRows(this.#db).findOneAndUpdate(
      { _id: row._id, status: row.status, claim: row.claim },
      { $set: { status: 'sending', claim, claimed_at: now, lease_until: new Date(now.getTime() + this.#leaseMs), updated_at: now }, $inc: { attempts: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!claimed) return false;
    // Checked again at the last moment: an address that unsubscribed or bounced meanwhile gets nothing.
    const blocked = await suppressions(this.#db).findOne({ _id: suppressionId(c.workspace, row.address) }).lean();
    if (blocked) return this.#finish(pass, claimed, 'cancelled', { detail: `Not sent: the address is ${blocked.reason}.` }, claim);
    const message = await messageFor(c.content!, account, { id: row.party_id, name: row.name, address: row.address }, unsubscribeUrl(c.workspace, row._id));
    const copy = account.bounce_address && imapAddress(account) ? taggedAddress(account.bounce_address, HANDOVER_COPY_TAG) : null;
    try {
      const info = await pass.transport.sendMail({
        from: { name: account.from_name, address: account.from_email },
        ...(account.reply_to ? { replyTo: account.reply_to } : {}),
        to: { name: row.name, address: row.address },
        subject: message.subject, html: message.html, text: message.text,
        messageId: row.message_id,
        envelope: { from: account.bounce_address ? taggedAddress(account.bounce_address, row._id) : account.from_email, to: copy ? [row.address, copy] : [row.address] },
        list: { unsubscribe: { url: unsubscribeUrl(c.workspace, row._id), comment: 'Cancelar la suscripción' } },
        // RFC 8058: the POST that unsubscribes in one click, covered by the DKIM signature (servers.ts).
        headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
      const rejected = (info.rejected ?? []).map((a: string | { address: string }) => (typeof a === 'string' ? a : a.address).toLowerCase());
      if (rejected.includes(row.address)) {
        await suppress(this.#db, { workspace: c.workspace, address: row.address, reason: 'bounced', detail: 'Refused by the SMTP server at RCPT.', row_id: row._id, at: now });
        return this.#finish(pass, claimed, 'bounced_hard', { detail: 'The SMTP server refused the recipient.' }, claim);
      }
      return this.#finish(pass, claimed, 'sent', { sent_at: pass.now() }, claim);
    } catch (err) {
      const e = err as { responseCode?: number; command?: string; code?: string; response?: string };
      const said = String(e.response ?? (err as Error).message).replace(/\s+/g, ' ').slice(0, 200);
      if (e.code === 'EAUTH' || err instanceof CuadraError) {
        // The sign-in failed (a password or token refused, a connection revoked meanwhile, agents away): no
        // message went out. The row goes back to the queue untried and the pass stops; a refusal that will
        // not pass by itself (a revoked connection, a 5xx to AUTH) pauses the campaign for a person.
        await emailRows(this.#db).updateOne({ _id: row._id, claim }, { $set: { status: 'queued', claim: null, lease_until: null, detail: `Not sent: ${said}`, updated_at: pass.now() }, $inc: { attempts: -1 } });
        const lasting = err instanceof CuadraError ? err.code === 'conflict' : (e.responseCode ?? 0) >= 500;
        if (lasting) await this.#pause(pass, err instanceof CuadraError ? err.message : `The SMTP server refused the account's sign-in: ${said}`);
        return 'stop';
      }
      if (e.command === 'CONN' || e.command === 'MAIL FROM' || e.command === 'RCPT TO' || e.code === 'EENVELOPE' || e.code === 'ECONNECTION' || e.code === 'EDNS') {
        // Refused before the message itself: nothing was taken.
        if (e.responseCode && e.responseCode >= 500 && (e.command === 'RCPT TO' || e.code === 'EENVELOPE')) {
          await suppress(this.#db, { workspace: c.workspace, address: row.address, reason: 'bounced', detail: said, row_id: row._id, at: now });
          return this.#finish(pass, claimed, 'bounced_hard', { detail: said }, claim);
        }
        if (claimed.attempts >= 5) return this.#finish(pass, claimed, 'failed', { detail: `Given up after 5 tries: ${said}` }, claim);
        await emailRows(this.#db).updateOne({ _id: row._id, claim }, { $set: { status: 'queued', claim: null, lease_until: null, detail: said, updated_at: pass.now() } });
        return false;
      }
      // During or after DATA: the server may have taken it. Leave it in doubt (lease lapsed now).
      await emailRows(this.#db).updateOne({ _id: row._id, claim }, { $set: { lease_until: pass.now(), detail: `In doubt: ${said}`, updated_at: pass.now() } });
      return false;
    }
  }

  async #finish(pass: Pass, row: RowDoc, status: RowStatus, set: Partial<RowDoc>, claim?: string): Promise<boolean> {
    const now = pass.now();
    await emailRows(this.#db).updateOne({ _id: row._id, status: 'sending', claim: claim ?? row.claim }, { $set: { ...set, status, lease_until: null, updated_at: now } });
    return true;
  }

  /** Counts a campaign's rows by status (bounded: its own positions) and keeps them on the campaign. */
  async #refreshCounts(c: CampaignDoc): Promise<void> {
    const counts: Record<string, number> = {};
    const series = rowSeries(c._id);
    for (let low = 1; low <= c.rows_total; low += 64) {
      const keys = Array.from({ length: Math.min(64, c.rows_total - low + 1) }, (_, i) => positionKey(series, c.workspace, low + i));
      for (const r of await emailRows(this.#db).find({ pos_key: { $in: keys } }, { status: 1 }).lean()) counts[r.status] = (counts[r.status] ?? 0) + 1;
    }
    await emailCampaigns(this.#db).updateOne({ _id: c._id }, { $set: { counts } });
  }
}
