import { CuadraError, defineTool, newId, QUANTITY_SCHEMA, ID_SCHEMA, repeatableId, type InputOf, type ToolContext } from '@cuadra/shared';
import { documentTotals } from '../../items/document-lines.ts';
import { lineChargesOf, priceLine } from '../../../lib/line-model.ts';
import { draftDocument, insertDraft, postDocument, previewPostOf } from '../ops.ts';
import { INVOICE_VIEW_SCHEMA, invoices, invoiceView, type InvoiceDoc, type InvoiceLine } from '../model.ts';
import { quantityFromMicros, quantityMicros, storedMicros } from '../../../lib/money.ts';
import { assertNotAfterToday, documentToday } from '../../../lib/document-dates.ts';


/** DIAN credit note concepts (Anexo Técnico 1.9, table 13.2.4). */
export const CREDIT_CONCEPTS = { 1: 'Devolución parcial de los bienes y/o no aceptación parcial del servicio', 2: 'Anulación de factura electrónica', 3: 'Rebaja o descuento parcial o total', 4: 'Ajuste de precio', 5: 'Otros' } as const;

/** The input of invoices.credit_note. */
const CREDIT_NOTE_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['invoice_id', 'concept', 'reason'],
  properties: {
    invoice_id: ID_SCHEMA,
    concept: { enum: [1, 2, 3, 4, 5] },
    reason: { type: 'string', minLength: 1, maxLength: 500 },
    issue_date: { type: 'string', format: 'date' },
    lines: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: {
        type: 'object', additionalProperties: false, required: ['line', 'quantity'],
        properties: { line: { type: 'integer', minimum: 0, maximum: 499 }, quantity: QUANTITY_SCHEMA },
      },
    },
  },
} as const;

/**
 * Issues a credit note (type 91, CUDE) against a posted invoice: the lines and quantities
 * given, or every quantity not yet credited. It is created and posted in one call: numbered
 * from the credit-note range, applied to the invoice's balance (any rest becomes customer
 * credit), journalled. Crediting more than was invoiced is a `conflict`.
 *
 * Risk `destructive`: a credit note voids all or part of a fiscal document and cannot itself
 * be undone (only a new invoice or a debit note reverses it), so policies that hold
 * destructive calls hold it.
 */
export const creditNote = defineTool({
  name: 'invoices.credit_note',
  description: 'Issue a DIAN credit note against a posted invoice: concept (1 partial return, 2 cancellation, 3 discount, 4 price adjustment, 5 other), the invoice lines and quantities credited (default: all that remains). Numbered, CUDE computed, journalled and applied to the invoice balance at once; a full credit cancels the invoice.',
  risk: 'destructive',
  input: CREDIT_NOTE_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['credit_note', 'invoice'],
    // The note as posted, and the invoice it credits after the note was applied.
    properties: { credit_note: INVOICE_VIEW_SCHEMA, invoice: INVOICE_VIEW_SCHEMA },
  },
  // Its dry run, and what a held note shows the person deciding: the note, the invoice's balance and the journal lines.
  preview: async (input, ctx) => {
    const { note } = await creditNoteDraft(input, ctx);
    return previewPostOf(ctx, note, 'insert');
  },
  async handler(input, ctx) {
    const { invoice, note } = await creditNoteDraft(input, ctx);
    await insertDraft(ctx, note);
    const posted = await postDocument(ctx, note._id);
    const after = await invoices(ctx.db).findById(invoice._id).lean();
    return { credit_note: invoiceView(posted), invoice: invoiceView(after!) };
  },
});

/** The credit note a call asks for, as a draft not yet stored, after every check of the call: one path for the note and its dry run. */
async function creditNoteDraft(input: InputOf<typeof CREDIT_NOTE_INPUT>, ctx: ToolContext): Promise<{ invoice: InvoiceDoc; note: InvoiceDoc }> {
  const invoice = await invoices(ctx.db).findOne({ _id: input.invoice_id, workspace: ctx.workspace, kind: 'invoice' }).lean();
  if (!invoice) throw new CuadraError('not_found', `No invoice ${input.invoice_id} exists in this workspace.`);
  if (invoice.status === 'draft') throw new CuadraError('conflict', `Invoice ${invoice._id} is a draft: edit it instead of crediting it.`);
  if (invoice.status === 'cancelled') throw new CuadraError('conflict', `Invoice ${invoice.number} is already fully credited (cancelled).`);
  if (invoice.source?.asset_id) {
    // Its price was netted against the asset's carrying amount by the disposal entry (assets/ops.ts): a note taking it
    // back would leave a returned asset out of the books, or the sale's gain or loss and its fiscal result wrong.
    throw new CuadraError('conflict', `Invoice ${invoice.number} is the sale of fixed asset ${invoice.source.asset_id} (assets.dispose); its price is part of the disposal's gain or loss. `
      + 'A credit note cannot take it back here: the return of a sold asset or a change of its price is not supported yet — nothing was changed.');
  }
  const remaining = (i: number) => storedMicros(invoice.lines[i].quantity) - storedMicros(invoice.lines[i].credited_quantity ?? 0);
  const wanted = input.lines ?? invoice.lines.map((_, i) => ({ line: i, quantity: quantityFromMicros(remaining(i)) })).filter((l) => l.quantity > 0);
  const asked = new Map<number, bigint>();
  wanted.forEach((w, index) => {
    if (w.line >= invoice.lines.length) throw new CuadraError('invalid_input', `Invoice ${invoice.number} has no line ${w.line}.`, { field: `/lines/${index}/line` });
    const total = (asked.get(w.line) ?? 0n) + quantityMicros(w.quantity, `/lines/${index}/quantity`);
    asked.set(w.line, total);
    if (total > remaining(w.line)) {
      throw new CuadraError('conflict', `Line ${w.line} of invoice ${invoice.number} has ${quantityFromMicros(remaining(w.line))} left to credit; ${quantityFromMicros(total)} asked. A credit note cannot exceed what was invoiced.`);
    }
  });
  const fullyCredited = invoice.lines.every((_l, i) => remaining(i) - (asked.get(i) ?? 0n) <= 0n);
  if (input.concept === 2 && !fullyCredited) {
    throw new CuadraError('invalid_input', 'Concept 2 (cancellation) credits the whole invoice: leave out lines, or choose another concept.', { field: '/concept' });
  }
  // Each line credited is priced again for the quantity credited, with the invoice line's discount and charges (lib/line-model.ts).
  const lines: InvoiceLine[] = wanted.map((w) => {
    const src = invoice.lines[w.line];
    return { ...src, credited_quantity: undefined, quantity: w.quantity, invoice_line: w.line, ...priceLine(w.quantity, src.unit_price, src.discount_bps, lineChargesOf(src), src.tax_rate_ppm, `/lines/${w.line}`) };
  }).map(({ credited_quantity: _drop, ...l }) => l);
  // The note that credits all that remains also takes back the invoice's own allowances and charges, so a full credit leaves nothing owed.
  const acs = fullyCredited ? [...(invoice.allowance_charges ?? [])] : [];
  const issueDate = input.issue_date ?? documentToday(ctx);
  assertNotAfterToday(ctx, issueDate);
  if (issueDate < invoice.issue_date) throw new CuadraError('invalid_input', 'A credit note cannot be dated before the invoice it credits.', { field: '/issue_date' });
  const note = draftDocument({
    // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's note the store applies late is this one.
    _id: repeatableId('inv') ?? newId('inv'), workspace: ctx.workspace, kind: 'credit_note', customer_id: invoice.customer_id, customer: invoice.customer,
    currency: invoice.currency, issue_date: issueDate, due_date: issueDate, lines, withholding_rates: invoice.withholding_rates,
    notes: `${CREDIT_CONCEPTS[input.concept]}: ${input.reason}`, created_at: ctx.now, credit_of: invoice._id, concept: input.concept,
    ...documentTotals(lines, invoice.withholding_rates, acs),
  });
  return { invoice, note };
}
