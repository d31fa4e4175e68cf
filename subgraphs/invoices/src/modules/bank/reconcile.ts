import { beginOperation, CuadraError, defineOperation, dropOperation, runOperation, takeOverOperation, type LegacyMarker, type OperationContext, type OperationKind, type PeerGraph, type ToolContext } from '@cuadra/shared';
import type { Connection } from 'mongoose';
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
 * The record of a reconciliation or of its undo, for the durable-operation runner: the transaction
 * and the attempt (`<transaction>:<attempt>`; 0 for one reconciled before attempts existed).
 */
function attemptRecord(t: Pick<BankTransactionDoc, '_id' | 'attempt'>): string {
  return `${t._id}:${t.attempt ?? 0}`;
}

/** The transaction of an attempt's record while it is still that attempt (null once another began). */
async function loadAttempt(ctx: OperationContext, record: string): Promise<BankTransactionDoc | null> {
  const at = record.lastIndexOf(':');
  const t = await bankTransactions(ctx.db).findOne({ _id: record.slice(0, at), workspace: ctx.workspace }).lean();
  return t && String(t.attempt ?? 0) === record.slice(at + 1) ? t : null;
}

/** The graph of the call running a step, none when the maintenance sweep finishes it (crm is then not asked: see the steps). */
function callerGraph(ctx: OperationContext): PeerGraph | undefined {
  return (ctx as Partial<ToolContext>).graph;
}

/**
 * Takes over the reconciliation or undo holding `t` when its process died: the runner's marker past
 * the lease (one taker), or the lease an older version kept on the transaction (`lock_at`; the
 * lease write that follows is conditional on `rev`: one taker). False while it is alive.
 */
async function takeOverDead(ctx: ToolContext, t: BankTransactionDoc, kind: OperationKind<BankTransactionDoc>): Promise<boolean> {
  if (t.lock_at) return ctx.now.getTime() - new Date(t.lock_at).getTime() >= REPAIR_AFTER_MS;
  return takeOverOperation(ctx, kind, attemptRecord(t));
}

/** Whether a transaction is held (`reconciling`) by the given work: a reconciliation, or an undo. */
const heldFor = (t: BankTransactionDoc, undo: boolean) => t.status === 'reconciling' && Boolean(t.undoing) === undo;

/**
 * Finishes a held attempt's last move in one conditional update on `rev`, with the rollup intent
 * that moves the account's counters by `inc` (none: null), or answers the transaction a concurrent
 * finisher already moved there.
 */
async function settleAttempt(ctx: OperationContext, t: BankTransactionDoc, to: 'reconciled' | 'unreconciled', set: Partial<BankTransactionDoc>, inc: Record<string, number> | null): Promise<BankTransactionDoc> {
  const model = bankTransactions(ctx.db);
  const intent = inc ? rollupIntent([{ day: t.date, currency: bankRollupNs(t.bank_id), inc }], ctx.now) : null;
  await markIntent(ctx.db, ctx.workspace, model, t._id, intent);
  const counted = intentUpdate(intent);
  const done = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: 'reconciling', rev: t.rev },
    { $set: { ...set, status: to, lock_at: null, updated_at: ctx.now }, $inc: { rev: 1, ...(counted.$inc ?? {}) }, ...(counted.$push ? { $push: counted.$push } : {}) },
    { returnDocument: 'after' },
  ).lean();
  if (!done) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    const now = await model.findById(t._id).lean();
    if (now && now.status === to && now.attempt === t.attempt) return now;
    throw new CuadraError('conflict', `Bank transaction ${t._id} changed while being ${to === 'reconciled' ? 'reconciled' : 'undone'}.`);
  }
  await applyRollupIntent(ctx.db, model, t._id, ctx.workspace, intent);
  return (await model.findById(t._id).lean())!;
}

/**
 * A reconciliation as a durable operation (shared/src/operations.ts), begun before the transaction
 * is leased (unreconciled → reconciling, its planned parts and attempt); its steps, each idempotent:
 * 1. each part booked that is not yet recorded — a customer payment through payments.register's
 *    path, a vendor payment through bills.pay's, an entry against an account by its `_id`, each under
 *    an id derived from the transaction, the attempt and the part, so one booked before a crash is
 *    found, never booked twice — and recorded on the transaction (conditional on `rev`);
 * 2. reconciling → reconciled with the rollup intent that moves the account's counters from
 *    unreconciled to reconciled, in one conditional update.
 * A process that dies in between leaves the marker: the maintenance sweep, or a call with the same
 * parts, takes it over after the lease and runs the steps again. From the sweep (no caller) crm is
 * not asked again: the payer is the invoice's customer, the payee the bill's vendor, as they were
 * checked when the documents were made.
 */
export const reconcileOperation: OperationKind<BankTransactionDoc> = defineOperation<BankTransactionDoc>({
  kind: 'bank_reconcile',
  legacyMarkers: [{
    collection: 'bank_transactions', filter: { status: 'reconciling', lock_at: { $ne: null }, undoing: null, attempt: { $exists: true } },
    record: (m) => `${m._id}:${String(m.attempt)}`, leasedAt: (m) => m.lock_at as Date, release: releaseLegacyLease,
  }],
  load: loadAttempt,
  steps: [
    async function bookEachPart(ctx, t) {
      if (!heldFor(t, false)) return t;
      const model = bankTransactions(ctx.db);
      const account = await bankAccounts(ctx.db).findOne({ _id: t.bank_id, workspace: ctx.workspace }).lean();
      if (!account) throw new CuadraError('internal', `The bank account of ${t._id} vanished.`);
      const graph = callerGraph(ctx);
      const kind = transactionKind(t);
      const attempt = t.attempt!;
      const reference = t.reference ?? t.entry_id ?? t._id;
      const matches = [...t.matches];
      for (const [i, m] of matches.entries()) {
        if (m.type === 'invoice' && !m.registered) {
          const inv = await invoices(ctx.db).findOne({ _id: m.id, workspace: ctx.workspace }).lean();
          const r = await registerPayments({ ...ctx, graph }, { customer_id: inv!.customer_id, amount: m.amount, currency: t.currency, date: t.date, method: 'bank_transfer', reference, invoices: [{ invoice_id: m.id, amount: m.amount }] }, {
            id: `pay_${t._id.slice(4)}_${attempt}_${i}`, customer: graph ? undefined : { name: inv!.customer.name },
          });
          matches[i] = { ...m, payment_id: r.payment.id, registered: true };
        } else if (m.type === 'bill' && !m.registered) {
          const bill = await bills(ctx.db).findOne({ _id: m.id, workspace: ctx.workspace }).lean();
          const r = await payBills({ ...ctx, graph }, { vendor_id: bill!.vendor_id, amount: m.amount, currency: t.currency, date: t.date, bank_account: account.puc_account, reference, bills: [{ bill_id: m.id, amount: m.amount }] }, {
            id: `bpy_${t._id.slice(4)}_${attempt}_${i}`, vendor: graph ? undefined : { name: bill!.vendor.name },
          });
          matches[i] = { ...m, payment_id: r.payment.id, registered: true };
        } else if (m.type === 'account' && !m.journal_entry_id) {
          const entryId = `je_${t._id}_${attempt}_${i}`;
          await postEntry(ctx, { kind: 'bank_transaction', id: t._id }, accountEntryLines(account, kind, m.id, m.amount), {
            id: entryId, date: t.date, currency: t.currency, memo: `Conciliación bancaria ${reference} — ${t.description}`,
          });
          matches[i] = { ...m, journal_entry_id: entryId };
        } else {
          continue;
        }
        await model.updateOne({ _id: t._id, status: 'reconciling', rev: t.rev }, { $set: { [`matches.${i}`]: matches[i] } });
      }
      return { ...t, matches };
    },
    async function markReconciled(ctx, t) {
      if (!heldFor(t, false)) return t;
      const abs = Math.abs(t.amount);
      return settleAttempt(ctx, t, 'reconciled', { matches: t.matches, reconciled_at: ctx.now }, { unrec_n: -1, unrec_amt: -abs, rec_n: 1, rec_amt: abs });
    },
  ],
});

/** Clears the lease an older version kept on a transaction, once the runner holds its marker. */
async function releaseLegacyLease(db: Connection, m: LegacyMarker): Promise<void> {
  await bankTransactions(db).updateOne({ _id: m._id, lock_at: m.lock_at as Date }, { $set: { lock_at: null } });
}

/**
 * Reconciles a transaction: checks the parts ({@link planMatches}), begins the operation, takes the
 * transaction (one conditional update on `rev`, unreconciled → reconciling, so of two
 * reconciliations at once one proceeds and the other is refused) and runs
 * {@link reconcileOperation}'s steps. A transaction held by a reconciliation whose process died is
 * taken over (after the lease) by a call with the same parts, which finds what was booked and books
 * nothing twice; a takeover with other parts is refused (finish it with the same parts, or undo it).
 * A failure before anything was booked gives the transaction back (unreconciled); after, it stays
 * reconciling for the sweep (or a call with the same parts) to finish, or bank.unreconcile to undo.
 */
export async function reconcileTransaction(ctx: ToolContext, transactionId: string, parts: readonly MatchInput[]): Promise<BankTransactionDoc> {
  const model = bankTransactions(ctx.db);
  const t = await model.findOne({ _id: transactionId, workspace: ctx.workspace }).lean();
  if (!t) throw new CuadraError('not_found', `No bank transaction ${transactionId} exists in this workspace.`);
  // Before attempts existed, only a lease that booked nothing could be taken over.
  const legacyFree = t.matches.every((m) => m.type === 'payment' || m.type === 'bill_payment' || (!m.payment_id && !m.journal_entry_id));
  if (t.status !== 'unreconciled' && !(heldFor(t, false) && (t.attempt !== undefined || legacyFree))) {
    throw new CuadraError('conflict', `Bank transaction ${transactionId} is ${t.status}.`);
  }
  const takeover = t.status === 'reconciling' && t.attempt !== undefined;
  const account = await bankAccounts(ctx.db).findOne({ _id: t.bank_id, workspace: ctx.workspace }).lean();
  if (!account) throw new CuadraError('internal', `The bank account of ${transactionId} vanished.`);
  await assertPeriodOpen(ctx.db, ctx.workspace, t.date);
  if (t.status === 'reconciling' && !(await takeOverDead(ctx, t, reconcileOperation))) throw new CuadraError('conflict', `Bank transaction ${transactionId} is ${t.status}.`);
  const same = (a: readonly { type: string; id: string; amount: number }[], b: readonly MatchInput[]) => a.length === b.length
    && a.every((m, i) => m.amount === b[i].amount && m.id === (b[i].invoice_id ?? b[i].bill_id ?? b[i].payment_id ?? b[i].account));
  if (takeover && !same(t.matches, parts)) {
    throw new CuadraError('conflict', `Bank transaction ${transactionId} was being reconciled with other parts by a call that did not finish; reconcile it with the same parts, or undo it with bank.unreconcile.`);
  }
  // A takeover re-checks nothing against balances its own dead attempt already lowered: what it
  // booked is found by id. A fresh attempt checks every part.
  const planned = takeover ? t.matches.map((m) => ({ ...m })) : await planMatches(ctx, t, parts);
  const attempt = takeover ? t.attempt! : (t.attempt ?? 0) + 1;
  const record = attemptRecord({ _id: t._id, attempt });
  await beginOperation(ctx, reconcileOperation, record);
  const leased = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: t.status, rev: t.rev },
    { $set: { status: 'reconciling', lock_at: null, matches: planned, attempt, undoing: null, updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  // The marker stays: it may be the winner's (same attempt), which then finishes or is finished by the sweep.
  if (!leased) throw new CuadraError('conflict', `Bank transaction ${transactionId} is being reconciled by another request.`);
  try {
    return await runOperation(ctx, reconcileOperation, leased, record);
  } catch (err) {
    // Nothing booked yet: the transaction is given back and the operation ends. Something booked:
    // it stays reconciling, for the sweep or a call with the same parts to finish, or an undo.
    if (!takeover && !(await bookedAny(ctx, t._id, attempt, planned))) {
      const back = await model.updateOne({ _id: t._id, status: 'reconciling', attempt, rev: leased.rev }, { $set: { status: 'unreconciled', matches: [], updated_at: ctx.now } });
      if (back.modifiedCount === 1) await dropOperation(ctx, reconcileOperation, record);
    }
    throw err;
  }
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
 * The undo of a reconciliation as a durable operation, begun before the transaction is taken
 * (reconciled → reconciling with `undoing` and the reversals' date); its steps, each idempotent:
 * 1. payments it registered reversed through the payment engine's reversePayment (open-items/
 *    payment.ts, either direction: the documents owe again; a payment already reversed is left),
 *    entries it wrote against accounts reversed by reversing entries under ids of their own
 *    (never deleted), links to payments recorded before simply dropped;
 * 2. back to unreconciled — one conditional update on `rev` — with the counters moved back when it
 *    started from reconciled (a dead reconciliation undone never moved them).
 */
export const unreconcileOperation: OperationKind<BankTransactionDoc> = defineOperation<BankTransactionDoc>({
  kind: 'bank_unreconcile',
  legacyMarkers: [{
    collection: 'bank_transactions', filter: { status: 'reconciling', lock_at: { $ne: null }, undoing: { $ne: null } },
    record: (m) => `${m._id}:${String(m.attempt ?? 0)}`, leasedAt: (m) => m.lock_at as Date, release: releaseLegacyLease,
  }],
  load: loadAttempt,
  steps: [
    async function reverseEachPart(ctx, t) {
      if (!heldFor(t, true)) return t;
      const when = t.undo_date ?? t.date;
      for (const m of t.matches) {
        if (m.type === 'invoice' && m.registered && m.payment_id) await reversePayment(ctx, CUSTOMER_PAYMENTS, m.payment_id, when);
        else if (m.type === 'bill' && m.registered && m.payment_id) await reversePayment(ctx, BILL_PAYMENTS, m.payment_id, when);
        else if (m.type === 'account' && m.journal_entry_id) {
          await reverseEntry(ctx, m.journal_entry_id, when, { id: `je_rev_${m.journal_entry_id.slice(3)}`, memo: `Reversión de ${m.journal_entry_id} (conciliación deshecha)` });
        }
      }
      return t;
    },
    async function markUnreconciled(ctx, t) {
      if (!heldFor(t, true)) return t;
      const abs = Math.abs(t.amount);
      const counters = t.undoing === 'reconciled' ? { unrec_n: 1, unrec_amt: abs, rec_n: -1, rec_amt: -abs } : null;
      return settleAttempt(ctx, t, 'unreconciled', { matches: [], reconciled_at: null, undoing: null, undo_date: null }, counters);
    },
  ],
});

/**
 * Undoes a reconciliation ({@link unreconcileOperation}): begun, the transaction taken (one
 * conditional update on `rev`), then its steps run. Refused (conflict) when the transaction's
 * period or the reversal's is closed. Also finishes an undo, or undoes a reconciliation, whose
 * process died (after the lease): what it booked is reversed the same way; a dead reconciliation's
 * counters had not moved.
 */
export async function unreconcileTransaction(ctx: ToolContext, transactionId: string, date?: string): Promise<BankTransactionDoc> {
  const model = bankTransactions(ctx.db);
  const t = await model.findOne({ _id: transactionId, workspace: ctx.workspace }).lean();
  if (!t) throw new CuadraError('not_found', `No bank transaction ${transactionId} exists in this workspace.`);
  if (t.status !== 'reconciled' && t.status !== 'reconciling') throw new CuadraError('conflict', `Bank transaction ${transactionId} is ${t.status}; only a reconciled transaction can be undone.`);
  const when = date ?? t.undo_date ?? t.date;
  if (when < t.date) throw new CuadraError('invalid_input', 'The reversal cannot be dated before the transaction.', { field: '/date' });
  await assertPeriodOpen(ctx.db, ctx.workspace, t.date);
  await assertPeriodOpen(ctx.db, ctx.workspace, when);
  const undoing = Boolean(t.undoing);
  if (t.status === 'reconciling' && !(await takeOverDead(ctx, t, undoing ? unreconcileOperation : reconcileOperation))) {
    throw new CuadraError('conflict', `Bank transaction ${transactionId} is ${t.status}; only a reconciled transaction can be undone.`);
  }
  // A dead undo taken over keeps the status its undo started from: the counters move back only if it was reconciled.
  const from = t.status === 'reconciling' && t.undoing ? t.undoing : t.status;
  const record = attemptRecord(t);
  await beginOperation(ctx, unreconcileOperation, record);
  const leased = await model.findOneAndUpdate(
    { _id: t._id, workspace: ctx.workspace, status: t.status, rev: t.rev },
    { $set: { status: 'reconciling', lock_at: null, undoing: from, undo_date: when, updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!leased) throw new CuadraError('conflict', `Bank transaction ${transactionId} is being changed by another request.`);
  // A dead reconciliation taken over ends here: this undo reverses what it booked.
  if (t.status === 'reconciling' && !undoing) await dropOperation(ctx, reconcileOperation, record);
  return runOperation(ctx, unreconcileOperation, leased, record);
}
