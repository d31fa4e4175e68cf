import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { assertPeriodOpen } from '../../../books/index.ts';
import { documentToday } from '../../../lib/document-dates.ts';
import { findRental, RENTAL_VIEW_SCHEMA, rentals, rentalView } from '../model.ts';
import { postDeposit } from '../ops.ts';

/** Hands a reserved rental over: its condition on leaving, and its deposit received (posted to 2810). */
export const deliver = defineTool({
  name: 'rentals.deliver',
  description: 'Deliver a reserved rental to its customer: record the condition it leaves in; its deposit (if any) is received today (debit the deposit account, credit 2810 depósitos recibidos).',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, condition: { type: 'string', maxLength: 2000 } } },
  output: recordOutput('rental', RENTAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    let r = await findRental(ctx, input.id);
    const today = documentToday(ctx);
    if (r.status === 'reserved') {
      if (r.deposit > 0) await assertPeriodOpen(ctx.db, ctx.workspace, today);
      const entryId = r.deposit > 0 ? `je_${r._id}_deposit` : null;
      const after = await rentals(ctx.db).findOneAndUpdate(
        { _id: r._id, status: 'reserved', rev: r.rev },
        { $set: { status: 'delivered', delivery: { at: ctx.now.toISOString(), condition: input.condition ?? null, deposit_entry_id: entryId }, updated_at: ctx.now }, $inc: { rev: 1 } },
        { returnDocument: 'after' },
      ).lean();
      if (!after) throw new CuadraError('conflict', `Rental ${r._id} changed meanwhile; nothing was done. Try again.`);
      r = after;
    } else if (r.status !== 'delivered') throw new CuadraError('conflict', `Rental ${r._id} is ${r.status}; only a reserved rental is delivered.`);
    // Delivered: the deposit's entry (once: its id), also when a call died after the status changed.
    if (r.delivery?.deposit_entry_id) await postDeposit(ctx, r, 'deposit', r.delivery.deposit_entry_id, documentToday({ principal: ctx.principal, now: new Date(r.delivery.at) }));
    return { rental: rentalView(r) };
  },
});
