import { CuadraError, defineTool, parseNit, recordOutput } from '@cuadra/shared';
import { PROFILE_VIEW_SCHEMA, profileView, taxProfiles, VAT_MODES, type TaxProfileDoc } from '../model.ts';

/** Sets the workspace's tax profile (what the agenda's `tax` lane lists). */
export const configure = defineTool({
  name: 'tax.configure',
  description: 'Set the workspace\'s tax profile for the DIAN calendar (the agenda\'s tax lane): the NIT with its check digit (default: the e-invoicing issuer\'s), whether it is a large taxpayer (gran contribuyente: income tax in three instalments, VAT bimonthly), how it declares VAT (auto: bimonthly when last year\'s income reached 92,000 UVT, else four-monthly; bimonthly; four_monthly; not_responsible), whether it withholds at source (monthly) and declares income tax. Only the fields given change.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, minProperties: 1,
    properties: {
      nit: { type: ['string', 'null'], minLength: 7, maxLength: 20 },
      large_taxpayer: { type: 'boolean' },
      vat: { enum: VAT_MODES },
      withholding_agent: { type: 'boolean' },
      income_tax: { type: 'boolean' },
    },
  },
  output: recordOutput('profile', PROFILE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const $set: Partial<TaxProfileDoc> = { updated_at: ctx.now };
    if (input.nit !== undefined) {
      if (input.nit === null) Object.assign($set, { nit: null, check_digit: null });
      else {
        const nit = parseNit(input.nit);
        if (!nit) throw new CuadraError('invalid_input', `${input.nit} is not a NIT with a valid check digit (900373115-3).`, { field: '/nit' });
        Object.assign($set, { nit: nit.number, check_digit: nit.checkDigit });
      }
    }
    for (const key of ['large_taxpayer', 'vat', 'withholding_agent', 'income_tax'] as const) if (input[key] !== undefined) Object.assign($set, { [key]: input[key] });
    if ($set.large_taxpayer === true && input.vat === 'four_monthly') throw new CuadraError('invalid_input', 'A large taxpayer declares VAT bimonthly (art. 600 Estatuto Tributario).', { field: '/vat' });
    const defaults = { nit: null, check_digit: null, large_taxpayer: false, vat: 'auto', withholding_agent: true, income_tax: true };
    const $setOnInsert = Object.fromEntries(Object.entries(defaults).filter(([k]) => !(k in $set)));
    const doc = await taxProfiles(ctx.db).findOneAndUpdate(
      { _id: ctx.workspace, workspace: ctx.workspace },
      { $set, $setOnInsert: { ...$setOnInsert } },
      { upsert: true, returnDocument: 'after' },
    ).lean();
    return { profile: profileView(doc!) };
  },
});
