import { defineTool, ID_INPUT, TEXT_SCHEMA } from '@cuadra/shared';
import { PAYMENT_RUN_VIEW_SCHEMA, paymentRunView, type PaymentRunDoc } from '../model.ts';
import { releaseClaims, releaseRunHolds, transitionRun } from '../ops.ts';

/** JSON Schema of {@link bankMayStillPay}. */
const BANK_MAY_STILL_PAY_SCHEMA = {
  anyOf: [{ type: 'null' }, {
    type: 'object', additionalProperties: false, required: ['warning', 'currency', 'total', 'count', 'formats', 'transfers'],
    description: 'Only for a run whose bank file was produced: the transfers that file orders, which the bank may still execute if the file was uploaded.',
    properties: {
      warning: TEXT_SCHEMA,
      currency: TEXT_SCHEMA,
      total: { type: 'integer', minimum: 0 },
      count: { type: 'integer', minimum: 0 },
      formats: { type: 'array', items: TEXT_SCHEMA, description: 'The bank file formats the run was exported in.' },
      transfers: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['bill_id', 'supplier_number', 'vendor_id', 'vendor_name', 'amount', 'reference'],
          properties: {
            bill_id: TEXT_SCHEMA, supplier_number: TEXT_SCHEMA, vendor_id: TEXT_SCHEMA, vendor_name: TEXT_SCHEMA, amount: { type: 'integer', minimum: 1 },
            reference: { ...TEXT_SCHEMA, description: 'The transfer\'s reference in the bank file (pain.001 EndToEndId and InstrId).' },
          },
        },
      },
    },
  }],
} as const;

/** What the bank file of a cancelled run orders, or null when no file was ever produced. */
function bankMayStillPay(run: PaymentRunDoc) {
  if (!run.exported_at) return null;
  const formats = [...new Set(run.exports.map((e) => e.format))];
  return {
    warning: `The bank file of this run (${formats.join(', ')}) was produced on ${new Date(run.exported_at).toISOString()}: if it was uploaded, the bank may still make these ${run.lines.length} transfers. Withdraw it at the bank. Its bills take payments again: if the bank pays one anyway, record that payment against the bill (bills.pay or bank.reconcile) instead of paying it a second time.`,
    currency: run.currency, total: run.total, count: run.lines.length, formats,
    transfers: run.lines.map((l) => ({ bill_id: l.bill_id, supplier_number: l.supplier_number, vendor_id: l.vendor_id, vendor_name: l.vendor_name, amount: l.amount, reference: l.payment_id })),
  };
}

/**
 * Cancels a run before it is confirmed; its bills are released (for another run, and from its
 * hold: they take payments again). Nothing is paid. A run whose bank file was produced answers
 * what that file orders (`bank_may_still_pay`): the bank may still execute it.
 */
export const cancel = defineTool({
  name: 'payment_runs.cancel',
  description: 'Cancel a payment run that is draft, approved or exported (before it is confirmed): no bill is paid and its bills are free again (for another run or another payment). For an exported run the answer lists in bank_may_still_pay the transfers its bank file orders: withdraw the file at the bank, since the bank may still execute it.',
  risk: 'destructive',
  input: ID_INPUT,
  output: {
    type: 'object', additionalProperties: false, required: ['payment_run', 'bank_may_still_pay'],
    properties: { payment_run: PAYMENT_RUN_VIEW_SCHEMA, bank_may_still_pay: BANK_MAY_STILL_PAY_SCHEMA },
  },
  async handler(input, ctx) {
    const run = await transitionRun(ctx, input.id, ['draft', 'approved', 'exported'], 'cancelled', { cancelled_at: ctx.now });
    // Cancelled first: a hold whose run is cancelled no longer stops anything, even if a crash stops the release here.
    await releaseRunHolds(ctx, run);
    await releaseClaims(ctx, run);
    return { payment_run: paymentRunView(run), bank_may_still_pay: bankMayStillPay(run) };
  },
});
