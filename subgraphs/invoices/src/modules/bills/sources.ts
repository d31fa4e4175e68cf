import { defineSource } from '@cuadra/shared';
import { BILL_STATUSES, billMatches, bills, type BillDoc } from './model.ts';

/** The compact row of a bill in records.list. */
function billRow(b: BillDoc) {
  return {
    id: b._id, status: b.status, supplier_number: b.supplier_number, vendor_id: b.vendor_id, vendor_name: b.vendor.name, currency: b.currency,
    issue_date: b.issue_date, due_date: b.due_date, total: b.total, amount_due: b.amount_due, balance: b.balance,
  };
}

/**
 * records.list `bills`: status draft, posted, partially_paid, paid or void; search a
 * case-insensitive substring of the supplier number or vendor name — the same test as bills.list.
 * No kinds (vendor credit notes are not built yet): a `kind` is refused at /kind.
 */
export const billsSource = defineSource<BillDoc>({
  model: bills,
  search: billMatches,
  statuses: BILL_STATUSES,
  row: billRow,
});
