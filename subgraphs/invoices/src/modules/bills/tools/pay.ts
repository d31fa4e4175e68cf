import { beginOperation, createPositioned, searchTextsOf, CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, localDate, newId, repeatableId, storedUnderId, withLock, type ToolContext } from '@cuadra/shared';
import { assertPeriodOpen } from '../../../books/periods.ts';
import { assertNotHeld } from '../holds.ts';
import { bills, vendorFromCrm } from '../model.ts';
import { BILL_PAYMENT_VIEW_SCHEMA, billPaymentOperation, billPayments, billPaymentView, previewBillPayment, type BillAllocation, type BillPaymentDoc } from '../payments.ts';
import { completeKnownPayment, completePayment, completeStuckPayments } from '../../../open-items/index.ts';

const INPUT = {
  type: 'object', additionalProperties: false, required: ['vendor_id', 'amount', 'currency', 'bills'],
  properties: {
    vendor_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
    amount: { type: 'integer', minimum: 1, maximum: 1e15 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    date: DATE_SCHEMA,
    bank_account: { enum: ['111005', '111010'], description: 'PUC bank account the money left from (default 111005).' },
    reference: { type: 'string', minLength: 1, maxLength: 100 },
    bills: {
      type: 'array', minItems: 1, maxItems: 100,
      description: 'The bills paid, each in full (no amount: its open balance) or in part.',
      items: {
        type: 'object', additionalProperties: false, required: ['bill_id'],
        properties: { bill_id: ID_SCHEMA, amount: { type: 'integer', minimum: 1, maximum: 1e15 } },
      },
    },
  },
} as const;

/**
 * Records a payment made to a vendor against one or more of its posted bills (partial allowed).
 * The amount must equal what is applied: a payment is never left half-booked or turned into an
 * unrecorded advance. One vendor's payments are recorded one after another (shared `withLock`),
 * so two payments of one bill at once answer what two in a row would: the second is refused.
 */
export const pay = defineTool({
  name: 'bills.pay',
  description: 'Record a payment made to a vendor (amount in cents, from a PUC bank account) against one or more of its posted bills, each in full or in part; the bills become partially_paid or paid. Writes the journal entry (payables against bank). Records the payment only: nothing is sent to a bank.',
  risk: 'write',
  input: INPUT,
  output: { type: 'object', additionalProperties: false, required: ['payment'], properties: { payment: BILL_PAYMENT_VIEW_SCHEMA } },
  amount: (input) => input.amount,
  handler: (input, ctx) => payBills(ctx, input),
  // Its dry run, and what a held payment shows the person deciding: the payment, the bills' balances and the journal lines.
  preview: async (input, ctx) => previewBillPayment(ctx, await plannedPayment(input, ctx)),
});

/** What a bill payment names: the vendor, the amount, the bank account it left from and the bills it settles. */
export interface BillPaymentInput { vendor_id: string; amount: number; currency: string; date?: string; bank_account?: '111005' | '111010'; reference?: string; bills: { bill_id: string; amount?: number }[] }

/** What a bill payment is recorded with: a tool call's context, or (`vendor` given) the sweep's. */
export type BillPaymentContext = Pick<ToolContext, 'db' | 'workspace' | 'now'> & Partial<Pick<ToolContext, 'graph'>>;

/**
 * Records a payment to a vendor against its bills: the path `bills.pay` and payment runs share.
 * Serialized per vendor (shared `withLock`). With `id`, the payment's id is the caller's: a
 * payment already recorded under it is completed (if a crash left it pending) and answered, never
 * recorded twice — how a payment run pays each bill exactly once across retries. With `vendor`,
 * the payee as the caller already checked it (a payment run, made from the vendor's bills): crm is
 * not asked again, so a run's confirm finishes from the maintenance sweep, which has no caller.
 */
export function payBills(ctx: BillPaymentContext, input: BillPaymentInput, options: { id?: string; vendor?: { name: string } } = {}) {
  return withLock(ctx.db, vendorPaymentLock(ctx.workspace, input.vendor_id), () => recordPayment(input, ctx, options));
}

/** The lock one vendor's payments are recorded under (a payment run's approval holds its bills under it too). */
export function vendorPaymentLock(workspace: string, vendorId: string): string {
  return `bills:pay:${workspace}:${vendorId}`;
}

async function recordPayment(input: BillPaymentInput, ctx: BillPaymentContext, { id: callerId, vendor: known }: { id?: string; vendor?: { name: string } }) {
  await completeStuckPayments(ctx, billPaymentOperation);
  // The caller's id, or in a call that can run again (keyed, or approved) one the same in every
  // attempt: a dead attempt's payment the store applies late collides with this one (runs.ts, repeatableId).
  const id = callerId ?? repeatableId('bpy') ?? undefined;
  if (id) {
    const known = await billPayments(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (known) return { payment: billPaymentView(await completeKnownPayment(ctx, billPaymentOperation, known)) };
  }
  const doc = await plannedPayment(input, ctx, id, known);
  try {
    await beginOperation(ctx, billPaymentOperation, doc._id);
    await createPositioned(billPayments(ctx.db), doc, { searchable: searchTextsOf });
  } catch (err) {
    // A caller's id taken meanwhile (a lock lease that ran out): the payment is the one recorded under it.
    const known = await storedUnderId(err, billPayments(ctx.db), id, ctx.workspace);
    if (!known) throw err;
    return { payment: billPaymentView(await completeKnownPayment(ctx, billPaymentOperation, known)) };
  }
  return { payment: billPaymentView(await completePayment(ctx, billPaymentOperation, doc)) };
}


/**
 * The payment a call asks for, pending and not yet stored, after every check made before writing
 * (read only): one path for the payment and its dry run.
 */
async function plannedPayment(input: BillPaymentInput, ctx: BillPaymentContext, id?: string, known?: { name: string }): Promise<BillPaymentDoc> {
  // Refused before anything is applied (postEntry holds the rule: books/post.ts).
  await assertPeriodOpen(ctx.db, ctx.workspace, input.date ?? localDate(ctx.now));
  // The payee must be a vendor of this workspace (an archived one may still be paid what it is owed).
  const vendor = known ?? await vendorFromCrm(ctx, input.vendor_id, { archived: true });
  const ids = input.bills.map((b) => b.bill_id);
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw new CuadraError('invalid_input', 'A bill is named twice.', { field: `/bills/${i}/bill_id` });
    seen.add(id);
  });
  const found = new Map((await bills(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace }).lean()).map((b) => [b._id, b]));
  let applied = 0;
  const allocations: BillAllocation[] = input.bills.map((a, i) => {
    const bill = found.get(a.bill_id);
    if (!bill) throw new CuadraError('not_found', `No bill ${a.bill_id} exists in this workspace.`);
    if (bill.vendor_id !== input.vendor_id) throw new CuadraError('invalid_input', `Bill ${bill.supplier_number} is from another vendor.`, { field: `/bills/${i}/bill_id` });
    if (bill.currency !== input.currency) throw new CuadraError('invalid_input', `Bill ${bill.supplier_number} is in ${bill.currency}.`, { field: `/bills/${i}/bill_id` });
    if (bill.kind === 'credit_note') throw new CuadraError('conflict', `${bill.supplier_number} is a credit note; pay the bill it credits.`);
    if (bill.status !== 'posted' && bill.status !== 'partially_paid') throw new CuadraError('conflict', `Bill ${bill.supplier_number} is ${bill.status}; only posted, unpaid bills take payments.`);
    const amount = a.amount ?? bill.balance;
    if (amount > bill.balance) throw new CuadraError('conflict', `Bill ${bill.supplier_number} has ${bill.balance} open; ${amount} cannot be applied to it.`);
    applied += amount;
    return { bill_id: bill._id, supplier_number: bill.supplier_number, requested: amount, applied: null };
  });
  if (applied !== input.amount) throw new CuadraError('invalid_input', `The payment is ${input.amount} but ${applied} is applied to the bills named; they must be equal.`, { field: '/amount' });
  // A bill a payment run's bank file pays takes no other payment (checked again, atomically, as it is applied).
  for (const a of allocations) await assertNotHeld(ctx, found.get(a.bill_id)!, id ?? null);
  return {
    _id: id ?? newId('bpy'), workspace: ctx.workspace, status: 'pending', vendor_id: input.vendor_id, vendor_name: vendor.name,
    search_lc: `${vendor.name} ${input.reference ?? ''}`.toLowerCase(), currency: input.currency, amount: input.amount, date: input.date ?? localDate(ctx.now),
    bank_account: input.bank_account ?? '111005', reference: input.reference ?? null, allocations, journal_entry_id: null, pending_rollups: [], pending_count: 0,
    created_at: ctx.now, updated_at: ctx.now,
  };
}
