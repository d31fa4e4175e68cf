import type { Logger } from '@cuadra/shared';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Connection } from 'mongoose';
import { modelOn } from '@cuadra/shared';
import { Schema } from 'mongoose';
import { emailAccounts, type EmailAccountDoc } from '../email_accounts/model.ts';
import { connectImap, imapAddress } from '../email_accounts/servers.ts';
import { suppress } from '../consents/model.ts';
import { emailRows, type RowStatus } from '../email_rows/model.ts';

/*
 * The bounce and reply mailbox of an account, read over IMAP (imapflow) and parsed (mailparser):
 * - the account's own copy of a campaign message (its Message-ID is one of ours): proof the SMTP
 *   server took it; an in-doubt row becomes `sent` (sender.ts);
 * - a delivery-status notification (RFC 3464, `multipart/report; report-type=delivery-status`):
 *   `Action: failed` with a 5.x.x status marks the row `bounced_hard` and suppresses the address;
 *   4.x.x `bounced_soft`; `delivered`/`relayed` marks it `delivered`;
 * - a feedback report (RFC 5965, `report-type=feedback-report`): `complained`, address suppressed;
 * - a reply (In-Reply-To or References naming one of our messages): `replied`.
 * The message is found by the Message-ID the report quotes, else by the envelope tag
 * (`<bounce>+<row id>@…`) the report is addressed to. Reading resumes after the last UID read
 * (per UIDVALIDITY); every change is a conditional write, so two readers change a row once.
 */

/** A row id from one of our Message-IDs (`<row id@domain>`), or null. */
function rowOfMessageId(id: string | undefined | null): string | null {
  const m = /^<?(ecm_[A-Za-z0-9_-]+\.pty_[A-Za-z0-9_-]+)@[^>]+>?$/.exec((id ?? '').trim());
  return m ? m[1] : null;
}

/** The row id in an envelope tag `local+<row id>@domain`, or null. */
function rowOfTag(address: string | undefined): string | null {
  const m = /\+(ecm_[A-Za-z0-9_-]+\.pty_[A-Za-z0-9_-]+)@/.exec(address ?? '');
  return m ? m[1] : null;
}

/** The per-recipient fields of a message/delivery-status body (RFC 3464 §2.3). */
function recipientReports(body: string): { action: string; status: string; recipient: string }[] {
  const blocks = body.replace(/\r\n/g, '\n').split(/\n\s*\n/);
  const out: { action: string; status: string; recipient: string }[] = [];
  for (const block of blocks) {
    const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'im').exec(block)?.[1].trim() ?? '';
    const action = field('Action').toLowerCase();
    if (action && field('Final-Recipient')) out.push({ action, status: field('Status'), recipient: field('Final-Recipient').replace(/^rfc822;\s*/i, '').toLowerCase() });
  }
  return out;
}

type Finding = { row: string; status: RowStatus | 'confirmed'; detail: string; suppress?: 'bounced' | 'complained' };

/** What one message of the mailbox says about our rows. */
function classify(mail: ParsedMail): Finding[] {
  const contentType = String(mail.headers.get('content-type') ? (mail.headers.get('content-type') as { value?: string; params?: Record<string, string> }).value : '').toLowerCase();
  const params = (mail.headers.get('content-type') as { params?: Record<string, string> } | undefined)?.params ?? {};
  const reportType = (params['report-type'] ?? '').toLowerCase();
  const to = (Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));
  if (contentType === 'multipart/report' && reportType === 'delivery-status') {
    const status = mail.attachments.find((a) => a.contentType === 'message/delivery-status');
    const original = mail.attachments.find((a) => a.contentType === 'message/rfc822' || a.contentType === 'text/rfc822-headers');
    const quoted = original ? /^Message-ID:\s*(<[^>]+>)/im.exec(original.content.toString('utf8'))?.[1] : undefined;
    const row = rowOfMessageId(quoted) ?? rowOfMessageId([mail.headers.get('references')].flat().join(' ').split(/\s+/).find((r) => rowOfMessageId(r))) ?? to.map(rowOfTag).find(Boolean) ?? null;
    // mailparser gives a message/delivery-status part as text when it does not keep it as an attachment.
    const fields = status ? status.content.toString('utf8') : mail.text ?? '';
    if (!row) return [];
    const findings: Finding[] = [];
    for (const r of recipientReports(fields)) {
      // The copy kept as proof is delivered too; its reports say nothing about the recipient.
      if (r.recipient.includes('+copy@')) continue;
      if (r.action === 'failed') findings.push(r.status.startsWith('5') ? { row, status: 'bounced_hard', detail: `${r.status} ${r.recipient}`, suppress: 'bounced' } : { row, status: 'bounced_soft', detail: `${r.status} ${r.recipient}` });
      else if (r.action === 'delivered' || r.action === 'relayed') findings.push({ row, status: 'delivered', detail: `${r.action} ${r.status}` });
    }
    return findings;
  }
  if (contentType === 'multipart/report' && reportType === 'feedback-report') {
    const original = mail.attachments.find((a) => a.contentType === 'message/rfc822' || a.contentType === 'text/rfc822-headers');
    const row = rowOfMessageId(original ? /^Message-ID:\s*(<[^>]+>)/im.exec(original.content.toString('utf8'))?.[1] : undefined) ?? to.map(rowOfTag).find(Boolean) ?? null;
    return row ? [{ row, status: 'complained', detail: 'The recipient reported the message as spam.', suppress: 'complained' }] : [];
  }
  const own = rowOfMessageId(mail.messageId);
  if (own) return [{ row: own, status: 'confirmed', detail: 'The SMTP server took the message (the account\'s copy arrived).' }];
  const replyTo = [mail.inReplyTo, ...[mail.references ?? []].flat()].map((r) => rowOfMessageId(r)).find(Boolean);
  if (replyTo) return [{ row: replyTo, status: 'replied', detail: `Reply: ${String(mail.subject ?? '').slice(0, 120)}` }];
  return [];
}

/** Applies one finding to its row (conditional writes: once whoever reads). `workspace` null: the system mailbox, shared by every workspace. */
async function apply(db: Connection, workspace: string | null, f: Finding, now: Date): Promise<void> {
  const rows = emailRows(db);
  const row = await rows.findOne({ _id: f.row, ...(workspace ? { workspace } : {}) }).lean();
  if (!row) return;
  if (f.status === 'confirmed') {
    await rows.updateOne({ _id: row._id, confirmed_at: null }, { $set: { confirmed_at: now } });
    await rows.updateOne({ _id: row._id, status: 'sending' }, { $set: { status: 'sent', sent_at: row.sent_at ?? now, lease_until: null, detail: f.detail, updated_at: now } });
    return;
  }
  // A later fact replaces an earlier one only forward: sent → delivered → replied; a bounce or complaint ends it.
  const from: Record<string, RowStatus[]> = {
    delivered: ['sending', 'sent'], bounced_soft: ['sending', 'sent', 'delivered'], bounced_hard: ['sending', 'sent', 'delivered', 'bounced_soft'],
    complained: ['sending', 'sent', 'delivered', 'replied'], replied: ['sending', 'sent', 'delivered'],
  };
  await rows.updateOne({ _id: row._id, status: { $in: from[f.status] ?? [] } }, { $set: { status: f.status, detail: f.detail, lease_until: null, updated_at: now } });
  if (f.suppress) await suppress(db, { workspace: row.workspace, address: row.address, reason: f.suppress, detail: f.detail, row_id: row._id, at: now });
}

interface MailboxStateDoc { _id: string; uid_validity: string; last_uid: number }
const stateSchema = new Schema<MailboxStateDoc>({ _id: String, uid_validity: String, last_uid: Number }, { versionKey: false });

/** Where each mailbox's reader stopped: `system` (the deployment's bounce mailbox) or an account id. */
function mailboxStates(db: Connection) {
  return modelOn<MailboxStateDoc>(db, 'MailboxState', stateSchema, 'email_mailbox_states');
}

/**
 * Reads what is new in an account's mailbox (at most `max` messages) and applies it; the system
 * mailbox is read once for every workspace whose accounts use it. Answers how many were read.
 */
export async function readMailbox(db: Connection, account: EmailAccountDoc, log: Logger, max = 500): Promise<number> {
  const address = imapAddress(account);
  if (!address) return 0;
  const key = account.transport === 'system' ? 'system' : account._id;
  const workspace = account.transport === 'system' ? null : account.workspace;
  const client = await connectImap(address);
  let read = 0;
  try {
    const box = await client.mailboxOpen(address.server.mailbox, { readOnly: true });
    const validity = String(box.uidValidity);
    const stored = await mailboxStates(db).findById(key).lean();
    const state = stored?.uid_validity === validity ? stored : { uid_validity: validity, last_uid: 0 };
    let last = state.last_uid;
    if (box.exists > 0) {
      for await (const msg of client.fetch(`${last + 1}:*`, { uid: true, source: true }, { uid: true })) {
        if (msg.uid <= last || !msg.source) continue;
        try {
          const mail = await simpleParser(msg.source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
          for (const f of classify(mail)) await apply(db, workspace, f, new Date());
        } catch (err) {
          log.warn({ err: (err as Error).message, uid: msg.uid }, 'a mailbox message could not be read; skipped');
        }
        last = msg.uid;
        if (++read >= max) break;
      }
    }
    if (last !== state.last_uid || stored?.uid_validity !== validity) {
      // Forward only: a slower reader that read less never moves the mark back.
      await mailboxStates(db).updateOne({ _id: key, $or: [{ uid_validity: { $ne: validity } }, { last_uid: { $lt: last } }] }, { $set: { uid_validity: validity, last_uid: last } }, { upsert: true }).catch((err: { code?: number }) => {
        if (err.code !== 11000) throw err;
      });
    }
  } finally {
    await client.logout().catch(() => undefined);
  }
  return read;
}

/** Reads every mailbox campaigns may hear back in: the system's once, and each workspace account's own. */
export async function readAllMailboxes(db: Connection, log: Logger): Promise<void> {
  // Accounts are few per deployment; only those with a mailbox of their own are read one by one.
  const accounts = await emailAccounts(db).find({ removed_at: null, status: 'verified' }).limit(500).lean();
  const system = accounts.find((a) => a.transport === 'system');
  for (const account of [...(system ? [system] : []), ...accounts.filter((a) => a.transport === 'smtp' && a.imap)]) {
    await readMailbox(db, account, log).catch((err) => log.warn({ err: (err as Error).message, account: account._id }, 'bounce mailbox not readable'));
  }
}
