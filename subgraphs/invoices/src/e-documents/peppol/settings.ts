import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import type { VatCategory } from '../../lib/tax-regime.ts';

/** Peppol participant identifier: an EAS scheme (`0208`, `9944`, … from the Peppol code list) and the id. */
export interface PeppolEndpoint {
  scheme: string;
  id: string;
}

/** A postal address as EN 16931 names it (BG-5 / BG-8); `country` is ISO 3166-1 alpha-2. */
export interface PeppolAddress {
  street: string | null;
  city: string | null;
  postal_code: string | null;
  country: string;
}


/**
 * A workspace's Peppol BIS Billing 3.0 set-up: the seller as the buyer's access point sees it.
 * A workspace is "outside Colombia" for e-invoicing when it has this document: its `country`
 * is never `CO` (Colombian workspaces issue DIAN's UBL through einvoicing.configure instead).
 * `_id` is the workspace id.
 */
export interface PeppolSettingsDoc {
  _id: string;
  /** The seller's country (ISO 3166-1 alpha-2), not CO. */
  country: string;
  /** Seller name (BT-27) and trading name (BT-28). */
  name: string;
  trading_name: string | null;
  /** Seller VAT identifier with its country prefix (BT-31), e.g. `BE0123456749`; null if not VAT registered. */
  vat_id: string | null;
  /** Seller legal registration identifier (BT-30), e.g. the enterprise number. */
  legal_id: string | null;
  endpoint: PeppolEndpoint;
  address: PeppolAddress;
  email: string | null;
  /** Payment means (BG-16): UNCL4461 code (30 credit transfer, 58 SEPA credit transfer, …) with the account. */
  payment: { means_code: string; iban: string; bic: string | null; account_name: string | null } | null;
  /** Payment terms text (BT-20), e.g. "Net 30 days". */
  payment_terms: string | null;
  /**
   * The VAT category of a 0 % line unless the export names another: Z (zero rated), E (exempt),
   * AE (reverse charge), K (intra-community), G (export) or O (not subject), with the exemption
   * reason EN 16931 requires for all but Z.
   */
  zero_rate: { category: Exclude<VatCategory, 'S'>; reason_code: string | null; reason: string | null };
  updated_at: Date;
}

const peppolSettingsSchema = new Schema<PeppolSettingsDoc>(
  {
    _id: { type: String, required: true },
    country: { type: String, required: true },
    name: { type: String, required: true },
    trading_name: { type: String, default: null },
    vat_id: { type: String, default: null },
    legal_id: { type: String, default: null },
    endpoint: { type: Schema.Types.Mixed, required: true },
    address: { type: Schema.Types.Mixed, required: true },
    email: { type: String, default: null },
    payment: { type: Schema.Types.Mixed, default: null },
    payment_terms: { type: String, default: null },
    zero_rate: { type: Schema.Types.Mixed, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);

/** The Peppol settings collection (one document per workspace). */
export function peppolSettings(db: Connection): Model<PeppolSettingsDoc> {
  return modelOn<PeppolSettingsDoc>(db, 'PeppolSettings', peppolSettingsSchema, 'peppol_settings');
}
