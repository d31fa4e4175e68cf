import { CuadraError, DATE_SCHEMA, defineTool } from '@cuadra/shared';
import { SALES_DOCUMENT_VIEW_SCHEMA, salesDocuments, salesDocumentView } from '../../../lib/sales-document.ts';
import { createSalesDocument } from '../sales-ops.ts';

interface DealForQuote {
  id: string; title: string; partyId: string | null; currency: string; status: string;
  lines: { description: string; quantity: number; unitPrice: number; discountBps: number; taxRatePpm: number; itemId: string | null }[];
}

/**
 * Makes the quote of a crm deal, from the deal's customer, currency and lines read through the crm
 * graph (the read-only service assertion: finance reads crm, and writes only its own documents —
 * a service never writes another's, ARCHITECTURE "Reading another service"). Once per deal: the
 * quote carries `deal_key` (`<workspace>|<deal>`, unique), so a retry, a race or a second caller
 * answers the quote already made (`created: false`) instead of a second one. The deal is named on
 * the quote and on what it converts into (quotes.convert: invoice or sales order), which is how
 * crm links the deal to them (deals.get `documents`).
 */
export const createFromDeal = defineTool({
  name: 'quotes.create_from_deal',
  description: 'Make the draft quote of a crm deal from its party, currency and lines (read from crm, not typed again); once per deal — called again it answers the quote already made (created false). Then send it, record its acceptance and convert it into an invoice or a sales order (quotes.convert); the deal shows them.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['deal_id'],
    properties: { deal_id: { type: 'string', pattern: '^dl_[A-Za-z0-9_-]{1,40}$' }, valid_until: DATE_SCHEMA, notes: { type: 'string', maxLength: 2000 } },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['quote', 'created'],
    properties: { quote: SALES_DOCUMENT_VIEW_SCHEMA, created: { type: 'boolean', description: 'False when the deal already had its quote: it is answered as it is.' } },
  },
  async handler(input, ctx) {
    const dealKey = `${ctx.workspace}|${input.deal_id}`;
    const known = await salesDocuments(ctx.db).findOne({ deal_key: dealKey, workspace: ctx.workspace }).lean();
    if (known) return { quote: salesDocumentView(known), created: false };
    if (!ctx.graph) throw new CuadraError('unavailable', 'The crm service is not configured here; nothing was done.', { beforeAnyEffect: true });
    const data = await ctx.graph('crm', 'query($id: ID!) { dealForQuote(id: $id) { id title partyId currency status lines { description quantity unitPrice discountBps taxRatePpm itemId } } }', { id: input.deal_id })
      .catch((err: unknown) => {
        if (err instanceof CuadraError && err.code === 'unavailable') throw new CuadraError('unavailable', err.message, { beforeAnyEffect: true });
        throw err;
      });
    const deal = data.dealForQuote as DealForQuote | null;
    if (!deal) throw new CuadraError('invalid_input', `No deal ${input.deal_id} exists in this workspace.`, { field: '/deal_id' });
    if (deal.status === 'lost') throw new CuadraError('conflict', `The deal ${deal.title} is lost; reopen it to quote it.`);
    if (!deal.partyId) throw new CuadraError('conflict', `The deal ${deal.title} has no party to quote; set its party_id first.`);
    if (deal.lines.length === 0) throw new CuadraError('conflict', `The deal ${deal.title} has no lines to quote; give it lines (deals.update) first.`);
    const lines = deal.lines.map((l) => ({
      description: l.description, quantity: l.quantity, unit_price: l.unitPrice, discount_bps: l.discountBps, tax_rate_ppm: l.taxRatePpm, ...(l.itemId ? { item_id: l.itemId } : {}),
    }));
    try {
      const quote = await createSalesDocument(ctx, 'quote', { customer_id: deal.partyId, currency: deal.currency, lines, valid_until: input.valid_until, notes: input.notes ?? deal.title }, { deal_id: deal.id }, dealKey);
      return { quote: salesDocumentView(quote), created: true };
    } catch (err) {
      // A concurrent call made the deal's quote first (the unique deal_key): answer that one.
      const raced = (err as { code?: number }).code === 11000 ? await salesDocuments(ctx.db).findOne({ deal_key: dealKey, workspace: ctx.workspace }).lean() : null;
      if (raced) return { quote: salesDocumentView(raced), created: false };
      throw err;
    }
  },
});
