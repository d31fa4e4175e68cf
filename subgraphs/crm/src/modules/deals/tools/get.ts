import { CuadraError, defineTool, ID_INPUT, nullable, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import { DEAL_VIEW_SCHEMA, deals, dealView } from '../model.ts';

const DOCUMENT = nullable({
  type: 'object', additionalProperties: false, required: ['id', 'number', 'status', 'total', 'currency'],
  properties: { id: TEXT, number: { type: ['string', 'null'] }, status: TEXT, total: { type: 'number' }, currency: TEXT },
});

/** One deal with its stage history and what finance made from it. */
export const get = defineTool({
  name: 'deals.get',
  description: 'Get one deal by id: party, amount and lines, stage, status, lost reason, custom field values, tags, its stage history (from, to, when, who) and what finance made from it (quote, sales order, invoice; null when finance cannot be read now).',
  risk: 'read',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['deal', 'documents'],
    properties: {
      deal: DEAL_VIEW_SCHEMA,
      documents: nullable({ type: 'object', additionalProperties: false, required: ['quote', 'sales_order', 'invoice'], properties: { quote: DOCUMENT, sales_order: DOCUMENT, invoice: DOCUMENT } }),
    },
  },
  async handler(input, ctx) {
    const d = await deals(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!d) throw new CuadraError('not_found', `No deal ${input.id} exists in this workspace.`);
    // Read from finance through its graph (read-only service assertion); a deal is shown even when finance is not answering.
    let documents: { quote: unknown; sales_order: unknown; invoice: unknown } | null = null;
    if (ctx.graph) {
      const data = await ctx.graph('invoices', 'query($id: ID!) { dealDocuments(dealId: $id) { quote { id number status total currency } salesOrder { id number status total currency } invoice { id number status total currency } } }', { id: d._id })
        .catch((err: unknown) => {
          ctx.log.warn({ err }, 'the documents of a deal could not be read from finance');
          return null;
        });
      if (data) {
        const docs = data.dealDocuments as { quote: unknown; salesOrder: unknown; invoice: unknown } | null;
        documents = { quote: docs?.quote ?? null, sales_order: docs?.salesOrder ?? null, invoice: docs?.invoice ?? null };
      }
    }
    return { deal: dealView(d), documents };
  },
});
