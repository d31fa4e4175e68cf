import { defineSource, type RecordsQuery, type ReadContext } from '@cuadra/shared';
import { allTimeCounts } from '../../books/rollup-intents.ts';
import { paymentMatches, payments, type PaymentDoc } from './model.ts';

/** The compact row of a payment in records.list. */
function paymentRow(p: PaymentDoc) {
  return {
    id: p._id, direction: p.direction, status: p.status, customer_id: p.customer_id, customer_name: p.customer_name, currency: p.currency,
    amount: p.amount, applied: p.applied, unapplied: p.unapplied, date: p.date, reference: p.reference,
  };
}

/** How many payments match the kind, from the count rollup kept on write; not known with a search. */
async function paymentsTotal(q: RecordsQuery, ctx: ReadContext): Promise<number | null> {
  if (q.search) return null;
  // Only incoming payments are registered so far.
  return q.kind === 'outgoing' ? 0 : ((await allTimeCounts(ctx.db, ctx.workspace)).payments ?? 0);
}

/**
 * records.list `payments`: kind is the direction (incoming, outgoing); status is ignored
 * (specification §2.5); search over the customer name and reference.
 */
export const paymentsSource = defineSource<PaymentDoc>({
  model: payments,
  search: paymentMatches,
  kinds: { incoming: { direction: 'incoming' }, outgoing: { direction: 'outgoing' } },
  row: paymentRow,
  total: paymentsTotal,
});
