import { defineSource } from '@cuadra/shared';
import { BILL_KINDS, BILL_STATUSES, billMatches, bills, type BillDoc } from './model.ts';

/** The compact row of a bill in records.list. */
function billRow(b: BillDoc) {
  return {
    id: b._id, kind: b.kind ?? 'invoice', credit_of: b.credit_of ?? null, status: b.status, supplier_number: b.supplier_number, vendor_id: b.vendor_id, vendor_name: b.vendor.name, currency: b.currency,
    issue_date: b.issue_date, due_date: b.due_date, total: b.total, amount_due: b.amount_due, balance: b.balance,
  };
}

/**
 * records.list `bills`: status draft, posted, partially_paid, paid or void; search a
 * case-insensitive substring of the supplier number or vendor name — the same test as bills.list.
 * kind invoice (a vendor's bill) or credit_note (a vendor's credit note against one, bills.credit_note).
 */
export const billsSource = defineSource<BillDoc>({
  model: bills,
  search: billMatches,
  kinds: Object.fromEntries(BILL_KINDS.map((k) => [k, (b: BillDoc) => (b.kind ?? 'invoice') === k])),
  statuses: BILL_STATUSES,
  row: billRow,
});
