import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { BILL_VIEW_SCHEMA, billLines, billSearchText, billTotals, billView, supplierKey, vendorFromCrm, type BillDoc } from '../model.ts';
import { billStatusDelta, changeBill } from '../ops.ts';
import { BILL_FIELDS, billRates, checkStockLines, checkWithholdingTypes } from './create.ts';
import { checkTags } from '../../dimensions/model.ts';

/** Changes a draft bill; a posted bill is never edited (DOMAIN.md) — that is a `conflict`. */
export const update = defineTool({
  name: 'bills.update',
  description: 'Change a draft bill: vendor, supplier number, dates, lines, withholdings or notes (fields given replace the stored ones; totals are recomputed). A posted bill is never edited.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], minProperties: 2, properties: { id: ID_SCHEMA, ...BILL_FIELDS } },
  output: recordOutput('bill', BILL_VIEW_SCHEMA),
  async handler(input, ctx) {
    checkWithholdingTypes(input.withholdings);
    for (const [i, l] of (input.lines ?? []).entries()) if (l.tags) await checkTags(ctx.db, ctx.workspace, l.tags, `/lines/${i}/tags`);
    if (input.lines) await checkStockLines(ctx, input.lines);
    const lines = input.lines ? billLines(input.lines) : null;
    const vendor = input.vendor_id ? await vendorFromCrm(ctx, input.vendor_id) : null;
    const after = await changeBill(ctx, input.id, (doc) => {
      if (doc.status !== 'draft') throw new CuadraError('conflict', `Bill ${doc.supplier_number} is ${doc.status}; only drafts can be edited.`);
      if (doc.kind === 'credit_note') throw new CuadraError('conflict', `${doc.supplier_number} is a credit note being applied; it finishes by itself.`);
      if (doc.posting) throw new CuadraError('conflict', `Bill ${doc.supplier_number} is being posted; it can no longer be edited.`);
      const next: Partial<BillDoc> = {};
      if (input.vendor_id && vendor) Object.assign(next, { vendor_id: input.vendor_id, vendor });
      if (input.supplier_number) next.supplier_number = input.supplier_number;
      if (input.currency) next.currency = input.currency;
      if (input.notes !== undefined) next.notes = input.notes;
      if (input.issue_date) next.issue_date = input.issue_date;
      if (input.due_date) next.due_date = input.due_date;
      if ((next.due_date ?? doc.due_date) < (next.issue_date ?? doc.issue_date)) {
        throw new CuadraError('invalid_input', 'The due date cannot be before the issue date.', { field: input.due_date ? '/due_date' : '/issue_date' });
      }
      const rates = input.withholdings ? billRates(input.withholdings) : doc.withholding_rates;
      const newLines = lines ?? doc.lines;
      const totals = billTotals(newLines, rates, next.issue_date ?? doc.issue_date);
      Object.assign(next, { lines: newLines, withholding_rates: rates, ...totals, balance: totals.amount_due });
      const vendorId = next.vendor_id ?? doc.vendor_id;
      const number = next.supplier_number ?? doc.supplier_number;
      next.supplier_key = supplierKey(ctx.workspace, vendorId, number);
      next.search_lc = billSearchText(number, (next.vendor ?? doc.vendor).name);
      // A new issue date or currency moves the draft's count to that day and currency.
      const moved = { issue_date: next.issue_date ?? doc.issue_date, currency: next.currency ?? doc.currency };
      const deltas = moved.issue_date !== doc.issue_date || moved.currency !== doc.currency
        ? [...billStatusDelta(doc, 'draft', null), ...billStatusDelta(moved, null, 'draft')]
        : [];
      return { set: next, deltas };
    }, { posting: null });
    return { bill: billView(after) };
  },
});
