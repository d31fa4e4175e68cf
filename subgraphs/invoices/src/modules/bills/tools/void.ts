import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import type { PostingPreview } from '../../../books/index.ts';
import { missingItem } from '../../../open-items/index.ts';
import { BILL_VIEW_SCHEMA, bills, billView, type BillDoc } from '../model.ts';
import { billStatusDelta, changeBill, PAYABLES, type BillChange } from '../ops.ts';

/** Voids a draft bill: it stays on record, and the vendor's invoice number is free again. */
export const voidBill = defineTool({
  name: 'bills.void',
  description: 'Void a draft bill (recorded by mistake). It stays on record as void and its supplier number may be recorded again. A posted bill cannot be voided.',
  risk: 'destructive',
  input: ID_INPUT,
  output: recordOutput('bill', BILL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await changeBill(ctx, input.id, voidChange, { posting: null });
    return { bill: billView(after) };
  },
  // Its dry run, and what a held void shows the person deciding: the bill's change by the same rule; a draft has no journal lines.
  preview: async (input, ctx): Promise<PostingPreview> => {
    const doc = await bills(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw missingItem(PAYABLES, input.id);
    const { set } = voidChange(doc);
    return { changes: [{ source: 'bills', id: doc._id, op: 'update', before: { status: doc.status, balance: doc.balance }, after: { status: set!.status, balance: set!.balance } }], journal_lines: [] };
  },
});

/** A draft bill made void: only a draft no post has claimed, and never a credit note being applied. */
function voidChange(doc: BillDoc): BillChange {
  if (doc.status !== 'draft') throw new CuadraError('conflict', `Bill ${doc.supplier_number} is ${doc.status}; only a draft can be voided.`);
  if (doc.kind === 'credit_note') throw new CuadraError('conflict', `${doc.supplier_number} is a credit note being applied; it finishes by itself.`);
  if (doc.posting) throw new CuadraError('conflict', `Bill ${doc.supplier_number} is being posted; it can no longer be voided.`);
  return { set: { status: 'void', supplier_key: `void:${doc._id}`, balance: 0 }, deltas: billStatusDelta(doc, 'draft', 'void') };
}
