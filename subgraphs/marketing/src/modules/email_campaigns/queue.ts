import { positionKey } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { emailRows, rowId, rowSeries, type RowDoc } from '../email_rows/model.ts';
import { emailCampaigns, sendingCampaigns, type CampaignDoc } from './model.ts';

/**
 * Writes a campaign's rows, one per recipient, from the recipient list the campaign froze when it
 * was sent, then puts it on the sender's work list. Idempotent: the rows' ids and positions come from
 * that list, so a second run (after a crash half-way) writes only what is missing and changes nothing
 * written. The campaign's rows page by position (series `email_rows:<campaign>`), whose counter is
 * set once to the number of rows.
 */
export async function queueRows(db: Connection, campaign: CampaignDoc & { recipients: { party_id: string; name: string; address: string }[] }, domain: string, now: Date): Promise<void> {
  const series = rowSeries(campaign._id);
  const rows: RowDoc[] = campaign.recipients.map((r, i) => {
    const id = rowId(campaign._id, r.party_id);
    return {
      _id: id, workspace: campaign.workspace, campaign_id: campaign._id, party_id: r.party_id, name: r.name, address: r.address,
      pos: i + 1, pos_key: positionKey(series, campaign.workspace, i + 1), status: 'queued', message_id: `<${id}@${domain}>`, attempts: 0,
      claim: null, claimed_at: null, lease_until: null, sent_at: null, confirmed_at: null, detail: null, updated_at: now,
    };
  });
  for (let i = 0; i < rows.length; i += 500) {
    await emailRows(db).insertMany(rows.slice(i, i + 500), { ordered: false }).catch((err: { code?: number; writeErrors?: { code?: number; err?: { code?: number } }[] }) => {
      // Rows written by an earlier run of this same list are already right.
      const codes = err.writeErrors?.map((e) => e.code ?? e.err?.code) ?? [err.code];
      if (!codes.every((c) => c === 11000)) throw err;
    });
  }
  await db.collection('list_counters').updateOne({ _id: `${series}:${campaign.workspace}` as never }, { $max: { seq: rows.length, live: rows.length } }, { upsert: true });
  await sendingCampaigns(db).updateOne({ _id: campaign._id }, { $setOnInsert: { workspace: campaign.workspace, since: now } }, { upsert: true }).catch((err: { code?: number }) => {
    if (err.code !== 11000) throw err;
  });
  await emailCampaigns(db).updateOne({ _id: campaign._id, queued_at: null }, { $set: { queued_at: now, updated_at: now } });
}
