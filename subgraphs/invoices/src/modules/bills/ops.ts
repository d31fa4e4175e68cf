import { createPositioned, CuadraError, newId, type ToolContext, REPAIR_AFTER_MS } from '@cuadra/shared';
import { postEntry, tagsKey, type JournalLine } from '../../books/index.ts';
import { assertPeriodOpen } from '../../books/periods.ts';
import { pendingChanges } from '../../books/rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, rollupIntent, type RollupDelta } from '../../books/rollup-intents.ts';
import { withholdingCurrency, withholdingIncrements } from '../../accounting/withholdings.ts';
import { BILL_LINE_ACCOUNTS, PAYABLE_ACCOUNTS, withholdingPayableAccount } from './accounts.ts';
import { billIsOpen, billsDue } from './due.ts';
import { blockingHold, heldRefusal, settlementOf } from './holds.ts';
import { bills, expenseOf, type BillDoc, type BillStatus, type BillWithholding } from './model.ts';


/**
 * The payables keep their counters in the subgraph's rollups (rollups.ts: idempotent intents,
 * repair after a crash) under their own currency namespace `ap:<currency>`, so no counter of a
 * bill ever lands in a receivables document (the due-date grain included) and no key collides.
 */
export function apCurrency(currency: string): string {
  return `ap:${currency}`;
}

/** Rollup change of a bill moving from one status to another (counted on its issue day). */
export function billStatusDelta(doc: Pick<BillDoc, 'issue_date' | 'currency'>, from: BillStatus | null, to: BillStatus | null): RollupDelta[] {
  if (from === to) return [];
  const inc: Record<string, number> = {};
  // Not `status_…`: rollups.ts copies those into the all-currency counts of invoices.
  if (from) inc[`bill_${from}`] = -1;
  if (to) inc[`bill_${to}`] = 1;
  return [{ day: doc.issue_date, currency: apCurrency(doc.currency), inc }];
}

/** What a planned change writes. */
export interface BillChange {
  set?: Partial<BillDoc>;
  push?: Record<string, unknown>;
  deltas?: RollupDelta[];
}

/**
 * Changes one bill by a conditional update on its `rev`: reads it, lets `plan` decide (or
 * refuse), writes only if nobody changed it meanwhile, else tries again. The rollup intent rides
 * in the same write. `plan` returning null means "nothing to do" (an idempotent repeat).
 *
 * Every path that settles a bill comes through here, so here is where a bill held by a payment
 * run refuses every settlement but the run's own (holds.ts): the check reads the same revision the
 * write is conditional on, so a hold set meanwhile makes the write retry and refuse.
 */
export async function changeBill(
  ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>,
  id: string,
  plan: (doc: BillDoc) => BillChange | null,
  extraFilter: Record<string, unknown> = {},
): Promise<BillDoc> {
  const model = bills(ctx.db);
  for (let attempt = 0; attempt < 8; attempt++) {
    const doc = await model.findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No bill ${id} exists in this workspace.`);
    let change = plan(doc);
    if (!change) return doc;
    const settling = doc.run_hold ? settlementOf(doc, change) : null;
    if (settling) {
      const held = await blockingHold(ctx, doc, settling.ref);
      if (held) throw heldRefusal(doc, held);
      // The run's own payment, or a hold a closed run left behind: the hold goes in the same write.
      change = { ...change, set: { ...change.set, run_hold: null } };
    }
    const intent = rollupIntent(change.deltas ?? [], ctx.now);
    const iu = intentUpdate(intent);
    const update: Record<string, unknown> = { $set: { ...change.set, updated_at: ctx.now }, $inc: { rev: 1, ...iu.$inc } };
    const push = { ...change.push, ...iu.$push };
    if (Object.keys(push).length) update.$push = push;
    // The due-date index (due.ts): added to before the bill becomes open (or moves day), pulled
    // from after it no longer is — a crash in between leaves an extra id the lane filters out.
    const planned = { ...doc, ...change.set };
    const wasOpen = billIsOpen(doc);
    const willBeOpen = billIsOpen(planned);
    if (willBeOpen && (!wasOpen || planned.due_date !== doc.due_date)) await billsDue.add(ctx.db, ctx.workspace, planned.due_date, id);
    await markIntent(ctx.db, ctx.workspace, model, id, intent);
    try {
      const after = await model.findOneAndUpdate({ _id: id, workspace: ctx.workspace, rev: doc.rev, ...extraFilter }, update, { returnDocument: 'after' }).lean();
      if (after) {
        if (wasOpen && (!billIsOpen(after) || after.due_date !== doc.due_date)) await billsDue.pull(ctx.db, ctx.workspace, doc.due_date, id);
        await applyRollupIntent(ctx.db, model, id, ctx.workspace, intent);
        return after;
      }
    } catch (err) {
      if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
      throw duplicateSupplierNumber(err);
    }
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
  }
  throw new CuadraError('conflict', `Bill ${id} is being changed by other calls right now; try again.`);
}

/** A unique-key collision on the vendor's invoice number becomes a `conflict`; anything else passes. */
export function duplicateSupplierNumber(err: unknown): unknown {
  if ((err as { code?: number }).code === 11000 && /supplier_key/.test(String((err as Error).message))) {
    return new CuadraError('conflict', 'This vendor already has a bill with that supplier number in this workspace.');
  }
  return err;
}

/** Inserts a new draft and counts it (bill_draft on its issue day). */
export async function insertDraftBill(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, doc: BillDoc): Promise<BillDoc> {
  const model = bills(ctx.db);
  const intent = rollupIntent(billStatusDelta(doc, null, 'draft'), ctx.now);
  const stored: BillDoc = intent ? { ...doc, pending_rollups: [intent], pending_count: 1 } : doc;
  await markIntent(ctx.db, ctx.workspace, model, doc._id, intent);
  try {
    await createPositioned(model, stored);
  } catch (err) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    throw duplicateSupplierNumber(err);
  }
  await applyRollupIntent(ctx.db, model, doc._id, ctx.workspace, intent);
  return { ...stored, pending_rollups: [], pending_count: 0 };
}

/**
 * The entry of a posted bill: Dr each line's account for its net (assets bought or expenses),
 * Dr deductible VAT; Cr payables for what is owed to the vendor, Cr each withholding payable to
 * the authority. Lines of one account are merged; Σ debits = total = Σ credits.
 */
export function billEntryLines(doc: BillDoc): JournalLine[] {
  // One line per account and set of tags (untagged lines of an account merge as before).
  const byAccount = new Map<string, { account: string; amount: number; tags?: Record<string, string> }>();
  for (const l of doc.lines) {
    const key = `${l.account}|${tagsKey(l.tags)}`;
    const acc = byAccount.get(key) ?? { account: l.account, amount: 0, ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}) };
    acc.amount += l.subtotal;
    byAccount.set(key, acc);
  }
  const lines: JournalLine[] = [...byAccount.values()].map(({ account, amount, tags }) => ({
    account, name: BILL_LINE_ACCOUNTS[account as keyof typeof BILL_LINE_ACCOUNTS].name, debit: amount, credit: 0, party_id: null, ...(tags ? { tags } : {}),
  }));
  lines.push({ account: PAYABLE_ACCOUNTS.deductibleVat.code, name: PAYABLE_ACCOUNTS.deductibleVat.name, debit: doc.tax_total, credit: 0, party_id: null });
  lines.push({ account: PAYABLE_ACCOUNTS.payables.code, name: PAYABLE_ACCOUNTS.payables.name, debit: 0, credit: doc.amount_due, party_id: doc.vendor_id });
  lines.push(...withholdingEntryLines(doc.withholdings, 'credit'));
  return lines.filter((l) => l.debit !== 0 || l.credit !== 0);
}

/**
 * The withholdings of a bill (credited: owed to the authority) or of its credit note (debited:
 * taken back), one line per account — retención en la fuente in its concept's 2365 sub-account.
 */
export function withholdingEntryLines(withholdings: readonly BillWithholding[], side: 'debit' | 'credit'): JournalLine[] {
  const byAccount = new Map<string, { name: string; amount: number }>();
  for (const w of withholdings) {
    const account = withholdingPayableAccount(w);
    const acc = byAccount.get(account.code) ?? { name: account.name, amount: 0 };
    acc.amount += w.amount;
    byAccount.set(account.code, acc);
  }
  return [...byAccount].map(([account, { name, amount }]) => ({ account, name, debit: side === 'debit' ? amount : 0, credit: side === 'credit' ? amount : 0, party_id: null }));
}

/**
 * Posts a draft bill, exactly once (as postDocument does for invoices):
 * 1. takes the post lock (conditional update: draft and unlocked, or locked by a dead process);
 * 2. writes the journal entry (its id is the bill's: a retry or takeover cannot add a second);
 * 3. the final conditional update draft → posted on the lock, carrying the rollup intent.
 */
export async function postBill(ctx: ToolContext, id: string): Promise<BillDoc> {
  const model = bills(ctx.db);
  // Refused before the lock (postEntry holds the rule: books/post.ts).
  const draftDate = (await model.findOne({ _id: id, workspace: ctx.workspace }, { issue_date: 1 }).lean())?.issue_date;
  if (draftDate) await assertPeriodOpen(ctx.db, ctx.workspace, draftDate);
  const lockId = newId('lock');
  const locked = await model.findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, status: 'draft', kind: { $ne: 'credit_note' }, $or: [{ post_lock: null }, { 'post_lock.at': { $lt: new Date(ctx.now.getTime() - REPAIR_AFTER_MS) } }] },
    { $set: { post_lock: { id: lockId, at: ctx.now } } },
    { returnDocument: 'after' },
  ).lean();
  if (!locked) {
    const doc = await model.findOne({ _id: id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No bill ${id} exists in this workspace.`);
    if (doc.status !== 'draft') throw new CuadraError('conflict', `Bill ${doc.supplier_number} is ${doc.status}; a bill is posted once.`);
    if (doc.kind === 'credit_note') throw new CuadraError('conflict', `${doc.supplier_number} is a credit note; it is applied by bills.credit_note, not posted.`);
    throw new CuadraError('conflict', `Bill ${doc.supplier_number} is being posted by another call right now.`);
  }
  const doc = locked;
  const entryId = `je_${doc._id}`;
  await postEntry(ctx, { kind: 'bill', id: doc._id }, billEntryLines(doc), {
    id: entryId, date: doc.issue_date, currency: doc.currency, memo: `Factura de proveedor ${doc.supplier_number} — ${doc.vendor.name}`,
  });
  const currency = apCurrency(doc.currency);
  const deltas: RollupDelta[] = [
    ...billStatusDelta(doc, 'draft', 'posted'),
    {
      day: doc.issue_date, currency, due: { date: doc.due_date, amount: doc.amount_due },
      customer: { id: doc.vendor_id, name: doc.vendor.name, inc: { spend: doc.subtotal } },
      inc: { expenses: expenseOf(doc.lines), purchases: doc.subtotal, billed: doc.total, ap: doc.amount_due, bills: 1 },
    },
    // The withholdings practiced, by type and concept, for the month's Formulario 350 (tax.withholdings).
    { day: doc.issue_date, currency: withholdingCurrency(doc.currency), inc: withholdingIncrements('p', doc.withholdings, 1) },
  ];
  const intent = rollupIntent(deltas, ctx.now);
  const iu = intentUpdate(intent);
  // Indexed by due date before it is open (due.ts); a post that fails from here leaves an extra id only.
  await billsDue.add(ctx.db, ctx.workspace, doc.due_date, doc._id);
  await markIntent(ctx.db, ctx.workspace, model, id, intent);
  const posted = await model.findOneAndUpdate(
    { _id: id, 'post_lock.id': lockId, status: 'draft' },
    {
      $set: { status: 'posted', journal_entry_id: entryId, post_lock: null, posted_at: ctx.now, updated_at: ctx.now },
      $inc: { rev: 1, ...iu.$inc }, ...(iu.$push ? { $push: iu.$push } : {}),
    },
    { returnDocument: 'after' },
  ).lean();
  if (!posted) {
    if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
    throw new CuadraError('conflict', `Bill ${doc.supplier_number} was taken over by another post.`);
  }
  await applyRollupIntent(ctx.db, model, id, ctx.workspace, intent);
  return posted;
}
