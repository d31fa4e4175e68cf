import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { BILL_VIEW_SCHEMA, billView } from '../model.ts';
import { billStatusDelta, changeBill } from '../ops.ts';

/** Voids a draft bill: it stays on record, and the vendor's invoice number is free again. */
export const voidBill = defineTool({
  name: 'bills.void',
  description: 'Void a draft bill (recorded by mistake). It stays on record as void and its supplier number may be recorded again. A posted bill cannot be voided.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('bill', BILL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await changeBill(ctx, input.id, (doc) => {
      if (doc.status !== 'draft') throw new CuadraError('conflict', `Bill ${doc.supplier_number} is ${doc.status}; only a draft can be voided.`);
      if (doc.kind === 'credit_note') throw new CuadraError('conflict', `${doc.supplier_number} is a credit note being applied; it finishes by itself.`);
      if (doc.posting) throw new CuadraError('conflict', `Bill ${doc.supplier_number} is being posted; it can no longer be voided.`);
      return { set: { status: 'void', supplier_key: `void:${doc._id}`, balance: 0 }, deltas: billStatusDelta(doc, 'draft', 'void') };
    }, { posting: null });
    return { bill: billView(after) };
  },
});
