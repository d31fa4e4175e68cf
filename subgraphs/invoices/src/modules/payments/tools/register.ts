import { createPositioned, searchTextsOf, CuadraError, defineTool, newId, recordOutput, repeatableId, storedUnderId, withLock, type InputOf, type ToolContext, ID_SCHEMA } from '@cuadra/shared';
import { invoices } from '../../invoices/model.ts';
import { PAYMENT_METHODS, PAYMENT_VIEW_SCHEMA, payments, paymentView, type Allocation, type PaymentDoc } from '../model.ts';
import { localDate } from '../../../lib/money.ts';
import { indexCreated } from '../../../lib/recent.ts';
import { markPayment, paymentOperation, previewPayment } from '../ops.ts';
import { completeKnownPayment, completePayment } from '../../../open-items/index.ts';
import { buyerFromCrm } from '../../items/document-lines.ts';
import { assertPeriodOpen } from '../../../books/periods.ts';


/** Oldest-due open invoices of a customer considered when a payment names none. */
const AUTO_ALLOCATE_LIMIT = 50;

/** The input of payments.register. */
const registerInput = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'amount', 'currency'],
  properties: {
    customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
    amount: { type: 'integer', minimum: 1, maximum: 1e15 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    date: { type: 'string', format: 'date' },
    method: { enum: [...PAYMENT_METHODS] },
    reference: { type: 'string', minLength: 1, maxLength: 100 },
    invoices: {
      type: 'array', minItems: 1, maxItems: 100, uniqueItems: true,
      items: {
        type: 'object', additionalProperties: false, required: ['invoice_id'],
        properties: { invoice_id: ID_SCHEMA, amount: { type: 'integer', minimum: 1, maximum: 1e15 } },
      },
    },
  },
} as const;

/**
 * Registers a payment received: applied to the invoices named (each up to its open balance), or
 * when none are named to the customer's open invoices, oldest due first. What is left over is
 * kept as customer credit. Journalled (Dr bank; Cr receivables, Cr customer advances).
 */
export const register = defineTool({
  name: 'payments.register',
  description: 'Register a payment received from a customer (amount in cents): applied in full or in part to the invoices named (several at once), or to the customer\'s oldest open invoices; an over-payment is kept as customer credit. Writes the journal entry.',
  risk: 'write',
  input: registerInput,
  output: recordOutput('payment', PAYMENT_VIEW_SCHEMA),
  // One customer's payments are registered one after another: ten at once on one invoice answer
  // exactly what ten in a row would (the first applies, the rest are refused), never money booked
  // as credit because a race lowered the balance between the check and the application.
  handler: (input, ctx) => registerPayments(ctx, input),
  // Its dry run, and what a held payment shows the person deciding: the invoices it would settle, the journal lines, the credit left.
  preview: async (input, ctx) => previewPayment(ctx, await paymentToRegister(input, ctx)),
});

/** What registering a payment needs: crm (to check the payer) unless the caller names the payer it already checked. */
export type PaymentContext = Pick<ToolContext, 'db' | 'workspace' | 'now'> & Partial<Pick<ToolContext, 'graph'>>;

/**
 * payments.register's path, for callers inside the subgraph that choose the payment's id first
 * (bank reconciliation): a payment already recorded under that id is completed if a process died
 * on it, and answered — a retry never registers a second payment. With `customer`, the payer as
 * the caller already knows it (the customer of the invoices it pays): crm is not asked, so a
 * reconciliation finishes from the maintenance sweep, which has no caller.
 */
export function registerPayments(ctx: PaymentContext, input: InputOf<typeof registerInput>, options: { id?: string; customer?: { name: string } } = {}) {
  return withLock(ctx.db, `payments:${ctx.workspace}:${input.customer_id}`, () => registerPayment(input, ctx, options.id, options.customer));
}

async function registerPayment(input: InputOf<typeof registerInput>, ctx: PaymentContext, callerId?: string, customer?: { name: string }) {
  // The caller's id, or in a call that can run again (keyed, or approved) one the same in every
  // attempt: a dead attempt's payment the store applies late and this attempt's collide on `_id`,
  // so the call registers one payment, whichever insert lands (see repeatableId, runs.ts).
  const id = callerId ?? repeatableId('pay') ?? undefined;
  if (id) {
    const known = await payments(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (known) return { payment: paymentView(await completeKnownPayment(ctx, paymentOperation, known)) };
  }
  const doc = await paymentToRegister(input, ctx, id, customer);
  await markPayment(ctx, doc._id);
  await indexCreated(ctx.db, ctx.workspace, 'payments', doc.created_at, doc._id);
  try {
    await createPositioned(payments(ctx.db), doc, { searchable: searchTextsOf });
  } catch (err) {
    // Its id taken between the check and the insert (a dead attempt's insert landing, or a lock
    // lease that ran out): the payment is the one recorded under it.
    const known = await storedUnderId(err, payments(ctx.db), id, ctx.workspace);
    if (!known) throw err;
    return { payment: paymentView(await completeKnownPayment(ctx, paymentOperation, known)) };
  }
  const done = await completePayment(ctx, paymentOperation, doc);
  return { payment: paymentView(done) };
}


/** The payment a call asks to register, checked and allocated (each invoice's requested amount), as it would be written `pending`: one path for the payment and its dry run. */
async function paymentToRegister(input: InputOf<typeof registerInput>, ctx: PaymentContext, id?: string, customer?: { name: string }): Promise<PaymentDoc> {
  const date = input.date ?? localDate(ctx.now);
  // Refused before anything is applied (postEntry holds the rule: books/post.ts).
  await assertPeriodOpen(ctx.db, ctx.workspace, date);
  const model = invoices(ctx.db);
  let allocations: Allocation[];
  // The payer must be a party of this workspace (an archived customer may still pay what it owes).
  let customerName = (customer ?? await buyerFromCrm(ctx, input.customer_id, { archived: true })).name;
  if (input.invoices) {
    const ids = input.invoices.map((a) => a.invoice_id);
    if (new Set(ids).size !== ids.length) throw new CuadraError('invalid_input', 'An invoice is named twice.', { field: '/invoices' });
    const found = new Map((await model.find({ _id: { $in: ids }, workspace: ctx.workspace, kind: { $in: ['invoice', 'debit_note'] } }).lean()).map((i) => [i._id, i]));
    let requested = 0;
    allocations = input.invoices.map((a, index) => {
      const inv = found.get(a.invoice_id);
      if (!inv) throw new CuadraError('not_found', `No invoice ${a.invoice_id} exists in this workspace.`);
      if (inv.customer_id !== input.customer_id) throw new CuadraError('invalid_input', `Invoice ${inv.number ?? inv._id} belongs to another customer.`, { field: `/invoices/${index}/invoice_id` });
      if (inv.currency !== input.currency) throw new CuadraError('invalid_input', `Invoice ${inv.number ?? inv._id} is in ${inv.currency}.`, { field: `/invoices/${index}/invoice_id` });
      if (inv.status !== 'posted' && inv.status !== 'partially_paid') {
        throw new CuadraError('conflict', `Invoice ${inv.number ?? inv._id} is ${inv.status}; only posted, unpaid invoices take payments.`);
      }
      if (a.amount !== undefined && a.amount > inv.balance) {
        throw new CuadraError('conflict', `Invoice ${inv.number} has ${inv.balance} open; ${a.amount} cannot be applied to it.`);
      }
      requested += a.amount ?? 0;
      customerName = inv.customer.name;
      return { invoice_id: inv._id, number: inv.number, requested: a.amount ?? null, applied: null };
    });
    if (requested > input.amount) throw new CuadraError('invalid_input', 'The amounts applied to invoices add up to more than the payment.', { field: '/invoices' });
  } else {
    const open = await model.find({ workspace: ctx.workspace, customer_id: input.customer_id, currency: input.currency, status: { $in: ['posted', 'partially_paid'] } })
      .sort({ due_date: 1, number_seq: 1 }).limit(AUTO_ALLOCATE_LIMIT).lean();
    let left = input.amount;
    allocations = [];
    for (const inv of open) {
      if (left <= 0) break;
      customerName = inv.customer.name;
      allocations.push({ invoice_id: inv._id, number: inv.number, requested: Math.min(left, inv.balance), applied: null });
      left -= Math.min(left, inv.balance);
    }
  }
  const doc: PaymentDoc = {
    _id: id ?? newId('pay'), workspace: ctx.workspace, direction: 'incoming', status: 'pending', customer_id: input.customer_id, customer_name: customerName,
    search_lc: `${customerName} ${input.reference ?? ''}`.toLowerCase(), currency: input.currency, amount: input.amount, date, method: input.method ?? 'bank_transfer',
    reference: input.reference ?? null, allocations, applied: 0, unapplied: 0, journal_entry_id: null, pending_rollups: [], pending_count: 0,
    created_at: ctx.now, updated_at: ctx.now,
  };
  return doc;
}
