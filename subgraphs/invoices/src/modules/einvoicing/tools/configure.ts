import { randomUUID } from 'node:crypto';
import { CuadraError, defineTool, nitCheckDigit, recordOutput, type InputOf } from '@cuadra/shared';
import { counterId, counters, defaultNoteRange, openSettings, rangeOf, requireSettingsSealer, sealSettingsSecrets, settings, type StoredSettingsDoc } from '../../../lib/settings.ts';

const range = {
  type: 'object', additionalProperties: false, required: ['prefix', 'from', 'to'],
  properties: {
    prefix: { type: 'string', pattern: '^[A-Z0-9]{0,4}$' },
    from: { type: 'integer', minimum: 1, maximum: 9_999_999_999 },
    to: { type: 'integer', minimum: 1, maximum: 9_999_999_999 },
    resolution: { type: 'string', maxLength: 40 },
    valid_to: { type: 'string', format: 'date' },
  },
} as const;

const RANGE_VIEW = {
  type: 'object', additionalProperties: false, required: ['prefix', 'from', 'to', 'resolution', 'valid_to'],
  properties: {
    prefix: { type: 'string' }, from: { type: 'integer' }, to: { type: 'integer' },
    resolution: { type: ['string', 'null'] }, valid_to: { type: ['string', 'null'], format: 'date' },
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
      properties: { nit: { type: 'string' }, check_digit: { type: 'integer' }, name: { type: 'string' } },
    },
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
  description: 'Set up DIAN e-invoicing for the workspace: issuer NIT (with check digit) and name, environment (test/production), software id and PIN, the technical key, the invoice, credit-note and debit-note numbering ranges (prefix, from, to, resolution) and the base currency. Once set, technical_key and software_pin may be left out to keep the stored ones (they are never shown).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['issuer', 'numbering'],
    properties: {
      issuer: {
        type: 'object', additionalProperties: false, required: ['nit', 'name'],
        properties: { nit: { type: 'string', minLength: 3, maxLength: 20 }, name: { type: 'string', minLength: 1, maxLength: 200 } },
      },
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
    const m = /^(\d{6,15})-?(\d)$/.exec(input.issuer.nit.replace(/[.\s]/g, ''));
    if (!m || nitCheckDigit(m[1]) !== Number(m[2])) {
      throw new CuadraError('invalid_input', 'The issuer NIT needs its digits and a correct check digit, like 900123456-8.', { field: '/issuer/nit' });
    }
    for (const kind of ['invoice', 'credit_note', 'debit_note'] as const) {
      const r = input.numbering[kind];
      if (r && r.to < r.from) throw new CuadraError('invalid_input', 'A numbering range ends before it starts.', { field: `/numbering/${kind}/to` });
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
    const toRange = (r: InputOf<typeof range>) => ({ prefix: r.prefix, from: r.from, to: r.to, resolution: r.resolution ?? null, valid_to: r.valid_to ?? null });
    const doc: StoredSettingsDoc = {
      _id: ctx.workspace,
      issuer: { nit: m[1], check_digit: Number(m[2]), name: input.issuer.name.trim() },
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
