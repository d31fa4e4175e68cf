import { modelOn, sha256 } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { FiscalDocument } from '../lib/fiscal-document.ts';
import type { SettingsDoc } from '../lib/settings.ts';
import { certificates, signingKey } from './certificate.ts';
import { renderUbl } from './ubl.ts';
import { signUbl } from './xades.ts';

/**
 * A document as signed, kept by invoice id: the signature carries its SigningTime, so signing again
 * would give another document. What was signed once is what the authority, the buyer and every
 * later render receive.
 */
export interface SignedDoc {
  _id: string;
  workspace: string;
  xml: string;
  /** The certificate it was signed with (SHA-256, base64). */
  fingerprint: string;
  /** SHA-256 of the unsigned document it signed: a rendering that changed since (absent: signed before this was kept) is signed again until the authority accepts it. */
  source_sha256?: string;
  signed_at: Date;
}

const signedSchema = new Schema<SignedDoc>(
  { _id: String, workspace: { type: String, required: true }, xml: { type: String, required: true }, fingerprint: String, source_sha256: String, signed_at: Date },
  { versionKey: false },
);

/** Signed documents (`_id` = invoice id). */
export function signedDocuments(db: Connection): Model<SignedDoc> {
  return modelOn<SignedDoc>(db, 'EinvoicingSigned', signedSchema, 'einvoicing_signed');
}

/**
 * The UBL of a posted document as the authority receives it: signed (XAdES-EPES) when the
 * workspace uploaded a certificate, unsigned otherwise. A signature made with the current
 * certificate over the same document is reused (even after that certificate expired: it was valid
 * when it signed); one made with a replaced certificate, or over a rendering that has changed since
 * (the issuer's set-up was completed, say) is made again — unless the authority already accepted
 * the document, which then never changes. `store` keeps a new signature (posting and sending do; a
 * read only looks). Two calls signing at once keep the first.
 */
export async function authorityXml(db: Connection, workspace: string, doc: FiscalDocument, s: SettingsDoc, credited: FiscalDocument | null, now: Date, opts: { store: boolean }): Promise<string> {
  const current = await certificates(db).findById(workspace, { fingerprint: 1 }).lean();
  const unsigned = renderUbl(doc, s, credited);
  if (!current) return unsigned;
  const model = signedDocuments(db);
  const kept = await model.findOne({ _id: doc._id, workspace }).lean();
  const source = sha256(unsigned);
  if (kept && (doc.authority?.status === 'accepted' || (kept.fingerprint === current.fingerprint && kept.source_sha256 === source))) return kept.xml;
  const key = await signingKey(db, workspace, now);
  if (!key) return unsigned;
  const xml = signUbl(unsigned, key, now);
  if (!opts.store) return xml;
  if (kept) {
    await model.replaceOne({ _id: doc._id, workspace, fingerprint: kept.fingerprint, signed_at: kept.signed_at }, { _id: doc._id, workspace, xml, fingerprint: key.fingerprint, source_sha256: source, signed_at: now });
  } else {
    try {
      await model.create({ _id: doc._id, workspace, xml, fingerprint: key.fingerprint, source_sha256: source, signed_at: now });
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
  }
  return (await model.findOne({ _id: doc._id, workspace }).lean())?.xml ?? xml;
}
