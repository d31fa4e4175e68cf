import { Schema } from 'mongoose';

/**
 * Stored fields every sales document shares — invoices and credit notes, quotes and sales
 * orders: the buyer as captured on the document, and the amounts computed from its lines.
 */
export const documentFields = {
    customer_id: { type: String, required: true },
    customer: { type: Schema.Types.Mixed, required: true },
    search_lc: { type: String, required: true },
    currency: { type: String, required: true },
    issue_date: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    withholding_rates: { type: Schema.Types.Mixed, default: [] },
    subtotal: { type: Number, required: true },
    tax_total: { type: Number, required: true },
    total: { type: Number, required: true },
    withholdings: { type: Schema.Types.Mixed, default: [] },
    withholding_total: { type: Number, required: true },
    amount_due: { type: Number, required: true },
} as const;
