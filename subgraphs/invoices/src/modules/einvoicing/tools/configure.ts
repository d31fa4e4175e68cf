import { randomUUID } from 'node:crypto';
import { CuadraError, defineTool, nitCheckDigit, recordOutput, workspaceLocale, type InputOf } from '@cuadra/shared';
import { FISCAL_RESPONSIBILITIES, municipality, PARTY_TAX_SCHEMES, PAYMENT_MEANS_CODES } from '@cuadra/shared/dian';
import { counterId, counters, defaultNoteRange, openSettings, rangeOf, requireSettingsSealer, sealSettingsSecrets, settings, type IssuerProfile, type StoredSettingsDoc } from '../../../lib/settings.ts';
import { taxRegimeOf } from '../../../lib/tax-regime.ts';

const range = {
  type: 'object', additionalProperties: false, required: ['prefix', 'from', 'to'],
  properties: {
    prefix: { type: 'string', pattern: '^[A-Z0-9]{0,4}$' },
    from: { type: 'integer', minimum: 1, maximum: 9_999_999_999 },
    to: { type: 'integer', minimum: 1, maximum: 9_999_999_999 },
    resolution: { type: 'string', maxLength: 40 },
    valid_from: { type: 'string', format: 'date', description: 'The first day the resolution authorises (sts:AuthorizationPeriod/StartDate).' },
    valid_to: { type: 'string', format: 'date' },
  },
} as const;

/** A NIT with its check digit, as the configure input takes it (900123456-8). */
const NIT_INPUT = { type: 'string', minLength: 3, maxLength: 20 } as const;

/** The issuer as the DIAN documents need it (Anexo Técnico 1.9, AccountingSupplierParty). */
const ISSUER_INPUT = {
  type: 'object', additionalProperties: false, required: ['nit', 'name'],
  properties: {
    nit: NIT_INPUT,
    name: { type: 'string', minLength: 1, maxLength: 200 },
    legal_name: { type: 'string', minLength: 1, maxLength: 450, description: 'The name registered in the RUT (RegistrationName); default: name.' },
    person_type: { enum: ['legal', 'natural'] },
    responsibilities: { type: 'array', minItems: 1, maxItems: 5, uniqueItems: true, items: { enum: Object.keys(FISCAL_RESPONSIBILITIES) }, description: 'Fiscal responsibilities (TaxLevelCode, list 13.2.6.1): O-13 gran contribuyente, O-15 autorretenedor, O-23 agente de retención IVA, O-47 régimen simple, R-99-PN no aplica.' },
    tax_scheme: { enum: Object.keys(PARTY_TAX_SCHEMES), description: 'The tax the issuer answers for (list 13.2.6.2): 01 IVA, 04 INC, ZA both, ZZ none.' },
    address: {
      type: 'object', additionalProperties: false, required: ['line', 'municipality_code'],
      properties: {
        line: { type: 'string', minLength: 1, maxLength: 300 },
        municipality_code: { type: 'string', pattern: '^[0-9]{5}$', description: 'DANE DIVIPOLA code of the municipality (11001 Bogotá).' },
        postal_code: { type: 'string', pattern: '^[0-9]{6}$' },
      },
    },
    email: { type: 'string', format: 'email', maxLength: 254 },
    phone: { type: 'string', minLength: 3, maxLength: 40 },
  },
} as const;

const RANGE_VIEW = {
  type: 'object', additionalProperties: false, required: ['prefix', 'from', 'to', 'resolution', 'valid_to'],
  properties: {
    prefix: { type: 'string' }, from: { type: 'integer' }, to: { type: 'integer' },
    resolution: { type: ['string', 'null'] }, valid_from: { type: ['string', 'null'], format: 'date' }, valid_to: { type: ['string', 'null'], format: 'date' },
  },
} as const;

/**
 * JSON Schema of what einvoicing.configure answers: the stored set-up without its secrets (the
 * technical key and the software PIN are never given back). `_id` is the workspace id (the
 * settings document's key, passed through as stored); `environment` is DIAN's TipoAmbiente code,
 * `1` production or `2` test.
 */
export const SETTINGS_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['_id', 'issuer', 'environment', 'software_id', 'currency', 'numbering', 'updated_at'],
  properties: {
    _id: { type: 'string' },
    issuer: {
      type: 'object', additionalProperties: false, required: ['nit', 'check_digit', 'name'],
      properties: {
        nit: { type: 'string' }, check_digit: { type: 'integer' }, name: { type: 'string' }, legal_name: { type: ['string', 'null'] },
        person_type: { enum: ['legal', 'natural'] }, responsibilities: { type: 'array', items: { type: 'string' } }, tax_scheme: { type: 'string' },
        address: {
          anyOf: [{ type: 'null' }, {
            type: 'object', additionalProperties: false, required: ['line', 'municipality_code', 'postal_code', 'country'],
            properties: { line: { type: 'string' }, municipality_code: { type: ['string', 'null'] }, postal_code: { type: ['string', 'null'] }, country: { type: 'string' } },
          }],
        },
        email: { type: ['string', 'null'] }, phone: { type: ['string', 'null'] },
      },
    },
    software_maker: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['name', 'nit', 'check_digit'],
        properties: { name: { type: 'string' }, nit: { type: 'string' }, check_digit: { type: 'integer' } },
      }],
    },
    software_name: { type: ['string', 'null'] },
    payment_means: { type: ['string', 'null'] },
    environment: { enum: ['1', '2'] },
    software_id: { type: 'string' },
    currency: { type: 'string' },
    numbering: {
      type: 'object', additionalProperties: false, required: ['invoice', 'credit_note'],
      properties: { invoice: RANGE_VIEW, credit_note: RANGE_VIEW, debit_note: RANGE_VIEW },
    },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

/**
 * Sets up e-invoicing: the issuer's NIT, the software registered with DIAN (id, PIN), the
 * technical key of the numbering range and the ranges themselves. A range's counter starts at
 * `from` the first time the range is seen and is never moved back by a later configure.
 */
export const configure = defineTool({
  name: 'einvoicing.configure',
  description: 'Set up DIAN e-invoicing for a Colombian workspace: the issuer (NIT with check digit, name, RUT name, person type, fiscal responsibilities, tax, fiscal address with the DANE municipality code, e-mail, phone), environment (test/production), software id and PIN, who made the software (name, NIT) and its name, the technical key, the invoice, credit-note and debit-note numbering ranges (prefix, from, to, resolution, validity), the default means of payment and the base currency. Once set, technical_key and software_pin may be left out to keep the stored ones (they are never shown); so may the issuer\'s profile fields, the software maker and name, and the means of payment.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['issuer', 'numbering'],
    properties: {
      issuer: ISSUER_INPUT,
      software_maker: {
        type: 'object', additionalProperties: false, required: ['name', 'nit'],
        description: 'Who made the software (printed on the representation; its NIT is sts:ProviderID). Default: the issuer (its own software).',
        properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, nit: NIT_INPUT },
      },
      software_name: { type: 'string', minLength: 1, maxLength: 100 },
      payment_means: { enum: [...PAYMENT_MEANS_CODES], description: 'The means of payment invoices state unless they name their own (DIAN list 13.3.4.2: 10 cash, 42 bank deposit, 47 bank transfer, 48 credit card, ZZZ mutual agreement…).' },
      environment: { enum: ['test', 'production'] },
      // Secrets (CONTRACT §10): sealed in a held approval, never shown.
      technical_key: { type: 'string', pattern: '^[A-Za-z0-9]{8,128}$', writeOnly: true },
      software_id: { type: 'string', pattern: '^[A-Za-z0-9-]{8,64}$' },
      software_pin: { type: 'string', pattern: '^[A-Za-z0-9]{3,32}$', writeOnly: true },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
      numbering: { type: 'object', additionalProperties: false, required: ['invoice'], properties: { invoice: range, credit_note: range, debit_note: range } },
    },
  },
  output: recordOutput('settings', SETTINGS_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (taxRegimeOf(ctx.principal) !== 'dian') {
      throw new CuadraError('conflict', `DIAN e-invoicing is Colombian; this workspace is in ${workspaceLocale(ctx.principal).country} and issues its invoices under EN 16931 (einvoicing.peppol_configure).`);
    }
    const nit = parseNitInput(input.issuer.nit, '/issuer/nit');
    const maker = input.software_maker ? { name: input.software_maker.name.trim(), ...parseNitInput(input.software_maker.nit, '/software_maker/nit') } : null;
    const address = input.issuer.address;
    if (address && !municipality(address.municipality_code)) {
      throw new CuadraError('invalid_input', `${address.municipality_code} is not a municipality of DIAN's list (DANE DIVIPOLA codes: 11001 Bogotá, 05001 Medellín…).`, { field: '/issuer/address/municipality_code' });
    }
    const responsibilities = input.issuer.responsibilities;
    if (responsibilities?.includes('R-99-PN') && responsibilities.length > 1) {
      throw new CuadraError('invalid_input', 'R-99-PN means "no responsibility applies": it cannot be listed with others.', { field: '/issuer/responsibilities' });
    }
    for (const kind of ['invoice', 'credit_note', 'debit_note'] as const) {
      const r = input.numbering[kind];
      if (r && r.to < r.from) throw new CuadraError('invalid_input', 'A numbering range ends before it starts.', { field: `/numbering/${kind}/to` });
      if (r?.valid_from && r.valid_to && r.valid_to < r.valid_from) throw new CuadraError('invalid_input', 'A resolution ends before it starts.', { field: `/numbering/${kind}/valid_to` });
    }
    // The secrets are kept only sealed (CONTRACT §9): without a sealing key nothing is stored.
    const sealer = requireSettingsSealer();
    const stored = await settings(ctx.db).findById(ctx.workspace).lean();
    // The secrets are replaced when given, kept when left out (opened from either stored form); the first set-up needs both.
    const existing = stored && (input.technical_key === undefined || input.software_pin === undefined) ? openSettings(stored, sealer) : null;
    const technicalKey = input.technical_key ?? existing?.technical_key;
    const softwarePin = input.software_pin ?? existing?.software_pin;
    if (!technicalKey) throw new CuadraError('invalid_input', 'The first set-up needs the technical key of the numbering range.', { field: '/technical_key' });
    if (!softwarePin) throw new CuadraError('invalid_input', 'The first set-up needs the software PIN.', { field: '/software_pin' });
    const toRange = (r: InputOf<typeof range>) => ({ prefix: r.prefix, from: r.from, to: r.to, resolution: r.resolution ?? null, valid_from: r.valid_from ?? null, valid_to: r.valid_to ?? null });
    // What the issuer's profile leaves out keeps what was set (a form that shows only name and NIT must not erase the address DIAN needs).
    const kept = stored?.issuer;
    const issuer: IssuerProfile = {
      nit: nit.nit, check_digit: nit.check_digit, name: input.issuer.name.trim(), legal_name: input.issuer.legal_name?.trim() ?? kept?.legal_name ?? null,
      person_type: input.issuer.person_type ?? kept?.person_type ?? 'legal', responsibilities: responsibilities ?? kept?.responsibilities ?? ['R-99-PN'],
      tax_scheme: input.issuer.tax_scheme ?? kept?.tax_scheme ?? '01',
      address: address ? { line: address.line.trim(), municipality_code: address.municipality_code, postal_code: address.postal_code ?? null, country: 'CO' } : kept?.address ?? null,
      email: input.issuer.email ?? kept?.email ?? null, phone: input.issuer.phone ?? kept?.phone ?? null,
    };
    const doc: StoredSettingsDoc = {
      _id: ctx.workspace,
      issuer,
      software_maker: maker ?? stored?.software_maker ?? null,
      software_name: input.software_name ?? stored?.software_name ?? null,
      payment_means: input.payment_means ?? stored?.payment_means ?? null,
      environment: input.environment === 'production' ? '1' : '2',
      ...sealSettingsSecrets(ctx.workspace, { technical_key: technicalKey, software_pin: softwarePin }, sealer),
      software_id: input.software_id ?? stored?.software_id ?? randomUUID(),
      currency: input.currency ?? stored?.currency ?? 'COP',
      numbering: {
        invoice: toRange(input.numbering.invoice),
        credit_note: input.numbering.credit_note ? toRange(input.numbering.credit_note) : defaultNoteRange('credit_note'),
        debit_note: input.numbering.debit_note ? toRange(input.numbering.debit_note) : defaultNoteRange('debit_note'),
      },
      updated_at: ctx.now,
    };
    await settings(ctx.db).replaceOne({ _id: ctx.workspace }, doc, { upsert: true });
    for (const kind of ['invoice', 'credit_note', 'debit_note'] as const) {
      const r = rangeOf(doc.numbering, kind);
      await counters(ctx.db).updateOne({ _id: counterId(ctx.workspace, kind, r.prefix) }, { $setOnInsert: { workspace: ctx.workspace, next: r.from } }, { upsert: true });
    }
    const { technical_key_sealed: _k, software_pin_sealed: _p, ...visible } = doc;
    return { settings: { ...visible, updated_at: doc.updated_at.toISOString() } };
  },
});

/** A NIT with its check digit as given (dots and spaces allowed), refused at `field` when the digit is wrong. */
function parseNitInput(value: string, field: string): { nit: string; check_digit: number } {
  const m = /^(\d{6,15})-?(\d)$/.exec(value.replace(/[.\s]/g, ''));
  if (!m || nitCheckDigit(m[1]) !== Number(m[2])) {
    throw new CuadraError('invalid_input', 'The NIT needs its digits and a correct check digit, like 900123456-8.', { field });
  }
  return { nit: m[1], check_digit: Number(m[2]) };
}
