import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { parties, partyView, PARTY_VIEW_SCHEMA } from '../model.ts';
import { insertParty } from './create.ts';

/**
 * Creates the vendor an uploaded supplier e-invoice names, when crm has no party with its NIT.
 * Finance never writes crm's collections and a service assertion only reads (shared/src/peers.ts),
 * so the party is made here, by crm's own tool path (the caller's role, policies and the ledger
 * apply as to parties.create): crm reads the supplier the document kept from the XML through the
 * invoices graph (`documentSupplier`, a read under the read-only service assertion) and writes it
 * with parties.create's insert. Idempotent by NIT: the unique tax_key answers the party already
 * there (`created: false`), whoever made it, so a retry or a second document of the same supplier
 * never makes a second party. The document is then processed again with documents.process.
 */
export const createFromDocument = defineTool({
  name: 'parties.create_from_document',
  description: 'Create the vendor a supplier e-invoice names (NIT with check digit, name, e-mail, as the uploaded document kept them from its XML) when crm has no party with that NIT; read from the document through the finance graph, not typed again. If a party with the NIT exists it is answered as it is (created false). Then process the document again (documents.process) to make its draft bill.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['document_id'],
    properties: {
      document_id: { ...ID_SCHEMA, description: 'The uploaded document (doc_…) that failed because its supplier is not a party.' },
      kind: { enum: ['vendor', 'both'], description: 'vendor (default) or both, if it also buys from you.' },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['party', 'created'],
    properties: { party: PARTY_VIEW_SCHEMA, created: { type: 'boolean', description: 'False when a party with the NIT already existed: it is answered unchanged.' } },
  },
  async handler(input, ctx) {
    if (!ctx.graph) throw new CuadraError('unavailable', 'The finance service is not configured here; nothing was done.', { beforeAnyEffect: true });
    const data = await ctx.graph('invoices', 'query($id: ID!) { documentSupplier(id: $id) { taxIdType taxIdNumber checkDigit name email } }', { id: input.document_id })
      .catch((err: unknown) => {
        if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
        throw err;
      });
    const s = data.documentSupplier as { taxIdType: string; taxIdNumber: string; checkDigit: number | null; name: string; email: string | null } | null;
    if (!s) throw new CuadraError('not_found', `No document ${input.document_id} in this workspace is waiting for its supplier to be created.`);
    if (s.taxIdType !== 'NIT' || s.checkDigit === null) {
      throw new CuadraError('conflict', `The e-invoice gives NIT ${s.taxIdNumber} without its check digit; create ${s.name} with parties.create instead.`);
    }
    const taxKey = `${ctx.workspace}:NIT:${s.taxIdNumber}`;
    const known = await parties(ctx.db).findOne({ tax_key: taxKey, workspace: ctx.workspace }).lean();
    if (known) return { party: partyView(known), created: false };
    try {
      const doc = await insertParty(ctx, {
        name: s.name, kind: input.kind ?? 'vendor', tax_id: { type: 'NIT', number: `${s.taxIdNumber}-${s.checkDigit}` }, ...(s.email ? { email: s.email } : {}), tags: ['from_einvoice'],
      });
      return { party: partyView(doc), created: true };
    } catch (err) {
      // A concurrent create of the same NIT won the unique key: answer that party.
      const raced = err instanceof CuadraError && err.code === 'conflict' ? await parties(ctx.db).findOne({ tax_key: taxKey, workspace: ctx.workspace }).lean() : null;
      if (raced) return { party: partyView(raced), created: false };
      // A check digit the invoice gives wrong is refused by the NIT rule (invalid_input at /tax_id/number): name the document instead.
      if (err instanceof CuadraError && err.code === 'invalid_input') throw new CuadraError('conflict', `The e-invoice gives NIT ${s.taxIdNumber}-${s.checkDigit}, whose check digit is wrong; nothing was created.`);
      throw err;
    }
  },
});
