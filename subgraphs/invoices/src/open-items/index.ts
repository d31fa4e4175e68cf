/**
 * The open-item floor (issue 32): one open item with a direction (receivable | payable) and kinds
 * (invoice, bill, credit note, debit note) — change, post, settle — and one payment with a
 * direction and allocations — complete, reverse. It sits on the books and imports no module: the
 * invoices and bills modules declare their {@link OpenItemLedger}, the payments modules their
 * {@link PaymentLedger}, and call in (ARCHITECTURE.md, 'The finance kernel').
 */
export {
  changeOpenItem, changerOf, insertOpenItem, missingItem, paymentApplied, paymentReopened, settledStatus,
  OPEN_ITEM_RECORD_FIELDS, type OpenItemRecord, type ChangeOf, type Direction, type ItemContext, type ItemSettlement, type OpenItemChange, type OpenItemDoc, type OpenItemLedger, type PostClaim, type SettledStatus,
} from './item.ts';
export { definePostOperation, postOpenItem, previewOpenItemPost, type Booking, type Posting, type PostContext, type PostOperation } from './post.ts';
export {
  completeKnownPayment, completePayment, completeStuckPayments, definePaymentOperation, PAYMENT_RECORD_FIELDS, paymentEntry, paymentEntryId, previewAllocations, reversePayment, settleAllocations,
  type AllocationRecord, type DueChange, type InFlight, type PaymentLedger, type PaymentRecord, type SettledAllocation,
} from './payment.ts';
