import { CuadraError, searchTextsOf, type ToolContext } from '@cuadra/shared';
import { tagsKey, type JournalLine, type PostingPreview } from '../../books/index.ts';
import type { RollupDelta } from '../../books/rollup-intents.ts';
import { productLines } from '../items/document-lines.ts';
import { changerOf, definePostOperation, insertOpenItem, missingItem, postOpenItem, previewOpenItemPost, type OpenItemChange, type OpenItemLedger } from '../../open-items/index.ts';
import { withholdingCurrency, withholdingIncrements } from '../../accounting/withholdings.ts';
import { BILL_LINE_ACCOUNTS, PAYABLE_ACCOUNTS, withholdingPayableAccount } from '../../accounting/payable-accounts.ts';
import { billIsOpen, billsDue } from './due.ts';
import { blockingHold, heldRefusal, settlementOf } from './holds.ts';
import { bills, expenseOf, type BillDoc, type BillStatus, type BillWithholding } from './model.ts';


/**
 * The rollup namespace the payables count a currency under, `ap:<currency>` (a key of the
 * rollups, not a currency of money): the payables keep their counters in the subgraph's rollups
 * (idempotent intents, repair after a crash) apart, so no counter of a bill ever lands in a
 * receivables document (the due-date grain included) and no key collides.
 */
export function payablesRollupCurrency(currency: string): string {
  return `ap:${currency}`;
}

/** Rollup change of a bill moving from one status to another (counted on its issue day). */
export function billStatusDelta(doc: Pick<BillDoc, 'issue_date' | 'currency'>, from: BillStatus | null, to: BillStatus | null): RollupDelta[] {
  if (from === to) return [];
  const inc: Record<string, number> = {};
  // Not `status_…`: rollups.ts copies those into the all-currency counts of invoices.
  if (from) inc[`bill_${from}`] = -1;
  if (to) inc[`bill_${to}`] = 1;
  return [{ day: doc.issue_date, currency: payablesRollupCurrency(doc.currency), inc }];
}

/** What a planned change of a bill writes (the open-item engine's change). */
export type BillChange = OpenItemChange<BillDoc>;

/**
 * The payables: bills and vendors' credit notes as the open-item engine sees them. Every path that
 * settles a bill comes through the engine's change, so the guard is where a bill held by a payment
 * run refuses every settlement but the run's own (holds.ts): it reads the same revision the write is
 * conditional on, so a hold set meanwhile makes the write retry and refuse.
 */
export const PAYABLES: OpenItemLedger<BillDoc> = {
  direction: 'payable',
  noun: 'bill',
  model: bills,
  searchable: searchTextsOf,
  due: billsDue,
  isOpen: billIsOpen,
  statusDelta: billStatusDelta,
  async guard(ctx, doc, change) {
    const settling = doc.run_hold ? settlementOf(doc, change) : null;
    if (!settling) return change;
    const held = await blockingHold(ctx, doc, settling.ref);
    if (held) throw heldRefusal(doc, held);
    // The run's own payment, or a hold a closed run left behind: the hold goes in the same write.
    return { ...change, set: { ...change.set, run_hold: null } };
  },
  writeError: duplicateSupplierNumber,
};

/** Changes one bill by a conditional update on its `rev` (the open-item engine's change, with the payment-run guard). */
export const changeBill = changerOf(PAYABLES);

/** A unique-key collision on the vendor's invoice number becomes a `conflict`; anything else passes. */
export function duplicateSupplierNumber(err: unknown): unknown {
  if ((err as { code?: number }).code === 11000 && /supplier_key/.test(String((err as Error).message))) {
    return new CuadraError('conflict', 'This vendor already has a bill with that supplier number in this workspace.');
  }
  return err;
}

/** Inserts a new draft and counts it (bill_draft on its issue day). */
export function insertDraftBill(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, doc: BillDoc): Promise<BillDoc> {
  return insertOpenItem(ctx, PAYABLES, doc);
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
 * The post of a bill as a durable operation (open-items/post.ts: claim, entry — its id the
 * bill's —, due index, draft → posted with its rollups), finished by the sweep when its process dies.
 * A vendor's credit note is never posted here: bills.credit_note applies it.
 */
export const billPostOperation = definePostOperation<BillDoc>('bill_post', PAYABLES, {
  claimFilter: { kind: { $ne: 'credit_note' } },
  refusal(doc, id) {
    if (!doc) return missingItem(PAYABLES, id);
    if (doc.status !== 'draft') return new CuadraError('conflict', `Bill ${doc.supplier_number} is ${doc.status}; a bill is posted once.`);
    if (doc.kind === 'credit_note') return new CuadraError('conflict', `${doc.supplier_number} is a credit note; it is applied by bills.credit_note, not posted.`);
    return new CuadraError('conflict', `Bill ${doc.supplier_number} is being posted by another call right now.`);
  },
  async booking(_ctx, doc) {
    const currency = payablesRollupCurrency(doc.currency);
    return {
      source: { kind: 'bill', id: doc._id }, lines: billEntryLines(doc),
      heading: { id: `je_${doc._id}`, date: doc.issue_date, currency: doc.currency, memo: `Factura de proveedor ${doc.supplier_number} — ${doc.vendor.name}` },
      deltas: [
        ...billStatusDelta(doc, 'draft', 'posted'),
        {
          day: doc.issue_date, currency, due: { date: doc.due_date, amount: doc.amount_due },
          customer: { id: doc.vendor_id, name: doc.vendor.name, inc: { spend: doc.subtotal } },
          inc: { expenses: expenseOf(doc.lines), purchases: doc.subtotal, billed: doc.total, ap: doc.amount_due, bills: 1 },
        },
        // The withholdings practiced, by type and concept, for the month's Formulario 350 (tax.withholdings).
        { day: doc.issue_date, currency: withholdingCurrency(doc.currency), inc: withholdingIncrements('p', doc.withholdings, 1) },
      ],
    };
  },
  async stock(ctx, doc) {
    // A posted bill receives its product lines at their net amount (open-items/stock.ts).
    const lines = await productLines(ctx.db, ctx.workspace, doc.lines);
    return { kind: 'bill', id: doc._id, date: doc.issue_date, currency: doc.currency, hold: false, lines };
  },
});

/** Posts a draft bill, exactly once, by the open-item engine's post ({@link billPostOperation}). */
export function postBill(ctx: ToolContext, id: string): Promise<BillDoc> {
  return postOpenItem(ctx, PAYABLES, billPostOperation, id, null);
}

/**
 * What posting a draft bill would do, read only (the dry run of `bills.post`, and the preview a
 * held post shows the person deciding): the engine's {@link previewOpenItemPost} of the same
 * {@link billPostOperation} — its refusals, its entry's lines, the records it would change.
 */
export function previewBillPost(ctx: ToolContext, id: string): Promise<PostingPreview> {
  return previewOpenItemPost(ctx, PAYABLES, billPostOperation, id, null);
}
