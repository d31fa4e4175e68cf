import { DATE_SCHEMA, defineTool, ID_SCHEMA, localDate, newId, QUANTITY_SCHEMA } from '@cuadra/shared';
import { creditBill, previewCreditBill } from '../credit.ts';
import { BILL_VIEW_SCHEMA, billView } from '../model.ts';
import { BILL_FIELDS } from './create.ts';

/**
 * Records a vendor's credit note against a posted bill and applies it at once (credit.ts).
 * Risk `destructive`: it reduces what is owed on a posted document and is not undone (the vendor
 * would issue a debit note), so policies that hold destructive calls hold it.
 */
export const creditNote = defineTool({
  name: 'bills.credit_note',
  description: 'Record a vendor\'s credit note against a posted bill: the vendor\'s credit note number, the reason, and the bill lines and quantities credited (default: everything not yet credited), at the bill\'s prices, VAT and withholding rates. Applied at once: the bill\'s balance falls by what the note gives back (total − withholdings) and a balanced entry reverses the expense or asset, deductible VAT and withholdings in proportion. It cannot exceed what the bill has open; the same number again answers the same note.',
  risk: 'destructive',
  input: {
    type: 'object', additionalProperties: false, required: ['bill_id', 'supplier_number', 'reason'],
    properties: {
      bill_id: ID_SCHEMA,
      supplier_number: { ...BILL_FIELDS.supplier_number, description: 'The number printed on the vendor\'s credit note (e.g. NC-88).' },
      reason: { type: 'string', minLength: 1, maxLength: 500 },
      issue_date: DATE_SCHEMA,
      lines: {
        type: 'array', minItems: 1, maxItems: 500,
        items: { type: 'object', additionalProperties: false, required: ['line', 'quantity'], properties: { line: { type: 'integer', minimum: 0, maximum: 499 }, quantity: QUANTITY_SCHEMA } },
      },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['credit_note', 'bill'],
    // The note as applied, and the bill it credits afterwards.
    properties: { credit_note: BILL_VIEW_SCHEMA, bill: BILL_VIEW_SCHEMA },
  },
  // Its dry run, and what a held note shows the person deciding: the note, the bill's balance and the journal lines.
  preview: (input, ctx) => previewCreditBill(ctx, input, newId('bil'), localDate(ctx.now)),
  async handler(input, ctx) {
    const { note, bill } = await creditBill(ctx, input, newId('bil'), localDate(ctx.now));
    return { credit_note: billView(note), bill: billView(bill) };
  },
});
