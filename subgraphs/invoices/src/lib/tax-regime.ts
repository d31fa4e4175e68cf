import { CuadraError, workspaceLocale, type Principal } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { peppolSettings } from '../e-documents/peppol/settings.ts';
import { percentFromPpm, VAT_RATES_PPM } from './money.ts';

/**
 * A workspace's tax regime, decided by its country (Principal.country, stated by the gateway):
 * Colombia → DIAN — VAT (IVA) at 19, 5 or 0 %, Colombian withholdings, documents numbered from
 * DIAN's authorised ranges with their CUFE/CUDE and sent to DIAN; anywhere else → EN 16931 — any
 * VAT rate with its category (S, Z, E, AE, K, G, O) and exemption reason, no Colombian
 * withholdings, documents numbered from the workspace's own series and exported as Peppol BIS 3.
 */
export type TaxRegime = 'dian' | 'en16931';

/** The regime of the workspace a principal acts in. */
export function taxRegimeOf(principal: Pick<Principal, 'country'>): TaxRegime {
  return workspaceLocale(principal).country === 'CO' ? 'dian' : 'en16931';
}

/** The VAT categories of EN 16931 (UNCL5305 subset): standard, zero, exempt, reverse charge, intra-EU, export, not subject. */
export const VAT_CATEGORIES = ['S', 'Z', 'E', 'AE', 'K', 'G', 'O'] as const;
export type VatCategory = (typeof VAT_CATEGORIES)[number];

/** A line's VAT category under EN 16931 and, for all but S and Z, why no VAT is charged (BT-120/BT-121). */
export interface LineVat {
  category: VatCategory;
  reason_code: string | null;
  reason: string | null;
}

/** Default exemption reasons (VATEX codes of the CEF list) for the categories whose reason is always the same. */
export const DEFAULT_EXEMPTION: Partial<Record<VatCategory, { code: string; text: string }>> = {
  AE: { code: 'VATEX-EU-AE', text: 'Reverse charge' },
  K: { code: 'VATEX-EU-IC', text: 'Intra-Community supply' },
  G: { code: 'VATEX-EU-G', text: 'Export outside the EU' },
  O: { code: 'VATEX-EU-O', text: 'Not subject to VAT' },
};

/** The JSON Schema properties of a line's VAT under EN 16931 (refused in Colombia, where VAT is IVA at 19, 5 or 0 %). */
export const LINE_VAT_FIELDS = {
  tax_category: { enum: [...VAT_CATEGORIES], description: 'Outside Colombia: the EN 16931 VAT category (S standard, Z zero rated, E exempt, AE reverse charge, K intra-community, G export, O not subject). Default S when the rate is above 0, else the workspace\'s Peppol category for 0 % lines.' },
  tax_exemption_reason: { type: 'string', minLength: 1, maxLength: 300 },
  tax_exemption_reason_code: { type: 'string', pattern: '^VATEX-[A-Z0-9-]{1,30}$' },
} as const;

/** JSON Schema of a stored line's VAT category (EN 16931 lines only). */
export const LINE_VAT_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['category', 'reason_code', 'reason'],
  properties: { category: { enum: [...VAT_CATEGORIES] }, reason_code: { type: ['string', 'null'] }, reason: { type: ['string', 'null'] } },
} as const;

/** A line's VAT as given (rate and, outside Colombia, category and reason). */
export interface LineTaxInput {
  tax_rate_ppm: number;
  tax_category?: VatCategory;
  tax_exemption_reason?: string;
  tax_exemption_reason_code?: string;
  withholdings?: readonly unknown[];
}

/** What a regime needs to check lines: for EN 16931, the category of 0 % lines the workspace set up (einvoicing.peppol_configure), if any. */
export interface RegimeContext {
  regime: TaxRegime;
  zeroRate: LineVat | null;
}

/** The regime of the call and what it needs to check lines. */
export async function regimeContext(db: Connection, workspace: string, principal: Pick<Principal, 'country'>): Promise<RegimeContext> {
  const regime = taxRegimeOf(principal);
  if (regime === 'dian') return { regime, zeroRate: null };
  const s = await peppolSettings(db).findById(workspace, { zero_rate: 1 }).lean();
  return { regime, zeroRate: s ? { ...s.zero_rate } : null };
}

/**
 * Checks one line's VAT against the regime and gives its EN 16931 category (null under DIAN).
 * DIAN: the rate is 19, 5 or 0 % and no EN category is given. EN 16931: S carries a rate above 0,
 * every other category 0 % (BR-S-05, BR-Z-05 …); Z takes no exemption reason (BR-Z-10), E, AE, K,
 * G and O need one (BR-E-10 …; AE, K, G and O have a standard one). Refused at `field`/….
 */
export function lineVat(rc: RegimeContext, l: LineTaxInput, field: string): LineVat | null {
  if (rc.regime === 'dian') {
    if (!(VAT_RATES_PPM as readonly number[]).includes(l.tax_rate_ppm)) {
      throw new CuadraError('invalid_input', `A Colombian invoice charges IVA at 19, 5 or 0 %, not ${percentFromPpm(l.tax_rate_ppm)} %.`, { field: `${field}/tax_rate_ppm` });
    }
    for (const key of ['tax_category', 'tax_exemption_reason', 'tax_exemption_reason_code'] as const) {
      if (l[key] !== undefined) throw new CuadraError('invalid_input', 'VAT categories are EN 16931\'s; a Colombian line carries IVA at its rate (19, 5 or 0 %).', { field: `${field}/${key}` });
    }
    return null;
  }
  if (l.withholdings && l.withholdings.length > 0) {
    throw new CuadraError('invalid_input', 'Withholdings (retención en la fuente, ReteIVA, ReteICA) are Colombian; this workspace\'s invoices follow EN 16931.', { field: `${field}/withholdings` });
  }
  const given = l.tax_exemption_reason !== undefined || l.tax_exemption_reason_code !== undefined;
  let vat: LineVat;
  if (l.tax_category) vat = { category: l.tax_category, reason_code: l.tax_exemption_reason_code ?? null, reason: l.tax_exemption_reason ?? null };
  else if (l.tax_rate_ppm > 0) vat = { category: 'S', reason_code: l.tax_exemption_reason_code ?? null, reason: l.tax_exemption_reason ?? null };
  else if (rc.zeroRate && !given) vat = { ...rc.zeroRate };
  else if (rc.zeroRate) vat = { category: rc.zeroRate.category, reason_code: l.tax_exemption_reason_code ?? null, reason: l.tax_exemption_reason ?? null };
  else throw new CuadraError('invalid_input', 'A 0 % line needs its VAT category (Z zero rated, E exempt, AE reverse charge, K intra-community, G export or O not subject), or the workspace\'s category for 0 % lines (einvoicing.peppol_configure).', { field: `${field}/tax_category` });
  if (vat.category === 'S' && l.tax_rate_ppm === 0) throw new CuadraError('invalid_input', 'Standard rate (S) needs a rate above 0 (BR-S-05).', { field: `${field}/tax_rate_ppm` });
  if (vat.category !== 'S' && l.tax_rate_ppm !== 0) throw new CuadraError('invalid_input', `Category ${vat.category} carries no VAT (BR-${vat.category}-05): its rate is 0.`, { field: `${field}/tax_rate_ppm` });
  if ((vat.category === 'S' || vat.category === 'Z') && (vat.reason || vat.reason_code)) {
    throw new CuadraError('invalid_input', `Category ${vat.category} takes no exemption reason (BR-${vat.category}-10).`, { field: `${field}/tax_exemption_reason` });
  }
  if (vat.category !== 'S' && vat.category !== 'Z' && !vat.reason && !vat.reason_code) {
    const standard = DEFAULT_EXEMPTION[vat.category];
    if (!standard) throw new CuadraError('invalid_input', `Category ${vat.category} needs an exemption reason or its VATEX code (BR-${vat.category}-10).`, { field: `${field}/tax_exemption_reason` });
    vat = { ...vat, reason_code: standard.code, reason: standard.text };
  }
  return vat;
}

/** The document's withholding rates, refused outside Colombia (they are Colombian: retención en la fuente, ReteIVA, ReteICA). */
export function withholdingRatesFor<T>(rc: RegimeContext, rates: readonly T[] | undefined, field = '/withholdings'): T[] {
  if (rates?.length && rc.regime !== 'dian') {
    throw new CuadraError('invalid_input', 'Withholdings (retención en la fuente, ReteIVA, ReteICA) are Colombian; this workspace\'s invoices follow EN 16931.', { field });
  }
  return [...(rates ?? [])];
}

/** JSON Schema of a VAT rate in parts per million: Colombia's 19, 5 or 0 %, or another country's rate (checked against the regime by {@link vatRateFor}). */
export const VAT_RATE_INPUT = {
  type: 'integer', minimum: 0, maximum: 1_000_000,
  description: 'VAT in parts per million. Colombia: 190000 (19 %), 50000 (5 %) or 0; elsewhere the country\'s rate (210000 = 21 %).',
} as const;

/** A catalog VAT rate, refused at `field` when the regime does not have it (Colombia: 19, 5 or 0 %). */
export function vatRateFor(principal: Pick<Principal, 'country'>, rate: number, field = '/tax_rate_ppm'): number {
  if (taxRegimeOf(principal) === 'dian' && !(VAT_RATES_PPM as readonly number[]).includes(rate)) {
    throw new CuadraError('invalid_input', `Colombian VAT (IVA) is 19, 5 or 0 %, not ${percentFromPpm(rate)} %.`, { field });
  }
  return rate;
}
