import { CuadraError, searchTextsOf, type ToolContext } from '@cuadra/shared';
import { previewStock, type StockDocument } from '../../open-items/stock.ts';
import type { Connection } from 'mongoose';
import { accountNames } from '../../accounting/chart.ts';
import { withholdingCurrency, withholdingIncrements } from '../../accounting/withholdings.ts';
import { creditNoteEntryLines, debitLineAccount, debitNoteEntryLines, invoiceEntryLines, salesOf } from '../../accounting/receivable-lines.ts';
import { previewEntry, type PostingPreview, type RecordChange } from '../../books/index.ts';
import { assertPeriodOpen } from '../../books/periods.ts';
import { cufe } from '../../e-documents/cufe.ts';
import { authorityXml } from '../../e-documents/signed.ts';
import { buyerId } from '../../e-documents/ubl.ts';
import { addCustomerCredit } from '../../lib/customer-credit.ts';
import { invoices, referencedInvoiceId, type InvoiceDoc, type Settlement } from './model.ts';
import { counterId, counters, openedSettings, rangeOf, type NumberedKind, type NumberingRange, type SettingsDoc } from '../../lib/settings.ts';
import { taxRegimeOf } from '../../lib/tax-regime.ts';
import { localTime, quantityFromMicros, storedMicros } from '../../lib/money.ts';
import { indexCreated } from '../../lib/recent.ts';
import { productLines } from '../items/document-lines.ts';
import type { RollupDelta } from '../../books/rollup-intents.ts';
import { changerOf, definePostOperation, insertOpenItem, missingItem, postOpenItem, settledStatus, type Booking, type ItemContext, type OpenItemChange, type OpenItemLedger } from '../../open-items/index.ts';
import { invoiceIsOpen, invoicesDue, isSubscriptionInvoice, subscriptionInvoicesDue } from './due.ts';

/** How a kind of document is named in messages. */
const KIND_NAME = { invoice: 'Invoice', credit_note: 'Credit note', debit_note: 'Debit note' } as const;


/** The workspace's e-invoicing set-up, or `conflict` when there is none yet. */
export async function requireSettings(db: Connection, workspace: string): Promise<SettingsDoc> {
  const s = await openedSettings(db, workspace);
  if (!s) throw new CuadraError('conflict', 'E-invoicing is not set up in this workspace yet: run einvoicing.configure (issuer NIT, software, numbering range) first.');
  return s;
}

/** Rollup change of an invoice moving from one status to another (counted on its issue day). */
export function statusDelta(doc: Pick<InvoiceDoc, 'kind' | 'issue_date' | 'currency'>, from: InvoiceDoc['status'] | null, to: InvoiceDoc['status'] | null): RollupDelta[] {
  if (doc.kind !== 'invoice' || from === to) return [];
  const inc: Record<string, number> = {};
  if (from) inc[`status_${from}`] = -1;
  if (to) inc[`status_${to}`] = 1;
  return [{ day: doc.issue_date, currency: doc.currency, inc }];
}

/** What a planned change of an invoice writes (the open-item engine's change). */
export type InvoiceChange = OpenItemChange<InvoiceDoc>;

/** The receivables: invoices, debit notes and credit notes as the open-item engine sees them. */
export const RECEIVABLES: OpenItemLedger<InvoiceDoc> = {
  direction: 'receivable',
  noun: 'invoice',
  model: invoices,
  searchable: searchTextsOf,
  due: invoicesDue,
  dueAcross: { index: subscriptionInvoicesDue, picks: isSubscriptionInvoice },
  isOpen: invoiceIsOpen,
  statusDelta,
  paymentKind: 'payment',
};

/** Changes one invoice by a conditional update on its `rev` (the open-item engine's change): `plan` decides or refuses, null meaning "nothing to do". */
export const changeInvoice = changerOf(RECEIVABLES);

/**
 * Hands out the next consecutive number of a range. The counter only ever moves forward by one
 * conditional `$inc` (`next <= to`), so two posts never get the same number.
 */
async function nextNumber(db: Connection, workspace: string, kind: NumberedKind, s: SettingsDoc | null): Promise<{ seq: number; number: string }> {
  const range = s ? rangeOf(s.numbering, kind) : ownSeries(kind);
  // A set-up made before debit notes existed has no counter for their default range yet; a workspace outside Colombia starts its own series at its first post.
  if (!s || (kind === 'debit_note' && !s.numbering.debit_note)) {
    await counters(db).updateOne({ _id: counterId(workspace, kind, range.prefix) }, { $setOnInsert: { workspace, next: range.from } }, { upsert: true });
  }
  const before = await counters(db).findOneAndUpdate({ _id: counterId(workspace, kind, range.prefix), next: { $lte: range.to } }, { $inc: { next: 1 } }, { returnDocument: 'before' }).lean();
  if (!before) throw new CuadraError('conflict', `The numbering range ${range.prefix}${range.from}–${range.to} is used up; authorise a new range with einvoicing.configure.`);
  return { seq: before.next, number: `${range.prefix}${before.next}` };
}

/**
 * The numbering of a workspace outside Colombia: one consecutive series per kind of document, its
 * own (the EU VAT directive, art. 226(2), asks for a sequential number that identifies the invoice
 * uniquely; no authority hands out ranges).
 */
export function ownSeries(kind: NumberedKind): NumberingRange {
  return { prefix: kind === 'credit_note' ? 'CN' : kind === 'debit_note' ? 'DN' : 'INV', from: 1, to: 999_999_999, resolution: null, valid_to: null };
}

/**
 * Applies a credit note to the invoice it credits (once: the invoice lists the note's id):
 * the credited quantities, and the note's amount against the open balance. Returns how much
 * of the note reduced the balance; the rest becomes customer credit.
 */
async function applyCreditNote(ctx: ItemContext, note: InvoiceDoc): Promise<{ applied: number; due_date: string }> {
  const invoice = await changeInvoice(ctx, note.credit_of!, (inv) => {
    if (inv.credit_notes.includes(note._id)) return null;
    if (inv.status === 'draft' || inv.status === 'cancelled') throw new CuadraError('conflict', `Invoice ${inv._id} is ${inv.status}; only a posted invoice can be credited.`);
    const lines = inv.lines.map((l) => ({ ...l }));
    for (const nl of note.lines) {
      const target = lines[nl.invoice_line!];
      const remaining = storedMicros(target.quantity) - storedMicros(target.credited_quantity ?? 0);
      if (storedMicros(nl.quantity) > remaining) {
        throw new CuadraError('conflict', `Line ${nl.invoice_line} of invoice ${inv.number} has ${quantityFromMicros(remaining)} left to credit; the note credits ${nl.quantity}.`);
      }
      target.credited_quantity = quantityFromMicros(storedMicros(target.credited_quantity ?? 0) + storedMicros(nl.quantity));
    }
    const applied = Math.min(note.amount_due, inv.balance);
    const fullyCredited = lines.every((l) => storedMicros(l.credited_quantity ?? 0) >= storedMicros(l.quantity));
    const balance = inv.balance - applied;
    const next: InvoiceDoc = { ...inv, balance, credited: inv.credited + applied, status: fullyCredited ? 'cancelled' : inv.status };
    const status = settledStatus(next);
    const settlement: Settlement = { ref: note._id, kind: 'credit_note', date: note.issue_date, amount: applied };
    return {
      set: { lines, balance, credited: next.credited, status, closed_on: balance <= 0 || status === 'cancelled' ? (inv.closed_on ?? note.issue_date) : null },
      push: { settlements: settlement, credit_notes: note._id },
      deltas: statusDelta(inv, inv.status, status),
    };
  });
  return { applied: invoice.settlements.find((s) => s.ref === note._id)?.amount ?? 0, due_date: invoice.due_date };
}

/** The journal entry posting a document writes (its id, date, memo and lines): one function for the post and its dry run. */
async function postingEntry(ctx: ItemContext, doc: InvoiceDoc, applied: number) {
  const lines = doc.kind === 'credit_note' ? creditNoteEntryLines(doc, applied)
    : doc.kind === 'debit_note' ? debitNoteEntryLines(doc, await accountNames(ctx.db, ctx.workspace, doc.lines.map(debitLineAccount)))
      : invoiceEntryLines(doc);
  return {
    id: `je_${doc._id}`, date: doc.issue_date, currency: doc.currency, lines,
    memo: `${{ invoice: 'Factura de venta', credit_note: 'Nota crédito', debit_note: 'Nota débito' }[doc.kind]} ${doc.number ?? '(número por asignar)'} — ${doc.customer.name}`,
  };
}

/**
 * What posting a draft would do, read only (the dry run of `invoices.post`, and the preview a held
 * post shows the person deciding): the same refusals the post makes first (no such document, not a
 * draft, a closed period), the journal entry it would write — the lines computed by the very
 * function the post uses — and the records it would change. The number is the range's next at the
 * moment of posting, so it is not promised here.
 */
export async function previewPost(ctx: ToolContext, id: string): Promise<PostingPreview> {
  const doc = await invoices(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No invoice ${id} exists in this workspace.`);
  if (doc.status !== 'draft') throw new CuadraError('conflict', `${KIND_NAME[doc.kind]} ${doc.number ?? id} is already ${doc.status}; a document is posted once.`);
  return previewPostOf(ctx, doc, 'update');
}

/**
 * {@link previewPost} of a draft held in hand: `update` when it is stored, `insert` when the call
 * would first create it (a credit note is created and posted in one call).
 */
export async function previewPostOf(ctx: ToolContext, doc: InvoiceDoc, op: 'insert' | 'update'): Promise<PostingPreview> {
  if (taxRegimeOf(ctx.principal) === 'dian') await requireSettings(ctx.db, ctx.workspace);
  await assertPeriodOpen(ctx.db, ctx.workspace, doc.issue_date);
  const changes: RecordChange[] = [];
  let applied = doc.amount_due;
  if (doc.kind === 'credit_note' && doc.credit_of) {
    // As applyCreditNote computes it: the note applies up to the credited invoice's balance.
    const credited = await invoices(ctx.db).findOne({ _id: doc.credit_of, workspace: ctx.workspace }, { balance: 1, number: 1 }).lean();
    applied = Math.min(doc.amount_due, credited?.balance ?? 0);
    if (credited) changes.push({ source: 'invoices', id: doc.credit_of, op: 'update', before: { balance: credited.balance }, after: { balance: credited.balance - applied } });
  }
  const entry = await postingEntry(ctx, doc, applied);
  const after = { status: 'posted', number: doc.number ?? 'the next number of the range, taken at posting', journal_entry_id: entry.id };
  changes.unshift(
    op === 'update'
      ? { source: 'invoices', id: doc._id, op, before: { status: 'draft', number: doc.number, journal_entry_id: doc.journal_entry_id ?? null }, after }
      : { source: 'invoices', id: doc._id, op, after: { kind: doc.kind, credit_of: doc.credit_of, issue_date: doc.issue_date, total: doc.total, ...after } },
    await previewEntry(ctx, { kind: doc.kind, id: doc._id }, entry.lines, { id: entry.id, date: entry.date, currency: entry.currency, memo: entry.memo }),
  );
  // The goods it would deliver (a credit note: take back), as inventory would value them — what its post publishes.
  const stock = await invoiceStock(ctx, doc);
  if (stock) changes.push(...(await previewStock(ctx, stock)));
  return { changes, journal_lines: entry.lines };
}

/**
 * The goods a document's post moves (open-items/stock.ts): an invoice delivers its product lines
 * (held first), a credit note returns them; a debit note moves no goods. The post publishes it, and
 * the dry run previews it.
 */
async function invoiceStock(ctx: Pick<ToolContext, 'db' | 'workspace'>, doc: InvoiceDoc): Promise<(StockDocument & { hold: boolean }) | null> {
  if (doc.kind === 'debit_note') return null;
  const lines = await productLines(ctx.db, ctx.workspace, doc.lines);
  return { kind: doc.kind, id: doc._id, credit_of: doc.credit_of, date: doc.issue_date, currency: doc.currency, hold: doc.kind === 'invoice', lines };
}

/**
 * The post of an invoice, debit note or credit note as a durable operation (open-items/post.ts:
 * claim, these steps, entry, due index, draft → posted with its rollups), finished by the sweep
 * when its process dies — with the tax regime and the time stored in the claim, not read from a
 * caller the sweep does not have. Its own steps on the claimed draft: the next consecutive number
 * (kept on the document, so a rerun reuses it; the unique `number_key` index makes a duplicate
 * impossible) and a credit note's application to its invoice (once); then the CUFE/CUDE, and
 * after the post the customer credit a note leaves (once per note).
 */
export const invoicePostOperation = definePostOperation<InvoiceDoc>('invoice_post', RECEIVABLES, {
  refusal(doc, id) {
    if (!doc) return missingItem(RECEIVABLES, id);
    if (doc.status !== 'draft') return new CuadraError('conflict', `${KIND_NAME[doc.kind]} ${doc.number ?? id} is already ${doc.status}; a document is posted once.`);
    return new CuadraError('conflict', `Invoice ${id} is being posted by another call right now.`);
  },
  async prepare(ctx, doc) {
    if (doc.number_seq !== null) return doc;
    const s = ctx.claim.regime === 'dian' ? await requireSettings(ctx.db, ctx.workspace) : null;
    const { seq, number } = await nextNumber(ctx.db, ctx.workspace, doc.kind, s);
    const numbered = await invoices(ctx.db).findOneAndUpdate(
      { _id: doc._id, status: 'draft', number_seq: null },
      { $set: { number_seq: seq, number, number_key: `${ctx.workspace}:${doc.kind}:${number}` } },
      { returnDocument: 'after' },
    ).lean();
    if (numbered) return numbered;
    // Numbered meanwhile by a takeover of this post: its number stands.
    const now = await invoices(ctx.db).findById(doc._id).lean();
    if (!now || now.number_seq === null) throw new CuadraError('conflict', `Invoice ${doc._id} changed while being posted.`);
    return now;
  },
  async booking(ctx, doc): Promise<Booking<InvoiceDoc>> {
    const dian = ctx.claim.regime === 'dian';
    const s = dian ? await requireSettings(ctx.db, ctx.workspace) : null;
    let applied = doc.amount_due;
    let dueDate = doc.due_date;
    if (doc.kind === 'credit_note') ({ applied, due_date: dueDate } = await applyCreditNote(ctx, doc));
    const issueTime = dian ? localTime(ctx.claim.at) : null;
    const key = s && issueTime ? cufe({
      number: doc.number!, issueDate: doc.issue_date, issueTime, subtotal: doc.subtotal, vat: doc.tax_total, inc: 0, ica: 0, total: doc.total,
      issuerNit: s.issuer.nit, buyerId: buyerId(doc), key: doc.kind === 'invoice' ? s.technical_key : s.software_pin, environment: s.environment,
    }) : null;
    const entry = await postingEntry(ctx, doc, applied);
    const sign = doc.kind === 'credit_note' ? -1 : 1;
    // Revenue counts sales (PUC 41): a debit note's interest or recovered expenses are income, not sales;
    // an invoice's allowances and charges on the whole document move it (what the journal books to income).
    const sales = salesOf(doc);
    const customer = { id: doc.customer_id, name: doc.customer.name, inc: { revenue: sign * sales, invoiced: sign * doc.total } };
    const set: Partial<InvoiceDoc> = { cufe: key, issue_time: issueTime, search_lc: searchText(doc.number, doc.customer.name, doc.notes) };
    if (doc.kind === 'credit_note') Object.assign(set, { balance: 0, credited: applied, closed_on: doc.issue_date });
    return {
      source: { kind: doc.kind, id: doc._id }, lines: entry.lines, heading: { id: entry.id, date: entry.date, currency: entry.currency, memo: entry.memo }, set,
      deltas: [
        ...statusDelta(doc, 'draft', 'posted'),
        {
          day: doc.issue_date, currency: doc.currency, customer, due: { date: dueDate, amount: doc.kind === 'credit_note' ? -applied : doc.amount_due },
          inc: doc.kind === 'credit_note'
            ? { revenue: -sales, credited: doc.total, ar: -applied, credit_notes: 1 }
            : doc.kind === 'debit_note'
              ? { revenue: sales, invoiced: doc.total, ar: doc.amount_due, debit_notes: 1 }
              : { revenue: sales, invoiced: doc.total, ar: doc.amount_due, invoices: 1 },
        },
        // The withholdings the customer makes (suffered), by type and concept, beside the month's Formulario 350 figures.
        { day: doc.issue_date, currency: withholdingCurrency(doc.currency), inc: withholdingIncrements('s', doc.withholdings, sign) },
      ],
    };
  },
  stock: invoiceStock,
  async after(ctx, posted) {
    // What of a credit note its invoice's balance did not take (stored as `credited`) is the customer's credit.
    if (posted.kind === 'credit_note') await addCustomerCredit(ctx.db, ctx.workspace, posted.customer_id, posted.currency, posted._id, posted.amount_due - posted.credited);
  },
});

/**
 * Signs a document just posted, when the workspace has a certificate. Posting has already
 * happened, so a signing problem (an expired certificate) does not undo it: it is logged, and
 * `invoices.send` signs (or says why it cannot) when the document leaves.
 */
async function signPosted(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now' | 'log'>, doc: InvoiceDoc): Promise<void> {
  try {
    if (!doc.number) return;
    const s = await openedSettings(ctx.db, ctx.workspace);
    if (!s) return;
    const credited = referencedInvoiceId(doc) ? await invoices(ctx.db).findOne({ _id: referencedInvoiceId(doc)!, workspace: ctx.workspace }).lean() : null;
    await authorityXml(ctx.db, ctx.workspace, doc, s, credited, ctx.now, { store: true });
  } catch (err) {
    ctx.log.warn({ err, invoice: doc._id }, 'posted document not signed yet');
  }
}

/**
 * Posts a draft invoice, debit note or credit note, exactly once ({@link invoicePostOperation}),
 * then signs it when the workspace has a certificate.
 */
export async function postDocument(ctx: ToolContext, id: string): Promise<InvoiceDoc> {
  // The workspace's country decides: a Colombian document needs DIAN's set-up (range, keys); elsewhere it is numbered from the workspace's own series, without DIAN.
  const regime = taxRegimeOf(ctx.principal);
  if (regime === 'dian') await requireSettings(ctx.db, ctx.workspace);
  const posted = await postOpenItem(ctx, RECEIVABLES, invoicePostOperation, id, regime);
  // Signed as issued, when the workspace has a certificate (never undoes the post; see signPosted).
  if (regime === 'dian') await signPosted(ctx, posted);
  return posted;
}

/** A new draft document with every stored field set. */
export function draftDocument(fields: Pick<InvoiceDoc, '_id' | 'workspace' | 'kind' | 'customer_id' | 'customer' | 'currency' | 'issue_date' | 'due_date' | 'lines' | 'withholding_rates' | 'notes' | 'created_at'>
  & Partial<Pick<InvoiceDoc, 'credit_of' | 'debit_of' | 'concept' | 'source'>>
  & ReturnType<typeof import('../items/document-lines.ts').documentTotals>): InvoiceDoc {
  return {
    ...fields,
    status: 'draft', number: null, number_seq: null, number_key: `none:${fields._id}`,
    search_lc: searchText(null, fields.customer.name, fields.notes),
    issue_time: null, paid: 0, credited: 0, balance: fields.amount_due, settlements: [], closed_on: null, cufe: null,
    credit_of: fields.credit_of ?? null, debit_of: fields.debit_of ?? null, concept: fields.concept ?? null, credit_notes: [], journal_entry_id: null, authority: null,
    source: fields.source ?? null, posting: null, rev: 0, pending_rollups: [], pending_count: 0, posted_at: null, updated_at: fields.created_at,
  };
}

/** The lower-cased text records search matches against. */
export function searchText(number: string | null, customerName: string, notes: string | null): string {
  return [number ?? '', customerName, notes ?? ''].join(' ').toLowerCase();
}

/** Inserts a new draft and counts it in the rollups (status_draft on its issue day). */
export function insertDraft(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, doc: InvoiceDoc): Promise<InvoiceDoc> {
  return insertOpenItem(ctx, RECEIVABLES, doc, () => indexCreated(ctx.db, ctx.workspace, 'invoices', doc.created_at, doc._id));
}
