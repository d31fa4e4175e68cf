import type { Connection } from 'mongoose';
import { readAudience, type AudienceParty, type AudienceRule } from '../../lib/crm.ts';
import type { PeerGraph } from '@cuadra/shared';
import { consentId, consents, suppressionId, suppressions, type ConsentDoc, type SuppressionDoc } from '../consents/model.ts';
import type { Exclusion } from './model.ts';

/** Who a campaign reaches now, and who it leaves out and why. */
export interface AudiencePlan {
  recipients: (AudienceParty & { address: string })[];
  excluded: { party_id: string; name: string; reason: Exclusion }[];
}

/** Reads documents by `_id` in slices (indexed lookups, never a scan). */
async function byIds<T>(find: (ids: string[]) => Promise<T[]>, ids: string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += 500) out.push(...(await find(ids.slice(i, i + 500))));
  return out;
}

/**
 * The audience of a rule minus everyone a message may not reach: no e-mail consent granted (Ley 1581:
 * authorisation per channel; a pending double opt-in is not consent), an address unsubscribed, hard
 * bounced or that complained, no address, or an address another party of the audience already has.
 */
export async function planAudience(db: Connection, graph: PeerGraph | undefined, workspace: string, rule: AudienceRule): Promise<AudiencePlan> {
  const parties = await readAudience(graph, rule);
  const consentDocs = await byIds<ConsentDoc>((ids) => consents(db).find({ _id: { $in: ids } }).lean(), parties.map((p) => consentId(workspace, p.id, 'email')));
  const consentOf = new Map(consentDocs.filter((c) => c.workspace === workspace).map((c) => [c.party_id, c]));
  const addresses = [...new Set(parties.filter((p) => p.email).map((p) => p.email!.toLowerCase()))];
  const suppressed = new Map((await byIds<SuppressionDoc>((ids) => suppressions(db).find({ _id: { $in: ids } }).lean(), addresses.map((a) => suppressionId(workspace, a))))
    .filter((s) => s.workspace === workspace).map((s) => [s.address, s]));
  const plan: AudiencePlan = { recipients: [], excluded: [] };
  const taken = new Set<string>();
  for (const p of parties) {
    const address = p.email?.toLowerCase() ?? null;
    const consent = consentOf.get(p.id);
    const out = (reason: Exclusion) => plan.excluded.push({ party_id: p.id, name: p.name, reason });
    if (!address) out('no_email');
    else if (suppressed.has(address)) out(suppressed.get(address)!.reason === 'complained' ? 'complained' : suppressed.get(address)!.reason === 'bounced' ? 'bounced' : 'unsubscribed');
    // Consent is for the address it was given for: a changed address has to be authorised again.
    else if (!consent || consent.status !== 'granted' || (consent.address !== null && consent.address !== address)) out('no_consent');
    else if (taken.has(address)) out('duplicate_address');
    else {
      taken.add(address);
      plan.recipients.push({ ...p, address });
    }
  }
  return plan;
}

/** Counts of exclusions by reason. */
export function countExclusions(excluded: AudiencePlan['excluded']): Partial<Record<Exclusion, number>> {
  const counts: Partial<Record<Exclusion, number>> = {};
  for (const e of excluded) counts[e.reason] = (counts[e.reason] ?? 0) + 1;
  return counts;
}
