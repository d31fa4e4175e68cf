import { CuadraError, defineTool, newId, recordOutput, repeatableId } from '@cuadra/shared';
import { buildLines, buyerFromCrm, documentAllowanceCharges, documentTotals, lineSchema, withholdingsSchema } from '../../items/document-lines.ts';
import { DOCUMENT_ALLOWANCE_CHARGES_SCHEMA } from '../../../lib/line-model.ts';
import { regimeContext, withholdingRatesFor } from '../../../lib/tax-regime.ts';
import { draftDocument, insertDraft } from '../ops.ts';
import { INVOICE_VIEW_SCHEMA, invoiceView } from '../model.ts';
import { addDays } from '../../../lib/money.ts';
import { assertNotAfterToday, documentToday } from '../../../lib/document-dates.ts';


/** JSON Schema shared by invoices.create and invoices.update. */
export const invoiceFields = {
  customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  issue_date: { type: 'string', format: 'date' },
  due_date: { type: 'string', format: 'date' },
  notes: { type: 'string', maxLength: 2000 },
  lines: { type: 'array', minItems: 1, maxItems: 500, items: lineSchema },
  withholdings: { ...withholdingsSchema, description: 'Invoice-level withholdings (retefuente, reteiva, reteica) for lines without their own. Colombian workspaces only.' },
  allowance_charges: DOCUMENT_ALLOWANCE_CHARGES_SCHEMA,
} as const;

/** Creates a draft invoice; amounts are computed here, never taken from the caller. */
export const create = defineTool({
  name: 'invoices.create',
  description: 'Create a draft sales invoice for a customer: lines (from catalog items or free text) with quantity, unit price in cents, discount and charges, VAT (Colombia: 19/5/0 % and withholdings; elsewhere the country\'s rate and EN 16931 category), and allowances or charges of the whole document; totals are computed. Posting assigns the number.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['customer_id', 'currency', 'lines'], properties: invoiceFields },
  output: recordOutput('invoice', INVOICE_VIEW_SCHEMA),
  async handler(input, ctx) {
    const rc = await regimeContext(ctx.db, ctx.workspace, ctx.principal);
    const lines = await buildLines(ctx, input.currency, input.lines, '/lines', rc);
    const issueDate = input.issue_date ?? documentToday(ctx);
    assertNotAfterToday(ctx, issueDate);
    const dueDate = input.due_date ?? addDays(issueDate, 30);
    if (dueDate < issueDate) throw new CuadraError('invalid_input', 'The due date cannot be before the issue date.', { field: '/due_date' });
    const customer = await buyerFromCrm(ctx, input.customer_id);
    const withholdingRates = withholdingRatesFor(rc, input.withholdings);
    const allowanceCharges = documentAllowanceCharges(rc, lines, input.allowance_charges);
    const doc = draftDocument({
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's draft the store applies late is this one.
      _id: repeatableId('inv') ?? newId('inv'), workspace: ctx.workspace, kind: 'invoice', customer_id: input.customer_id, customer,
      currency: input.currency, issue_date: issueDate, due_date: dueDate, lines, withholding_rates: withholdingRates, notes: input.notes ?? null,
      created_at: ctx.now, ...documentTotals(lines, withholdingRates, allowanceCharges),
    });
    return { invoice: invoiceView(await insertDraft(ctx, doc)) };
  },
});
