import type { FiscalDocument, SaleAmounts } from '../lib/fiscal-document.ts';
import { tidyLines as tidy, type JournalLine } from '../books/journal.ts';
import { creditNoteLines } from '../books/post.ts';
import { ACCOUNTS, withholdingAccount } from './accounts.ts';
import { PUC } from './puc.ts';

/**
 * The journal lines of receivables documents (invoices, debit and credit notes) and customer
 * payments, in the PUC accounts of accounting/accounts.ts. They are posted through the books
 * (books/post.ts postEntry).
 */

/** What the journal lines of a receivables document read of it: its kind, its customer and its amounts (the invoices module's record is one). */
export interface ReceivableDocument extends SaleAmounts, Pick<FiscalDocument, 'kind'> {
  customer_id: string;
}

function line(account: { code: string; name: string }, debit: number, credit: number, party: string | null = null): JournalLine {
  return { account: account.code, name: account.name, debit, credit, party_id: party };
}

/** Withholding amounts per account of a document, debited: retención en la fuente in its concept's 135515 auxiliary. */
function withholdingLines(doc: ReceivableDocument): JournalLine[] {
  return doc.withholdings.map((w) => line(withholdingAccount(w), w.amount, 0));
}

/**
 * The document's sales credited to `account`, one line per set of line tags (the tagged lines'
 * subtotals, so profitability reads each tag's income) and one untagged line for the rest: Σ =
 * the document's subtotal less its lines with their own account.
 */
function byTags(doc: ReceivableDocument, account: { code: string; name: string }): JournalLine[] {
  const out: JournalLine[] = [];
  let tagged = 0;
  for (const l of doc.lines) {
    if (!l.tags || Object.keys(l.tags).length === 0 || l.account) continue;
    out.push({ ...line(account, 0, l.subtotal), tags: { ...l.tags } });
    tagged += l.subtotal;
  }
  // Lines with their own account (ownAccountLines) are not sales, nor their credit a return of sales.
  const rest = doc.subtotal - tagged - ownAccountTotal(doc);
  out.push(line(account, 0, rest));
  return out;
}

/**
 * The document's own allowances and charges (lib/line-model.ts): a charge (freight, handling) is
 * income like the lines, Cr 413595; an allowance (a discount on the whole document) is booked as a
 * discount on sales, Dr 417505. A credit note that takes them back books the mirror.
 */
function allowanceChargeLines(doc: ReceivableDocument): JournalLine[] {
  return (doc.allowance_charges ?? []).map((a) => (a.charge ? line(ACCOUNTS.revenue, 0, a.amount) : line(ACCOUNTS.salesReturns, a.amount, 0)));
}

/** Σ subtotals of an invoice's (or its credit note's) lines that name their own account (what is not sales). */
function ownAccountTotal(doc: ReceivableDocument): number {
  return doc.kind === 'debit_note' ? 0 : doc.lines.reduce((s, l) => s + (l.account ? l.subtotal : 0), 0);
}

/**
 * An invoice's lines that name their own account, each credited there: what finance invoices that
 * is not a sale of the business — the price of a fixed asset sold (4245, netted by the disposal
 * entry), compensation for damages (4255 indemnizaciones). A credit note's line keeps the account of
 * the invoice line it takes back (invoices.credit_note copies it) and is debited there: the mirror of
 * that line's own entry. 417505 (devoluciones en ventas) is for sales taken back only — PUC, Decreto
 * 2650 de 1993: 4175 is the debit-nature account of class 41 "ingresos operacionales", while 42
 * "ingresos no operacionales" (4245 utilidad en venta de propiedades, 4255 indemnizaciones) has none.
 */
function ownAccountLines(doc: ReceivableDocument): JournalLine[] {
  if (doc.kind === 'debit_note') return [];
  return doc.lines.filter((l) => l.account).map((l) => ({
    ...line({ code: l.account!, name: PUC[l.account!] ?? l.account! }, 0, l.subtotal), ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}),
  }));
}

/**
 * Posting an invoice: Dr receivable (what the customer owes) + Dr withholdings (tax credits the
 * customer withheld); Cr revenue (taxable base) — or the line's own account when it names one —
 * + Cr VAT payable.
 */
export function invoiceEntryLines(doc: ReceivableDocument): JournalLine[] {
  return tidy([
    line(ACCOUNTS.receivables, doc.amount_due, 0, doc.customer_id),
    ...withholdingLines(doc),
    ...byTags(doc, ACCOUNTS.revenue),
    ...ownAccountLines(doc),
    ...allowanceChargeLines(doc),
    line(ACCOUNTS.vatPayable, 0, doc.tax_total),
  ]);
}

/** The income account a debit-note line is credited to: its own, else sales (413595). */
export function debitLineAccount(l: Pick<ReceivableDocument['lines'][number], 'account'>): string {
  return l.account ?? ACCOUNTS.revenue.code;
}

/**
 * Posting a debit note (DIAN type 92: interest, expenses, a higher value): more owed on the same
 * terms as an invoice. Dr 130505 receivables the amount due (and withholding assets, if any);
 * Cr each line's income account its subtotal — 421005 for interest (financial income, not a sale),
 * 413595 for a change of value, the line's own when it names one; Cr 240805 VAT payable the tax.
 * `names` are the chart's names of the lines' accounts.
 */
export function debitNoteEntryLines(doc: ReceivableDocument, names: Readonly<Record<string, string>> = {}): JournalLine[] {
  const income = doc.lines.map((l) => {
    const code = debitLineAccount(l);
    const name = code === ACCOUNTS.revenue.code ? ACCOUNTS.revenue.name : names[code] ?? code;
    return { ...line({ code, name }, 0, l.subtotal), ...(l.tags && Object.keys(l.tags).length ? { tags: { ...l.tags } } : {}) };
  });
  return tidy([
    line(ACCOUNTS.receivables, doc.amount_due, 0, doc.customer_id),
    ...withholdingLines(doc),
    ...income,
    line(ACCOUNTS.vatPayable, 0, doc.tax_total),
  ]);
}

/**
 * What a document counts as sales (PUC 41): a debit note's lines booked to 41; an invoice's or credit
 * note's lines but those with their own account (42xx), less the document's allowances (417505) plus
 * its charges (413595) — what the journal books to income.
 */
export function salesOf(doc: ReceivableDocument): number {
  if (doc.kind === 'debit_note') return doc.lines.reduce((s, l) => s + (debitLineAccount(l).startsWith('41') ? l.subtotal : 0), 0);
  return doc.subtotal - ownAccountTotal(doc) - (doc.allowance_total ?? 0) + (doc.charge_total ?? 0);
}

/**
 * Posting a credit note: the invoice's entry for the note's lines taken back (books
 * creditNoteLines) — a sale's income to 417505 devoluciones en ventas (PUC 4175), a line with its
 * own account to that account. What the customer no longer owes comes off the receivable up to the
 * invoice's open balance (`applied`); any rest is owed back to the customer (customer credit, 280505).
 */
export function creditNoteEntryLines(doc: ReceivableDocument, applied: number): JournalLine[] {
  return creditNoteLines(invoiceEntryLines(doc), {
    accounts: { [ACCOUNTS.revenue.code]: ACCOUNTS.salesReturns },
    party: { account: ACCOUNTS.receivables.code, applied, rest: ACCOUNTS.customerAdvances },
  });
}

/** A payment received: Dr bank; Cr receivable for what settled invoices, Cr customer credit for the rest. */
export function paymentEntryLines(amount: number, applied: number, customerId: string): JournalLine[] {
  return tidy([
    line(ACCOUNTS.bank, amount, 0),
    line(ACCOUNTS.receivables, 0, applied, customerId),
    line(ACCOUNTS.customerAdvances, 0, amount - applied, customerId),
  ]);
}
