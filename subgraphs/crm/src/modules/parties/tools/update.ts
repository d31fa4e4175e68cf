import { addGrams, CuadraError, defineTool, ID_SCHEMA, recordOutput, removeGrams, trigramsOf } from '@cuadra/shared';
import { parties, partySearchTexts, partyView, type PartyDoc, PARTY_VIEW_SCHEMA } from '../model.ts';
import { parseTaxId, partyFields } from './create.ts';
import { checkCustom, mergeCustom, readFields } from '../../crm_fields/model.ts';
import { parseFiscal } from '../fiscal.ts';


/**
 * Changes a party: the fields given replace the stored ones (addresses, contacts and tags as
 * whole lists). Documents already issued keep the buyer as it was then (they hold a snapshot).
 */
export const update = defineTool({
  name: 'parties.update',
  description: 'Change a party: name, kind, tax id (a NIT with its check digit), e-mail, phone, addresses, contacts, tags or fiscal profile (replaced whole). Lists given replace the stored lists. Archived parties cannot be changed.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    minProperties: 2,
    properties: { id: ID_SCHEMA, ...partyFields },
  },
  output: recordOutput('party', PARTY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set: Partial<PartyDoc> = { updated_at: ctx.now };
    if (input.name) Object.assign(set, { name: input.name.trim(), name_lc: input.name.trim().toLowerCase() });
    if (input.kind) set.kind = input.kind;
    if (input.tax_id) {
      const taxId = parseTaxId(input.tax_id)!;
      Object.assign(set, { tax_id: taxId, tax_key: `${ctx.workspace}:${taxId.type}:${taxId.number}` });
    }
    if (input.fiscal) set.fiscal = parseFiscal(input.fiscal);
    for (const key of ['email', 'phone', 'addresses', 'contacts', 'tags'] as const) {
      if (input[key] !== undefined) (set as Record<string, unknown>)[key] = input[key];
    }
    if (input.custom) {
      // Given keys replace, null clears one; archived fields keep their values (crm_fields).
      checkCustom(await readFields(ctx.db, ctx.workspace), 'party', input.custom, false);
      const stored = await parties(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }, { custom: 1 }).lean();
      set.custom = mergeCustom(stored?.custom, input.custom);
    }
    // The search trigrams of new texts are kept before the party has them, stale ones dropped after (search-grams.ts).
    const searched = set.name_lc !== undefined || set.email !== undefined || set.tax_id !== undefined;
    const before = searched ? await parties(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }, { pos: 1, name_lc: 1, email: 1, tax_id: 1 }).lean<Pick<PartyDoc, 'name_lc' | 'email' | 'tax_id'> & { pos?: number }>() : null;
    const grams = (p: Pick<PartyDoc, 'name_lc' | 'email' | 'tax_id'>) => trigramsOf(partySearchTexts(p));
    if (before && typeof before.pos === 'number') await addGrams(ctx.db, 'parties', ctx.workspace, before.pos, grams({ ...before, ...set } as PartyDoc));
    let after: PartyDoc | null;
    try {
      after = await parties(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace, status: 'active' }, { $set: set }, { returnDocument: 'after' }).lean();
      if (after && before && typeof before.pos === 'number') {
        const kept = new Set(grams(after));
        await removeGrams(ctx.db, 'parties', ctx.workspace, before.pos, grams(before as PartyDoc).filter((g) => !kept.has(g)));
      }
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `Another party of this workspace already has tax id ${input.tax_id!.type} ${input.tax_id!.number}.`);
      throw err;
    }
    if (!after) {
      const exists = await parties(ctx.db).exists({ _id: input.id, workspace: ctx.workspace });
      if (!exists) throw new CuadraError('not_found', `No party ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Party ${input.id} is archived; restore it before changing it.`);
    }
    return { party: partyView(after) };
  },
});
