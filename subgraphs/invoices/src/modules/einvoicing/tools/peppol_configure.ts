import { CuadraError, defineTool, recordOutput, workspaceLocale } from '@cuadra/shared';
import { peppolSettings, type PeppolSettingsDoc } from '../../../e-documents/peppol/settings.ts';
import { taxRegimeOf, VAT_CATEGORIES } from '../../../lib/tax-regime.ts';

const TEXT = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;
/** A Peppol participant id: EAS scheme (4 digits from the Peppol code list) and the identifier. */
export const ENDPOINT_INPUT = {
  type: 'object', additionalProperties: false, required: ['scheme', 'id'],
  properties: { scheme: { type: 'string', pattern: '^[0-9]{4}$' }, id: { type: 'string', pattern: '^[A-Za-z0-9.:_-]{1,100}$' } },
} as const;
export const ADDRESS_INPUT = {
  type: 'object', additionalProperties: false, required: ['country'],
  properties: { street: TEXT(200), city: TEXT(100), postal_code: TEXT(20), country: { type: 'string', pattern: '^[A-Z]{2}$' } },
} as const;
/** A VAT identifier with its ISO 3166-1 country prefix (EL for Greece), BR-CO-09. */
export const VAT_ID_INPUT = { type: 'string', pattern: '^[A-Z]{2}[A-Za-z0-9+*.]{2,13}$' } as const;

const NULLABLE = { type: ['string', 'null'] } as const;
const ENDPOINT_VIEW = { type: 'object', additionalProperties: false, required: ['scheme', 'id'], properties: { scheme: { type: 'string' }, id: { type: 'string' } } } as const;
const ADDRESS_VIEW = {
  type: 'object', additionalProperties: false, required: ['street', 'city', 'postal_code', 'country'],
  properties: { street: NULLABLE, city: NULLABLE, postal_code: NULLABLE, country: { type: 'string' } },
} as const;

/** JSON Schema of the stored Peppol settings as the tools answer them. */
export const PEPPOL_SETTINGS_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['country', 'name', 'trading_name', 'vat_id', 'legal_id', 'endpoint', 'address', 'email', 'payment', 'payment_terms', 'zero_rate', 'updated_at'],
  properties: {
    country: { type: 'string' }, name: { type: 'string' }, trading_name: NULLABLE, vat_id: NULLABLE, legal_id: NULLABLE,
    endpoint: ENDPOINT_VIEW, address: ADDRESS_VIEW, email: NULLABLE,
    payment: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['means_code', 'iban', 'bic', 'account_name'],
        properties: { means_code: { type: 'string' }, iban: { type: 'string' }, bic: NULLABLE, account_name: NULLABLE },
      }],
    },
    payment_terms: NULLABLE,
    zero_rate: {
      type: 'object', additionalProperties: false, required: ['category', 'reason_code', 'reason'],
      properties: { category: { enum: VAT_CATEGORIES.filter((c) => c !== 'S') }, reason_code: NULLABLE, reason: NULLABLE },
    },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The settings as answered (without the workspace key). */
export function peppolSettingsView(d: PeppolSettingsDoc) {
  const { _id: _w, updated_at, ...rest } = d;
  return { ...rest, updated_at: new Date(updated_at).toISOString() };
}

/**
 * Sets up Peppol BIS Billing 3.0 for a workspace outside Colombia: the seller as EN 16931 names
 * it (country, name, VAT and legal ids, Peppol endpoint, address), the account invoices are paid
 * to, and the VAT category of 0 % lines. A Colombian workspace is refused: it issues DIAN's UBL.
 */
export const peppolConfigure = defineTool({
  name: 'einvoicing.peppol_configure',
  description: 'Set up Peppol BIS Billing 3.0 e-invoicing for a workspace outside Colombia: seller country, legal name, VAT id, legal registration id, Peppol endpoint (EAS scheme and id), address, e-mail, payment account (IBAN, BIC, means code 30/58), payment terms, and the VAT category of 0 % lines (Z, E, AE, K, G or O, with the exemption reason). Colombian workspaces use einvoicing.configure (DIAN).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'endpoint', 'address'],
    properties: {
      country: { type: 'string', pattern: '^[A-Z]{2}$', description: 'The workspace\'s own country (the default); another is refused.' },
      name: TEXT(200),
      trading_name: TEXT(200),
      vat_id: VAT_ID_INPUT,
      legal_id: { type: 'string', pattern: '^[A-Za-z0-9.:_/ -]{1,50}$' },
      endpoint: ENDPOINT_INPUT,
      address: ADDRESS_INPUT,
      email: { type: 'string', format: 'email', maxLength: 254 },
      payment: {
        type: 'object', additionalProperties: false, required: ['iban'],
        properties: {
          means_code: { enum: ['30', '31', '42', '58'] },
          iban: { type: 'string', pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$' },
          bic: { type: 'string', pattern: '^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$' },
          account_name: TEXT(200),
        },
      },
      payment_terms: TEXT(500),
      zero_rate: {
        type: 'object', additionalProperties: false, required: ['category'],
        properties: {
          category: { enum: ['Z', 'E', 'AE', 'K', 'G', 'O'] },
          reason_code: { type: 'string', pattern: '^VATEX-[A-Z0-9-]{1,30}$' },
          reason: TEXT(300),
        },
      },
    },
  },
  output: recordOutput('settings', PEPPOL_SETTINGS_VIEW_SCHEMA),
  async handler(input, ctx) {
    // The workspace's country decides its regime (lib/tax-regime.ts): Colombia issues DIAN's documents, not Peppol's.
    const own = workspaceLocale(ctx.principal).country;
    if (taxRegimeOf(ctx.principal) === 'dian') {
      throw new CuadraError('conflict', 'A Colombian workspace issues DIAN e-invoices (einvoicing.configure), not Peppol.');
    }
    const country = input.country ?? own;
    if (country !== own) throw new CuadraError('invalid_input', `This workspace is in ${own}: the seller's country is ${own}.`, { field: '/country' });
    if (input.address.country !== country) {
      throw new CuadraError('invalid_input', 'The seller\'s address must be in the seller\'s country.', { field: '/address/country' });
    }
    const vatPrefix = country === 'GR' ? 'EL' : country;
    if (input.vat_id && !input.vat_id.startsWith(vatPrefix)) {
      throw new CuadraError('invalid_input', `A VAT identifier of ${country} starts with ${vatPrefix}.`, { field: '/vat_id' });
    }
    if (!input.vat_id && !input.legal_id) {
      // BR-CO-26: the buyer must be able to identify the seller by one of them.
      throw new CuadraError('invalid_input', 'Give the seller\'s VAT identifier or legal registration identifier.', { field: '/vat_id' });
    }
    const zero = input.zero_rate ?? { category: 'Z' as const };
    if (zero.category === 'Z' && (zero.reason || zero.reason_code)) {
      throw new CuadraError('invalid_input', 'Zero-rated (Z) lines take no exemption reason.', { field: '/zero_rate/reason' });
    }
    if (zero.category === 'E' && !zero.reason && !zero.reason_code) {
      throw new CuadraError('invalid_input', 'Exempt (E) lines need the exemption reason or its VATEX code.', { field: '/zero_rate/reason' });
    }
    const doc: PeppolSettingsDoc = {
      _id: ctx.workspace,
      country,
      name: input.name.trim(),
      trading_name: input.trading_name?.trim() ?? null,
      vat_id: input.vat_id ?? null,
      legal_id: input.legal_id ?? null,
      endpoint: { scheme: input.endpoint.scheme, id: input.endpoint.id },
      address: { street: input.address.street ?? null, city: input.address.city ?? null, postal_code: input.address.postal_code ?? null, country: input.address.country },
      email: input.email ?? null,
      payment: input.payment ? { means_code: input.payment.means_code ?? '30', iban: input.payment.iban, bic: input.payment.bic ?? null, account_name: input.payment.account_name ?? null } : null,
      payment_terms: input.payment_terms ?? null,
      zero_rate: { category: zero.category, reason_code: zero.reason_code ?? null, reason: zero.reason ?? null },
      updated_at: ctx.now,
    };
    await peppolSettings(ctx.db).replaceOne({ _id: ctx.workspace }, doc, { upsert: true });
    return { settings: peppolSettingsView(doc) };
  },
});
