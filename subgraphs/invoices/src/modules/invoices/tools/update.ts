import { CuadraError, defineTool, recordOutput, ID_SCHEMA } from '@cuadra/shared';
import { buildLines, buyerFromCrm, documentAllowanceCharges, documentTotals } from '../../items/document-lines.ts';
import { regimeContext, withholdingRatesFor } from '../../../lib/tax-regime.ts';
import { allowanceChargeInput as acInput } from '../../../lib/line-model.ts';
import { changeInvoice, searchText, statusDelta } from '../ops.ts';
import { INVOICE_VIEW_SCHEMA, invoiceView, type InvoiceDoc } from '../model.ts';
import { invoiceFields } from './create.ts';
import { assertNotAfterToday } from '../../../lib/document-dates.ts';


/** Changes a draft; a posted document is never edited (DOMAIN.md) — that is a `conflict`. */
export const update = defineTool({
  name: 'invoices.update',
  description: 'Change a draft invoice: customer, dates, lines, withholdings, allowances and charges of the document, or notes (fields given replace the stored ones; totals are recomputed). Posted invoices cannot be edited: credit them instead.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    minProperties: 2,
    properties: { id: ID_SCHEMA, ...invoiceFields },
  },
  output: recordOutput('invoice', INVOICE_VIEW_SCHEMA),
  async handler(input, ctx) {
    if (input.issue_date) assertNotAfterToday(ctx, input.issue_date);
    // Lines are priced before the conditional write (they read the catalog), in the final currency.
    const current = await changeInvoice(ctx, input.id, () => null);
    const currency = input.currency ?? current.currency;
    const rc = await regimeContext(ctx.db, ctx.workspace, ctx.principal);
    const lines = input.lines ? await buildLines(ctx, currency, input.lines, '/lines', rc) : null;
    const newRates = input.withholdings ? withholdingRatesFor(rc, input.withholdings) : null;
    const buyer = input.customer_id ? await buyerFromCrm(ctx, input.customer_id) : null;
    if (!lines && input.currency && input.currency !== current.currency) {
      throw new CuadraError('invalid_input', 'Changing the currency needs the lines again, priced in the new currency.', { field: '/lines' });
    }
    const after = await changeInvoice(ctx, input.id, (doc) => {
      if (doc.kind !== 'invoice' || doc.status !== 'draft') {
        throw new CuadraError('conflict', `Invoice ${doc.number ?? doc._id} is ${doc.status}; only drafts can be edited — issue a credit note instead.`);
      }
      if (doc.posting) throw new CuadraError('conflict', `Invoice ${doc._id} is being posted; it can no longer be edited.`);
      const next: Partial<InvoiceDoc> = {};
      if (input.customer_id && buyer) Object.assign(next, { customer_id: input.customer_id, customer: buyer });
      if (input.notes !== undefined) next.notes = input.notes;
      if (input.issue_date) next.issue_date = input.issue_date;
      if (input.due_date) next.due_date = input.due_date;
      if ((next.due_date ?? doc.due_date) < (next.issue_date ?? doc.issue_date)) {
        throw new CuadraError('invalid_input', 'The due date cannot be before the issue date.', { field: input.due_date ? '/due_date' : '/issue_date' });
      }
      const newLines = lines ?? doc.lines;
      const rates = newRates ?? doc.withholding_rates;
      // Percentages of the line total follow new lines: kept allowances and charges are priced again.
      const acs = input.allowance_charges
        ? documentAllowanceCharges(rc, newLines, input.allowance_charges)
        : documentAllowanceCharges(rc, newLines, (doc.allowance_charges ?? []).map(acInput));
      Object.assign(next, { currency, lines: newLines, withholding_rates: rates, ...documentTotals(newLines, rates, acs) });
      next.balance = next.amount_due;
      next.search_lc = searchText(null, (next.customer ?? doc.customer).name, next.notes ?? doc.notes);
      // A new issue date moves the draft's count to that day.
      const deltas = next.issue_date && next.issue_date !== doc.issue_date
        ? [...statusDelta(doc, 'draft', null), ...statusDelta({ ...doc, issue_date: next.issue_date }, null, 'draft')]
        : [];
      return { set: next, deltas };
    }, { posting: null });
    return { invoice: invoiceView(after) };
  },
});
