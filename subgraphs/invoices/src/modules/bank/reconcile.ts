import { CuadraError, type ToolContext } from '@cuadra/shared';
import { journalEntries, postEntry, reverseEntry, type JournalLine } from '../../books/index.ts';
import { assertPeriodOpen } from '../../books/periods.ts';
import { PUC } from '../../accounting/puc.ts';
import { CUSTOMER_PAYMENTS } from '../payments/ops.ts';
import { reversePayment } from '../../open-items/index.ts';
import { pendingChanges } from '../../books/rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, REPAIR_AFTER_MS, rollupIntent } from '../../books/rollup-intents.ts';
import { assertNotHeld } from '../bills/holds.ts';
import { bills } from '../bills/model.ts';
import { BILL_PAYMENTS, billPayments } from '../bills/payments.ts';
import { payBills } from '../bills/tools/pay.ts';
import { invoices } from '../invoices/model.ts';
import { payments } from '../payments/model.ts';
import { registerPayments } from '../payments/tools/register.ts';
import { bankRollupNs } from './import.ts';
import { bankAccounts, bankTransactions, transactionKind, type BankAccountDoc, type BankMatch, type BankTransactionDoc } from './model.ts';

/** One part of a reconciliation as asked: exactly one target and the amount of the transaction it takes. */
export interface MatchInput { invoice_id?: string; bill_id?: string; payment_id?: string; account?: string; amount: number }

/**
 * Checks the parts against the transaction and the workspace, before anything is written:
 * one target each, the amounts summing to |amount|, invoices for money in, bills for money out,
 * each part within what its document has open. Answers the planned matches.
 */
export async function planMatches(ctx: ToolContext, t: BankTransactionDoc, parts: readonly MatchInput[]): Promise<BankMatch[]> {
  const kind = transactionKind(t);
  const total = parts.reduce((s, p) => s + p.amount, 0);
  if (total !== Math.abs(t.amount)) {
    throw new CuadraError('invalid_input', `The parts add up to ${total}; the transaction is ${Math.abs(t.amount)}. They must be equal.`, { field: '/matches' });
  }
  const seen = new Set<string>();
  const out: BankMatch[] = [];
  for (const [i, p] of parts.entries()) {
    const targets = (['invoice_id', 'bill_id', 'payment_id', 'account'] as const).filter((k) => p[k] !== undefined);
    if (targets.length !== 1) throw new CuadraError('invalid_input', 'Each part names exactly one of invoice_id, bill_id, payment_id or account.', { field: `/matches/${i}` });
    const key = targets[0];
    const id = p[key]!;
    if (seen.has(id)) throw new CuadraError('invalid_input', `${id} is named twice.`, { field: `/matches/${i}/${key}` });
    seen.add(id);
    const field = `/matches/${i}/${key}`;
    if (key === 'invoice_id') {
      if (kind !== 'credit') throw new CuadraError('invalid_input', 'Money out of the account cannot pay an invoice; match it to a bill or an account.', { field });
      const inv = await invoices(ctx.db).findOne({ _id: id, workspace: ctx.workspace, kind: 'invoice' }).lean();
      if (!inv) throw new CuadraError('not_found', `No invoice ${id} exists in this workspace.`);
      if (inv.currency !== t.currency) throw new CuadraError('invalid_input', `Invoice ${inv.number ?? id} is in ${inv.currency}; the transaction is in ${t.currency}.`, { field });
      if (inv.status !== 'posted' && inv.status !== 'partially_paid') throw new CuadraError('conflict', `Invoice ${inv.number ?? id} is ${inv.status}; only posted, unpaid invoices take payments.`);
      if (p.amount > inv.balance) throw new CuadraError('conflict', `Invoice ${inv.number} has ${inv.balance} open; ${p.amount} cannot be applied to it.`);
      out.push({ type: 'invoice', id, amount: p.amount, payment_id: null, registered: false, journal_entry_id: null });
    } else if (key === 'bill_id') {
      if (kind !== 'debit') throw new CuadraError('invalid_input', 'Money into the account cannot pay a bill; match it to an invoice or an account.', { field });
      const bill = await bills(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
      if (!bill) throw new CuadraError('not_found', `No bill ${id} exists in this workspace.`);
      if (bill.currency !== t.currency) throw new CuadraError('invalid_input', `Bill ${bill.supplier_number} is in ${bill.currency}; the transaction is in ${t.currency}.`, { field });
      if (bill.status !== 'posted' && bill.status !== 'partially_paid') throw new CuadraError('conflict', `Bill ${bill.supplier_number} is ${bill.status}; only posted, unpaid bills take payments.`);
      if (p.amount > bill.balance) throw new CuadraError('conflict', `Bill ${bill.supplier_number} has ${bill.balance} open; ${p.amount} cannot be applied to it.`);
      await assertNotHeld(ctx, bill, null);
      out.push({ type: 'bill', id, amount: p.amount, payment_id: null, registered: false, journal_entry_id: null });
    } else if (key === 'payment_id') {
      const incoming = id.startsWith('pay_');
      const found = incoming ? await payments(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean() : await billPayments(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
      if (!found) throw new CuadraError('not_found', `No payment ${id} exists in this workspace.`);
      if (incoming !== (kind === 'credit')) throw new CuadraError('invalid_input', `${id} is a ${incoming ? 'payment received' : 'payment made'}; the transaction is money ${kind === 'credit' ? 'in' : 'out'}.`, { field });
      if (found.currency !== t.currency) throw new CuadraError('invalid_input', `Payment ${id} is in ${found.currency}.`, { field });
      if (p.amount > found.amount) throw new CuadraError('invalid_input', `Payment ${id} is ${found.amount}; ${p.amount} cannot be set against it.`, { field: `/matches/${i}/amount` });
      const taken = await bankTransactions(ctx.db).exists({ workspace: ctx.workspace, 'matches.payment_id': id, _id: { $ne: t._id } });
      if (taken) throw new CuadraError('conflict', `Payment ${id} is already reconciled with another bank transaction.`);
      out.push({ type: incoming ? 'payment' : 'bill_payment', id, amount: p.amount, payment_id: id, registered: false, journal_entry_id: null });
    } else {
      if (!PUC[id]) throw new CuadraError('invalid_input', `${id} is not an account of the PUC chart.`, { field });
      if (id.startsWith('1110')) throw new CuadraError('invalid_input', 'The counter-account cannot be a bank account (1110).', { field });
      out.push({ type: 'account', id, amount: p.amount, payment_id: null, registered: false, journal_entry_id: null });
    }
  }
  return out;
}

/** The lines of an `account` part: money in = Dr bank / Cr account; money out = Dr account / Cr bank. */
export function accountEntryLines(account: BankAccountDoc, kind: 'credit' | 'debit', code: string, amount: number): JournalLine[] {
  const bank = { account: account.puc_account, name: PUC[account.puc_account] ?? 'Bancos', party_id: null };
  const other = { account: code, name: PUC[code] ?? code, party_id: null };
  return kind === 'credit'
    ? [{ ...bank, debit: amount, credit: 0 }, { ...other, debit: 0, credit: amount }]
    : [{ ...other, debit: amount, credit: 0 }, { ...bank, debit: 0, credit: amount }];
}

/**
 * Reconciles a transaction: takes the lease (one conditional update unreconciled → reconciling,
 * so of two reconciliations at once one proceeds and the other is refused), registers each
 * missing payment through the payments and bills modules' own paths, records each part as it
 * is booked (conditional on the lease's `rev`), then completes (reconciling → reconciled) with
 * the rollup intent that moves the account's counters from unreconciled to reconciled.
 *
 * The payments and entries a reconciliation books have ids derived from the transaction, its
 * `attempt` and the part (customer payments through payments.register's path with that id, vendor
 * payments through bills.pay's, entries by their `_id`): a process dying between booking one and
 * recording it on the transaction is taken over after the lease by a call with the same parts,
 * which finds what was booked and books nothing twice. A takeover with other parts is refused
 * (finish it with the same parts, or undo it).
 */
export async function reconcileTransaction(ctx: ToolContext, transactionId: string, parts: readonly MatchInput[]): Promise<BankTransactionDoc> {
  const model = bankTransactions(ctx.db);
  const t = await model.findOne({ _id: transactionId, workspace: ctx.workspace }).lean();
  if (!t) throw new CuadraError('not_found', `No bank transaction ${transactionId} exists in this workspace.`);
  const expired = t.status === 'reconciling' && t.lock_at !== null && ctx.now.getTime() - new Date(t.lock_at).getTime() >= REPAIR_AFTER_MS;
  // Before attempts existed, only a lease that booked nothing could be taken over.
  const legacyFree = t.matches.every((m) => m.type === 'payment' || m.type === 'bill_payment' || (!m.payment_id && !m.journal_entry_id));
  if (t.status !== 'unreconciled' && !(expired && !t.undoing && (t.attempt !== undefined || legacyFree))) {
    throw new CuadraError('conflict', `Bank transaction ${transactionId} is ${t.status}.`);
  }
  const takeover = t.status === 'reconciling' && t.attempt !== undefined;
  const account = await bankAccounts(ctx.db).findOne({ _id: t.bank_id, workspace: ctx.workspace }).lean();
  if (!account) throw new CuadraError('internal', `The bank account of ${transactionId} vanished.`);
  await assertPeriodOpen(ctx.db, ctx.workspace, t.date);
  const same = (a: readonly { type: string; id: string; amount: number }[], b: readonly MatchInput[]) => a.length === b.length
    && a.every((m, i) => m.amount === b[i].amount && m.id === (b[i].invoice_id ?? b[i].bill_id ?? b[i].payment_id ?? b[i].account));
  if (takeover && !same(t.matches, parts)) {
    throw new CuadraError('conflict', `Bank transaction ${transactionId} was being reconciled with other parts by a call that did not finish; reconcile it with the same parts, or undo it with bank.unreconcile.`);
  }
  // A takeover re-checks nothing against balances its own dead attempt already lowered: what it
  // booked is found by id below. A fresh attempt checks every part.
  const planned = takeover ? t.matches.map((m) => ({ ...m })) : await planMatches(ctx, t, parts);
  const attempt = takeover ? t.attempt! : (t.attempt ?? 0) + 1;
  const leased = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: t.status, rev: t.rev },
    { $set: { status: 'reconciling', lock_at: ctx.now, matches: planned, attempt, undoing: null, updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!leased) throw new CuadraError('conflict', `Bank transaction ${transactionId} is being reconciled by another request.`);
  const rev = leased.rev;
  const kind = transactionKind(t);
  const matches = [...planned];
  const reference = t.reference ?? t.entry_id ?? t._id;
  try {
    for (const [i, m] of matches.entries()) {
      if (m.type === 'invoice') {
        const inv = await invoices(ctx.db).findOne({ _id: m.id, workspace: ctx.workspace }).lean();
        // The payment's id is derived from the transaction, attempt and part: a takeover completes it, never registers twice.
        const r = await registerPayments(ctx, { customer_id: inv!.customer_id, amount: m.amount, currency: t.currency, date: t.date, method: 'bank_transfer', reference, invoices: [{ invoice_id: m.id, amount: m.amount }] }, { id: `pay_${t._id.slice(4)}_${attempt}_${i}` });
        matches[i] = { ...m, payment_id: r.payment.id, registered: true };
      } else if (m.type === 'bill') {
        const bill = await bills(ctx.db).findOne({ _id: m.id, workspace: ctx.workspace }).lean();
        // The payment's id is derived from the transaction, attempt and part: a takeover completes it, never pays twice.
        const r = await payBills(ctx, { vendor_id: bill!.vendor_id, amount: m.amount, currency: t.currency, date: t.date, bank_account: account.puc_account, reference, bills: [{ bill_id: m.id, amount: m.amount }] }, { id: `bpy_${t._id.slice(4)}_${attempt}_${i}` });
        matches[i] = { ...m, payment_id: r.payment.id, registered: true };
      } else if (m.type === 'account') {
        const entryId = `je_${t._id}_${attempt}_${i}`;
        await postEntry(ctx, { kind: 'bank_transaction', id: t._id }, accountEntryLines(account, kind, m.id, m.amount), {
          id: entryId, date: t.date, currency: t.currency, memo: `Conciliación bancaria ${reference} — ${t.description}`,
        });
        matches[i] = { ...m, journal_entry_id: entryId };
      } else {
        continue;
      }
      await model.updateOne({ _id: t._id, status: 'reconciling', rev }, { $set: { [`matches.${i}`]: matches[i], lock_at: new Date() } });
    }
  } catch (err) {
    // Nothing booked yet: the lease is given back. Something booked (recorded or not): the
    // transaction stays reconciling, for a call with the same parts to finish after the lease or
    // for bank.unreconcile to reverse what was recorded.
    if (!takeover && matches.every((m, i) => m === planned[i]) && !(await bookedAny(ctx, t._id, attempt, planned))) {
      await model.updateOne({ _id: t._id, status: 'reconciling', rev }, { $set: { status: 'unreconciled', matches: [], lock_at: null, updated_at: ctx.now } });
    }
    throw err;
  }
  const abs = Math.abs(t.amount);
  const intent = rollupIntent([{ day: t.date, currency: bankRollupNs(t.bank_id), inc: { unrec_n: -1, unrec_amt: -abs, rec_n: 1, rec_amt: abs } }], ctx.now);
  await markIntent(ctx.db, ctx.workspace, model, t._id, intent);
  const counted = intentUpdate(intent);
  const done = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: 'reconciling', rev },
    { $set: { status: 'reconciled', matches, reconciled_at: ctx.now, lock_at: null, updated_at: ctx.now }, $inc: { rev: 1, ...(counted.$inc ?? {}) }, ...(counted.$push ? { $push: counted.$push } : {}) },
    { returnDocument: 'after' },
  ).lean();
  if (!done) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    throw new CuadraError('conflict', `Bank transaction ${transactionId} changed while being reconciled.`);
  }
  await applyRollupIntent(ctx.db, model, t._id, ctx.workspace, intent);
  return (await model.findById(t._id).lean())!;
}

/** Whether any part of an attempt booked something under its derived id (recorded on the transaction or not). */
async function bookedAny(ctx: ToolContext, txId: string, attempt: number, planned: readonly BankMatch[]): Promise<boolean> {
  for (const [i, m] of planned.entries()) {
    if (m.type === 'invoice' && await payments(ctx.db).exists({ _id: `pay_${txId.slice(4)}_${attempt}_${i}` })) return true;
    if (m.type === 'bill' && await billPayments(ctx.db).exists({ _id: `bpy_${txId.slice(4)}_${attempt}_${i}` })) return true;
    if (m.type === 'account' && await journalEntries(ctx.db).exists({ _id: `je_${txId}_${attempt}_${i}` })) return true;
  }
  return false;
}

/**
 * Undoes a reconciliation: payments it registered are reversed through the payments and bills
 * modules' own path (the payment engine's reversePayment, open-items/payment.ts, for either direction:
 * the documents owe again, reversing journal entries), entries it wrote against accounts are
 * reversed by reversing entries (never deleted), links to payments found recorded are dropped,
 * and the transaction goes back to unreconciled — one conditional update on `rev`, with the
 * counters moved back. Refused (conflict) when the transaction's period or the reversal's is
 * closed. Also finishes a reconciliation a dead process left `reconciling` (lease older than a
 * minute): what it booked is reversed the same way; its counters had not moved.
 */
export async function unreconcileTransaction(ctx: ToolContext, transactionId: string, date?: string): Promise<BankTransactionDoc> {
  const model = bankTransactions(ctx.db);
  const t = await model.findOne({ _id: transactionId, workspace: ctx.workspace }).lean();
  if (!t) throw new CuadraError('not_found', `No bank transaction ${transactionId} exists in this workspace.`);
  const stale = t.status === 'reconciling' && t.lock_at !== null && ctx.now.getTime() - new Date(t.lock_at).getTime() >= REPAIR_AFTER_MS;
  if (t.status !== 'reconciled' && !stale) throw new CuadraError('conflict', `Bank transaction ${transactionId} is ${t.status}; only a reconciled transaction can be undone.`);
  const when = date ?? t.date;
  if (when < t.date) throw new CuadraError('invalid_input', 'The reversal cannot be dated before the transaction.', { field: '/date' });
  await assertPeriodOpen(ctx.db, ctx.workspace, t.date);
  await assertPeriodOpen(ctx.db, ctx.workspace, when);
  // A dead undo taken over keeps the status its undo started from: the counters move back only if it was reconciled.
  const from = t.status === 'reconciling' && t.undoing ? t.undoing : t.status as 'reconciled' | 'reconciling';
  const wasReconciled = from === 'reconciled';
  const leased = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: t.status, rev: t.rev },
    { $set: { status: 'reconciling', lock_at: ctx.now, undoing: from, updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!leased) throw new CuadraError('conflict', `Bank transaction ${transactionId} is being changed by another request.`);
  for (const m of t.matches) {
    if (m.type === 'invoice' && m.registered && m.payment_id) await reversePayment(ctx, CUSTOMER_PAYMENTS, m.payment_id, when);
    else if (m.type === 'bill' && m.registered && m.payment_id) await reversePayment(ctx, BILL_PAYMENTS, m.payment_id, when);
    else if (m.type === 'account' && m.journal_entry_id) {
      await reverseEntry(ctx, m.journal_entry_id, when, { id: `je_rev_${m.journal_entry_id.slice(3)}`, memo: `Reversión de ${m.journal_entry_id} (conciliación deshecha)` });
    }
  }
  const abs = Math.abs(t.amount);
  const intent = wasReconciled ? rollupIntent([{ day: t.date, currency: bankRollupNs(t.bank_id), inc: { unrec_n: 1, unrec_amt: abs, rec_n: -1, rec_amt: -abs } }], ctx.now) : null;
  await markIntent(ctx.db, ctx.workspace, model, t._id, intent);
  const counted = intentUpdate(intent);
  const done = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: 'reconciling', rev: leased.rev },
    { $set: { status: 'unreconciled', matches: [], reconciled_at: null, lock_at: null, undoing: null, updated_at: ctx.now }, $inc: { rev: 1, ...(counted.$inc ?? {}) }, ...(counted.$push ? { $push: counted.$push } : {}) },
    { returnDocument: 'after' },
  ).lean();
  if (!done) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    throw new CuadraError('conflict', `Bank transaction ${transactionId} changed while being undone.`);
  }
  await applyRollupIntent(ctx.db, model, t._id, ctx.workspace, intent);
  return (await model.findById(t._id).lean())!;
}
