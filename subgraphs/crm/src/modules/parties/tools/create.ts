import { addGrams, createPositioned, CuadraError, defineTool, markIndexed, newId, parseNit, recordOutput, repeatableId, storedUnderId, trigramsOf, type ToolContext } from '@cuadra/shared';
import { parties, partySearchTexts, partyView, type PartyDoc, PARTY_VIEW_SCHEMA } from '../model.ts';
import { checkCustom, readFields } from '../../crm_fields/model.ts';
import { FISCAL_INPUT, parseFiscal } from '../fiscal.ts';

/** JSON Schema of a party's fields, shared by parties.create and parties.update. */
export const partyFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  kind: { enum: ['customer', 'vendor', 'both'] },
  tax_id: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'number'],
    properties: {
      type: { enum: ['NIT', 'CC', 'CE', 'PASSPORT', 'FOREIGN'] },
      number: { type: 'string', minLength: 3, maxLength: 20 },
    },
  },
  email: { type: 'string', format: 'email', maxLength: 254 },
  phone: { type: 'string', minLength: 3, maxLength: 40 },
  addresses: {
    type: 'array',
    maxItems: 10,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['line1', 'country'],
      properties: {
        line1: { type: 'string', minLength: 1, maxLength: 200 },
        city: { type: 'string', maxLength: 100 },
        region: { type: 'string', maxLength: 100 },
        country: { type: 'string', pattern: '^[A-Z]{2}$' },
        postal_code: { type: 'string', maxLength: 20 },
      },
    },
  },
  contacts: {
    type: 'array',
    maxItems: 20,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        email: { type: 'string', format: 'email', maxLength: 254 },
        phone: { type: 'string', maxLength: 40 },
        role: { type: 'string', maxLength: 100 },
      },
    },
  },
  tags: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9_:-]{1,40}$' } },
  custom: { type: 'object', description: 'Values of the workspace\'s custom party fields (crm_fields), by key; checked against their JSON Schema.' },
  fiscal: FISCAL_INPUT,
} as const;

/** The stored tax id from input; a NIT must carry a valid check digit (`invalid_input` at /tax_id/number). */
export function parseTaxId(input: { type: string; number: string } | undefined): PartyDoc['tax_id'] {
  if (!input) return null;
  if (input.type === 'NIT') {
    const nit = parseNit(input.number);
    if (!nit) throw new CuadraError('invalid_input', 'The NIT is not valid: it needs its digits and a correct check digit, like 900123456-8.', { field: '/tax_id/number' });
    return { type: 'NIT', number: nit.number, check_digit: nit.checkDigit };
  }
  return { type: input.type, number: input.number.trim(), check_digit: null };
}

/** Creates a customer, vendor or both. A NIT must carry a valid DIAN check digit. */
export const create = defineTool({
  name: 'parties.create',
  description: 'Create a party (customer, vendor or both) with its tax id, contacts, addresses, tags and fiscal profile (what a Colombian e-invoice says of it: company or person, RUT name, fiscal responsibilities, tax, fiscal address with the DANE municipality code). A Colombian NIT must include its check digit (900123456-8).',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['name', 'kind'], properties: partyFields },
  output: recordOutput('party', PARTY_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { party: partyView(await insertParty(ctx, input)) };
  },
});

/** The fields of a new party (parties.create's input). */
export interface PartyInput {
  name: string;
  kind: 'customer' | 'vendor' | 'both';
  tax_id?: { type: string; number: string };
  email?: string;
  phone?: string;
  addresses?: PartyDoc['addresses'];
  contacts?: PartyDoc['contacts'];
  tags?: string[];
  custom?: Record<string, unknown>;
  fiscal?: Parameters<typeof parseFiscal>[0];
}

/**
 * The document a new party is stored as (what {@link insertParty} writes, before its position):
 * `fields` are the workspace's custom party fields (`readFields`), `id` a given id or a new one.
 */
export function partyDocument(ctx: Pick<ToolContext, 'workspace' | 'now'>, input: PartyInput, fields: Awaited<ReturnType<typeof readFields>>, id: string = newId('pty')): PartyDoc {
  const taxId = parseTaxId(input.tax_id);
  checkCustom(fields, 'party', input.custom, true);
  const fiscal = parseFiscal(input.fiscal);
  return {
    _id: id,
    workspace: ctx.workspace,
    kind: input.kind,
    name: input.name.trim(),
    name_lc: input.name.trim().toLowerCase(),
    tax_id: taxId,
    tax_key: taxId ? `${ctx.workspace}:${taxId.type}:${taxId.number}` : `none:${id}`,
    email: input.email ?? null,
    phone: input.phone ?? null,
    addresses: input.addresses ?? [],
    contacts: input.contacts ?? [],
    tags: input.tags ?? [],
    custom: input.custom ?? {},
    fiscal,
    status: 'active',
    created_at: ctx.now,
    updated_at: ctx.now,
  };
}

/**
 * Writes a new party: the one path parties.create and parties.create_from_document take. A tax id
 * already held in the workspace is a `conflict` (the unique tax_key), so two creates of one NIT
 * cannot both succeed.
 */
export async function insertParty(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, input: PartyInput, opts: { id?: string } = {}): Promise<PartyDoc> {
  {
    // A given id (derived from what the party is made of) makes a second insert of the same party fail at the unique _id;
    // so does, in a call that can run again, the id the same in every attempt (repeatableId, runs.ts).
    const doc = partyDocument(ctx, input, await readFields(ctx.db, ctx.workspace), opts.id ?? repeatableId('pty') ?? undefined);
    const { _id: id, tax_id: taxId } = doc;
    try {
      await createPositioned(parties(ctx.db), doc, {
        async beforeInsert(series, { pos }) {
          await addGrams(ctx.db, series, ctx.workspace, pos, trigramsOf(partySearchTexts(doc)));
          // The series' first party: nothing older to index, its searches read the index from now on.
          if (pos === 1) await markIndexed(ctx.db, series, ctx.workspace);
        },
      });
    } catch (err) {
      if ((err as { code?: number }).code === 11000) {
        // This call's party, stored by an attempt whose insert the store applied late (a repeatable id): answered as it is.
        const known = opts.id ? null : await storedUnderId(err, parties(ctx.db), id, ctx.workspace);
        if (known) return known;
        throw new CuadraError('conflict', taxId ? `A party with tax id ${taxId.type} ${taxId.number} already exists in this workspace.` : `The party ${id} exists already.`);
      }
      throw err;
    }
    return doc;
  }
}
