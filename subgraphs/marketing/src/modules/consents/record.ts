import { assignPosition, type Positioned } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { consentId, consents, type Channel, type ConsentDoc, type ConsentEvidence } from './model.ts';

/**
 * Records a consent change: one conditional write on the party's consent document (created on its
 * first change), its history kept. `from` limits the change to a current status (a confirmation only
 * moves a pending consent). Answers the document after, or null when `from` did not hold.
 */
export async function recordConsent(db: Connection, change: {
  workspace: string; party_id: string; channel: Channel; status: ConsentDoc['status']; evidence: ConsentEvidence; address?: string | null; purpose?: string;
  from?: ConsentDoc['status'][];
}): Promise<ConsentDoc | null> {
  const _id = consentId(change.workspace, change.party_id, change.channel);
  const model = consents(db);
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await model.findOne({ _id }).lean();
    if (!current) {
      if (change.from && !change.from.includes('withdrawn')) return null;
      const positioned: Positioned = await assignPosition(db, 'marketing_consents', change.workspace);
      const doc: ConsentDoc & Positioned = {
        _id, workspace: change.workspace, party_id: change.party_id, channel: change.channel, address: change.address ?? null, status: change.status,
        purpose: change.purpose ?? 'Mensajes comerciales y de mercadeo', evidence: change.evidence, history: [{ status: change.status, evidence: change.evidence }],
        created_at: change.evidence.at, updated_at: change.evidence.at, ...positioned,
      };
      try {
        await model.create(doc);
        return doc;
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
        continue; // made at the same moment: change that one
      }
    }
    if (change.from && !change.from.includes(current.status)) return null;
    const after = await model.findOneAndUpdate(
      { _id, status: current.status, updated_at: current.updated_at },
      {
        $set: { status: change.status, evidence: change.evidence, updated_at: change.evidence.at, ...(change.address !== undefined ? { address: change.address } : {}), ...(change.purpose ? { purpose: change.purpose } : {}) },
        $push: { history: { status: change.status, evidence: change.evidence } },
      },
      { returnDocument: 'after' },
    ).lean();
    if (after) return after;
  }
  throw new Error('The consent kept changing while it was recorded.');
}
