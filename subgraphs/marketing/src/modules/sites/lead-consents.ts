import { peerGraph, type BackgroundJob, type Logger, type PeerConfig } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { consentId, consents } from '../consents/model.ts';
import { recordConsent } from '../consents/record.ts';
import { siteLeads, sites, type SiteLeadDoc } from './model.ts';

/** How long a lead's consent waits for crm to make its party before it is no longer looked for. */
const PENDING_DAYS = 30;

/** Leads looked at per pass. */
const BATCH = 100;

/** A lead as the graph answers it (`siteLead`): what crm makes the party and the deal from. */
export async function siteLeadNode(db: Connection, workspace: string, id: string) {
  const lead = await siteLeads(db).findOne({ _id: id, workspace }).lean();
  if (!lead) return null;
  const site = await sites(db).findOne({ _id: lead.site_id, workspace }, { name: 1, slug: 1, lead_pipeline: 1 }).lean();
  if (!site) return null;
  return {
    id: lead._id, siteId: site._id, siteName: site.name, siteSlug: site.slug, pipeline: site.lead_pipeline ?? null, path: lead.path,
    name: lead.name, email: lead.email, phone: lead.phone, message: lead.message, consentGiven: lead.consent.given, createdAt: lead.created_at.toISOString(),
  };
}

/**
 * Records, on the party crm made of a lead, the consent its visitor gave on the form (Ley 1581 de
 * 2012: the evidence is the form's own: its text, when, from which address and browser).
 *
 * Marketing owns consents and crm owns parties; neither writes the other's records, and a service
 * assertion only reads. So crm makes the party and the deal (deals.create_from_lead) and this
 * service, reading crm (`leadParties`, by the lead ids), writes the consent itself. Once per lead:
 * the flag `consent_pending` goes in the same conditional update that names the party, after the
 * consent is recorded; a crash between the two finds the consent granted and records nothing again,
 * and two instances at once change it once (conditional on the status they read). A consent already
 * granted stays as it is (the lead keeps its own evidence), and one changed after the form was sent
 * (a withdrawal) is newer and is left as it is.
 *
 * @returns how many consents it recorded
 */
export async function recordLeadConsents(db: Connection, peers: PeerConfig | undefined, log: Logger, now = new Date()): Promise<number> {
  const pending = await siteLeads(db).find({ consent_pending: true, created_at: { $gte: new Date(now.getTime() - PENDING_DAYS * 86_400_000) } }).sort({ created_at: 1 }).limit(BATCH).lean();
  const byWorkspace = new Map<string, SiteLeadDoc[]>();
  for (const lead of pending) byWorkspace.set(lead.workspace, [...(byWorkspace.get(lead.workspace) ?? []), lead]);
  let recorded = 0;
  for (const [workspace, leads] of byWorkspace) {
    let made: { leadId: string; partyId: string }[];
    try {
      const data = await peerGraph('marketing', peers, workspace)('crm', 'query($ids: [ID!]!) { leadParties(leadIds: $ids) { leadId partyId } }', { ids: leads.map((l) => l._id) });
      made = data.leadParties as { leadId: string; partyId: string }[];
    } catch (err) {
      log.warn({ err, workspace }, 'lead consents: crm could not be read; will retry');
      continue;
    }
    for (const { leadId, partyId } of made) {
      const lead = leads.find((l) => l._id === leadId);
      if (!lead) continue;
      const current = await consents(db).findOne({ _id: consentId(workspace, partyId, 'email') }, { status: 1, updated_at: 1 }).lean();
      if (!current || (current.status !== 'granted' && current.updated_at < lead.consent.at)) {
        // Only from the status read (none: `withdrawn` lets it be created): a second instance recording the same lead at once changes nothing.
        await recordConsent(db, {
          workspace, party_id: partyId, channel: 'email', status: 'granted', address: lead.email, from: [current?.status ?? 'withdrawn'],
          evidence: { source: 'site_form', text: lead.consent.text, reference: lead._id, recorded_by: 'public', ip: lead.consent.ip, user_agent: lead.consent.user_agent, at: lead.consent.at },
        });
        recorded++;
      }
      await siteLeads(db).updateOne({ _id: lead._id, consent_pending: true }, { $unset: { consent_pending: 1 }, $set: { consent_party_id: partyId } });
    }
  }
  return recorded;
}

/** The consents of site leads, recorded every few seconds (`MARKETING_LEAD_CONSENT_INTERVAL_MS`, default 5 s). */
export const leadConsentsJob: BackgroundJob = {
  name: 'site lead consents',
  everyMs: Number(process.env.MARKETING_LEAD_CONSENT_INTERVAL_MS) > 0 ? Number(process.env.MARKETING_LEAD_CONSENT_INTERVAL_MS) : 5_000,
  async run(db, _now, log, peers) {
    await recordLeadConsents(db, peers, log);
  },
};
