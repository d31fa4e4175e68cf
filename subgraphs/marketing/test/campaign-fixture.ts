import { generateKeyPairSync } from 'node:crypto';
import type { Connection } from 'mongoose';
import { emailAccounts } from '../src/modules/email_accounts/model.ts';
import { accountSealer, sealContext } from '../src/modules/email_accounts/servers.ts';
import { emailCampaigns, type CampaignDoc } from '../src/modules/email_campaigns/model.ts';
import { queueRows } from '../src/modules/email_campaigns/queue.ts';

/*
 * A verified `system` account and a campaign being sent, written in their stored shape and queued as
 * email_campaigns.send leaves them: what the sender's own tests and bench/campaign-sender.ts work on
 * without the tools before it (the system test drives those).
 */

/** Writes a verified account on the deployment's SMTP server (`SMTP_URL`), DKIM-signing with a new 2048-bit key. */
export async function seedSystemAccount(db: Connection, workspace: string, id: string, ratePerMinute: number, bounceAddress: string | null): Promise<void> {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  const now = new Date();
  await emailAccounts(db).create({
    _id: id, workspace, name: 'Boletín', name_lc: 'boletín', from_email: 'boletin@campanas.example', from_name: 'Campañas SAS', domain: 'campanas.example',
    transport: 'system', smtp: null, smtp_password_sealed: null, imap: null, imap_password_sealed: null, bounce_address: bounceAddress,
    dkim: { selector: 'cuadra1', public_key: keys.publicKey, private_key_sealed: accountSealer().seal(keys.privateKey, sealContext('dkim_private_key', workspace, id)) },
    rate_per_minute: ratePerMinute, status: 'verified', verified_at: now, last_error: null, removed_at: null, created_at: now, updated_at: now,
  });
}

/** Writes a campaign of the account being sent to `addresses` and queues its rows; answers its id. */
export async function seedSendingCampaign(db: Connection, workspace: string, accountId: string, id: string, addresses: string[], now: Date): Promise<string> {
  const recipients = addresses.map((address, i) => ({ party_id: `pty_${i}`, name: `Cliente ${i} Pérez`, address }));
  await emailCampaigns(db).create({
    _id: id, workspace, name: id, name_lc: id, template_id: 'etp_fixture', account_id: accountId, audience: {}, status: 'sending',
    requested_at: null, send_at: null, moved_reason: null, rows_total: recipients.length, recipients, excluded: [], excluded_counts: {}, counts: {}, sender_from: 1,
    content: {
      version: 1, subject: 'Hola {{ party.first_name }}, novedades de {{ sender.name }}',
      html: '<p>Hola {{ party.first_name }}</p><p><a href="{{ unsubscribe_url }}">Cancelar la suscripción</a></p>', text: 'Hola {{ party.first_name }}\n{{ unsubscribe_url }}',
    },
    queued_at: null, finished_at: null, cancelled_at: null, created_at: now, updated_at: now,
  });
  const campaign = (await emailCampaigns(db).findById(id).lean())!;
  await queueRows(db, campaign as CampaignDoc & { recipients: typeof recipients }, 'campanas.example', now);
  return id;
}
