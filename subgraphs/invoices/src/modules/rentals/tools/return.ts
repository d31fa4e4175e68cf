import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { assertPeriodOpen } from '../../../books/index.ts';
import { documentToday } from '../../../lib/document-dates.ts';
import { issueInvoiceOnce } from '../../invoices/issue.ts';
import { findRental, RENTAL_VIEW_SCHEMA, rentals, rentalView, returnView } from '../model.ts';
import { damagesInvoiceId, damagesLine, postDamagesSettlement, postDeposit, releaseHold, settleDamages, settlementEntryId } from '../ops.ts';

/**
 * Takes a delivered rental back: its condition, the damages charged, the deposit refunded (debit
 * 2810, credit the deposit account), and the resource free again. Damages are invoiced to the
 * customer, or — `settle_from_deposit` — covered first by the deposit (debit 2810, credit 4255
 * indemnizaciones), the deposit left over refunded and the damages left over invoiced. Either way
 * damages carry no VAT and are income in 4255, never sales (compensation is not a sale: ET art. 420;
 * ops.ts damagesLine).
 * The return is recorded first (one conditional update, with the ids of what follows); a call that
 * dies after it is finished by calling again: each step is written once under its id.
 */
export const returnRental = defineTool({
  name: 'rentals.return',
  description: 'Record the return of a delivered rental: the condition it came back in and any damages (cents, with a description), which are invoiced to the customer without VAT (compensation, ET art. 420; credited to 4255 indemnizaciones); the deposit is refunded in full (debit 2810, credit the deposit account) and the resource is free to rent again. '
    + 'With settle_from_deposit, the damages are covered by the deposit first (debit 2810, credit 4255 indemnizaciones): what is left of the deposit is refunded, what is left of the damages is invoiced. Damages are compensation, not a sale: invoiced without VAT (ET art. 420) and credited to 4255 either way.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'],
    properties: {
      id: ID_SCHEMA, condition: { type: 'string', maxLength: 2000 },
      damages: { type: 'integer', minimum: 0, maximum: 1e15 }, damages_description: { type: 'string', minLength: 1, maxLength: 500 },
      settle_from_deposit: { type: 'boolean', description: 'Cover the damages from the deposit first (default false: invoice them whole and refund the deposit in full).' },
    },
  },
  output: recordOutput('rental', RENTAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    let r = await findRental(ctx, input.id);
    const today = documentToday(ctx);
    if (r.status === 'delivered') {
      const damages = input.damages ?? 0;
      if (damages > 0 && !input.damages_description) throw new CuadraError('invalid_input', 'Damages charged say what was damaged.', { field: '/damages_description' });
      const settle = input.settle_from_deposit === true;
      if (settle && damages === 0) throw new CuadraError('invalid_input', 'There are no damages to settle from the deposit.', { field: '/settle_from_deposit' });
      if (settle && r.deposit === 0) throw new CuadraError('invalid_input', `Rental ${r._id} took no deposit to settle damages from.`, { field: '/settle_from_deposit' });
      const split = settle ? settleDamages(r.deposit, damages) : { deposit_applied: 0, refunded: r.deposit, invoiced: damages };
      await assertPeriodOpen(ctx.db, ctx.workspace, today);
      const after = await rentals(ctx.db).findOneAndUpdate(
        { _id: r._id, status: 'delivered', rev: r.rev },
        {
          $set: {
            status: 'returned', updated_at: ctx.now,
            return: {
              at: ctx.now.toISOString(), condition: input.condition ?? null, damages, damages_description: input.damages_description ?? null,
              damages_invoice_id: split.invoiced > 0 ? damagesInvoiceId(r._id) : null, refund_entry_id: split.refunded > 0 ? `je_${r._id}_refund` : null,
              settled_from_deposit: settle, ...split, settlement_entry_id: split.deposit_applied > 0 ? settlementEntryId(r._id) : null,
            },
          },
          $inc: { rev: 1 },
        },
        { returnDocument: 'after' },
      ).lean();
      if (!after) throw new CuadraError('conflict', `Rental ${r._id} changed meanwhile; nothing was done. Try again.`);
      r = after;
    } else if (r.status !== 'returned') throw new CuadraError('conflict', `Rental ${r._id} is ${r.status}; only a delivered rental is returned.`);
    const ret = r.return!;
    const day = documentToday({ principal: ctx.principal, now: new Date(ret.at) });
    await releaseHold(ctx.db, ctx.workspace, r.resource, r._id);
    const view = returnView(r)!;
    if (ret.settlement_entry_id) await postDamagesSettlement(ctx, r, view.deposit_applied, ret.settlement_entry_id, day);
    if (ret.refund_entry_id) await postDeposit(ctx, r, 'refund', ret.refund_entry_id, day, view.refunded);
    if (ret.damages_invoice_id) {
      const line = view.settled_from_deposit
        ? damagesLine(ctx, `Daños — ${r.resource.name}: ${ret.damages_description}, saldo tras aplicar el depósito`, view.invoiced)
        : damagesLine(ctx, `Daños — ${r.resource.name}: ${ret.damages_description}`, ret.damages);
      await issueInvoiceOnce(ctx, {
        id: ret.damages_invoice_id, customer_id: r.customer_id, customer: r.customer, currency: r.currency, issue_date: day, due_date: day,
        lines: [line],
        withholdings: [], notes: `Alquiler ${r._id}`, source: { rental_id: r._id }, post: r.post,
      });
    }
    return { rental: rentalView(r) };
  },
});
