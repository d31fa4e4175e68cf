import { CuadraError, defineTool, ID_SCHEMA, newId, QUANTITY_SCHEMA, repeatableId } from '@cuadra/shared';
import { ACCOUNTS } from '../../../accounting/accounts.ts';
import { postableAccount } from '../../../accounting/chart.ts';
import { documentTotals } from '../../items/document-lines.ts';
import { draftDocument, insertDraft, postDocument } from '../ops.ts';
import { LINE_CHARGES_SCHEMA, priceLine } from '../../../lib/line-model.ts';
import { lineVat, regimeContext } from '../../../lib/tax-regime.ts';
import { assertNotAfterToday, documentToday } from '../../../lib/document-dates.ts';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView, type InvoiceLine } from '../model.ts';

/** DIAN debit note concepts (Anexo Técnico 1.9, "Conceptos de corrección para notas débito"). */
export const DEBIT_CONCEPTS = { 1: 'Intereses', 2: 'Gastos por cobrar', 3: 'Cambio del valor', 4: 'Otros' } as const;

/**
 * The income account a line of each concept is credited to when the line names none. Interest
 * for paying late is financial income (PUC 4210 Financieros, 421005 Intereses), not a sale; the
 * other concepts add to what was sold (413595), unless a line says otherwise.
 */
export const DEBIT_CONCEPT_ACCOUNTS: Record<keyof typeof DEBIT_CONCEPTS, string> = { 1: ACCOUNTS.interestIncome.code, 2: ACCOUNTS.revenue.code, 3: ACCOUNTS.revenue.code, 4: ACCOUNTS.revenue.code };

/**
 * Issues a debit note (DIAN type 92, CUDE with the software PIN) against a posted invoice: new
 * charges the buyer owes on top of it (interest, expenses, a higher value). Created and posted in
 * one call: numbered from the debit-note range, journalled (Dr 130505; Cr each line's income
 * account — 421005 for interest, 413595 for more of what was sold; Cr 240805), signed when the workspace has a certificate. The note is its own receivable: it has
 * its due date and takes payments like an invoice.
 */
export const debitNote = defineTool({
  name: 'invoices.debit_note',
  description: 'Issue a DIAN debit note against a posted invoice: concept (1 interest, 2 expenses, 3 change of value, 4 other), a reason, and the lines charged (description, quantity, unit price in cents, discount, charges, VAT rate in ppm, and optionally the income account: interest goes to 421005 Intereses, financial income, by default; the other concepts to 413595 sales). Numbered from the debit-note range, CUDE computed, journalled and signed at once; it is a receivable of its own with a due date (default the invoice\'s, or the issue date if later).',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['invoice_id', 'concept', 'reason', 'lines'],
    properties: {
      invoice_id: ID_SCHEMA,
      concept: { enum: [1, 2, 3, 4] },
      reason: { type: 'string', minLength: 1, maxLength: 500 },
      issue_date: { type: 'string', format: 'date' },
      due_date: { type: 'string', format: 'date' },
      lines: {
        type: 'array', minItems: 1, maxItems: 500,
        items: {
          type: 'object', additionalProperties: false, required: ['description', 'quantity', 'unit_price'],
          properties: {
            description: { type: 'string', minLength: 1, maxLength: 500 },
            quantity: QUANTITY_SCHEMA,
            unit: { type: 'string', pattern: '^[A-Z0-9]{2,3}$' },
            unit_price: { type: 'integer', minimum: 1, maximum: 1_000_000_000_000 },
            discount_bps: { type: 'integer', minimum: 0, maximum: 10000 },
            charges: LINE_CHARGES_SCHEMA,
            tax_rate_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000 },
            account: { type: 'string', pattern: '^4[0-9]{3,11}$', description: 'Income account (PUC class 4) the line is credited to; default by concept: 1 (interest) → 421005 Intereses, else 413595.' },
          },
        },
      },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['debit_note', 'invoice'],
    properties: { debit_note: INVOICE_VIEW_SCHEMA, invoice: INVOICE_VIEW_SCHEMA },
  },
  async handler(input, ctx) {
    const invoice = await invoices(ctx.db).findOne({ _id: input.invoice_id, workspace: ctx.workspace, kind: 'invoice' }).lean();
    if (!invoice) throw new CuadraError('not_found', `No invoice ${input.invoice_id} exists in this workspace.`);
    if (invoice.status === 'draft') throw new CuadraError('conflict', `Invoice ${invoice._id} is a draft: edit it instead of adding a debit note.`);
    if (invoice.status === 'cancelled') throw new CuadraError('conflict', `Invoice ${invoice.number} was cancelled by a credit note; a debit note cannot add to it.`);
    const issueDate = input.issue_date ?? documentToday(ctx);
    assertNotAfterToday(ctx, issueDate);
    if (issueDate < invoice.issue_date) throw new CuadraError('invalid_input', 'A debit note cannot be dated before the invoice it refers to.', { field: '/issue_date' });
    const dueDate = input.due_date ?? (invoice.due_date > issueDate ? invoice.due_date : issueDate);
    if (dueDate < issueDate) throw new CuadraError('invalid_input', 'The due date is before the issue date.', { field: '/due_date' });
    const rc = await regimeContext(ctx.db, ctx.workspace, ctx.principal);
    if (rc.regime !== 'dian') {
      throw new CuadraError('conflict', 'A debit note is a DIAN document (type 92); outside Colombia, charge what is owed on a new invoice.');
    }
    for (const [i, l] of input.lines.entries()) if (l.account) await postableAccount(ctx.db, ctx.workspace, l.account, `/lines/${i}/account`);
    const lines: InvoiceLine[] = input.lines.map((l, i) => {
      lineVat(rc, { tax_rate_ppm: l.tax_rate_ppm ?? 0 }, `/lines/${i}`);
      return {
        item_id: null, description: l.description, quantity: l.quantity, unit: l.unit ?? '94', unit_price: l.unit_price, discount_bps: l.discount_bps ?? 0,
        tax_rate_ppm: l.tax_rate_ppm ?? 0, withholdings: [], ...priceLine(l.quantity, l.unit_price, l.discount_bps ?? 0, l.charges ?? [], l.tax_rate_ppm ?? 0, `/lines/${i}`),
        account: l.account ?? DEBIT_CONCEPT_ACCOUNTS[input.concept],
      };
    });
    const note = draftDocument({
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's note the store applies late is this one.
      _id: repeatableId('inv') ?? newId('inv'), workspace: ctx.workspace, kind: 'debit_note', customer_id: invoice.customer_id, customer: invoice.customer,
      currency: invoice.currency, issue_date: issueDate, due_date: dueDate, lines, withholding_rates: [],
      notes: `${DEBIT_CONCEPTS[input.concept]}: ${input.reason}`, created_at: ctx.now, debit_of: invoice._id, concept: input.concept,
      ...documentTotals(lines, []),
    });
    await insertDraft(ctx, note);
    const posted = await postDocument(ctx, note._id);
    return { debit_note: invoiceView(posted), invoice: invoiceView(invoice) };
  },
});
