import { beginOperation, createPositioned, searchTextsOf, CuadraError, defineOperation, dropOperation, modelOn, runOperation, quantityFromMicros, quantityMicros, storedMicros, type OperationContext, type ToolContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { creditNoteLines, postEntry, previewEntry, updateCounted, type EntryHeading, type EntrySource, type JournalLine, type PostingPreview } from '../../books/index.ts';
import { assertPeriodOpen } from '../../books/periods.ts';
import { rollupIntent } from '../../books/rollup-intents.ts';
import { withholdingCurrency, withholdingIncrements } from '../../accounting/withholdings.ts';
import { assertNotHeld } from './holds.ts';
import { billLines, bills, billSearchText, billTotals, expenseOf, supplierKey, type BillDoc } from './model.ts';
import { payablesRollupCurrency, billEntryLines, billStatusDelta, changeBill, duplicateSupplierNumber, type BillChange } from './ops.ts';
import { settledStatus } from '../../open-items/index.ts';
import { holdStock, previewStock, publishStockDocument, releaseStock, type StockDocument } from '../../open-items/stock.ts';
import { productLines } from '../items/document-lines.ts';

/*
 * Vendor credit notes (notas crédito del proveedor). A credit note is a document of the bills
 * collection (`kind: credit_note`, `credit_of`: the bill), so the bills source lists it with its
 * kind and it keeps the vendor's own number under the same unique key as bills. It credits lines
 * of a posted bill (quantities, at the bill's prices, VAT and withholding rates) and is applied at
 * once: the bill's balance falls by what the note owes back (total − withholdings), never below
 * zero, and a balanced entry reverses the bill's proportionally: Cr the lines' expense or asset
 * accounts and deductible VAT; Dr payables and the withholdings payable.
 *
 * Goods go back with the note: its lines of product items (the bill's lines received into stock)
 * are held in inventory before anything is applied (the invoices' hold: a return of goods no longer
 * there is 409 and nothing is applied), and the posted note publishes its stock document, from which
 * inventory writes a purchase return out of the warehouse the bill's line was received into
 * (open-items/stock.ts; valued in inventory's valuation.ts `takeBack`).
 *
 * Steps, each idempotent, so a crash or retry never half-applies a note:
 * 1. an operation marker (shared/src/operations.ts) and the note as `draft` (nothing counted yet);
 * 2. its goods held in inventory (`stock_held` recorded on the draft); refused: the draft and its marker go;
 * 3. the bill changed by one conditional update on its rev: the note's settlement, credited
 *    quantities and status (a second application finds the settlement and does nothing);
 * 4. the journal entry, under the note's id (written once);
 * 5. the note draft → posted by one conditional update carrying the rollup intent (ap, expenses,
 *    purchases, vendor spend and the bill's due-date grain, all negative, on the note's date);
 * 6. its stock document published (once), then the operation marked done. A note found draft with
 *    its marker older than the lease is finished by the maintenance sweep or by the same call again
 *    (the sweep, which cannot ask inventory, refuses a note whose goods were never held).
 */

interface MarkerDoc { _id: string; workspace: string; at: Date }
const markerSchema = new Schema<MarkerDoc>({ _id: { type: String, required: true }, workspace: { type: String, required: true }, at: { type: Date, required: true } }, { versionKey: false });

/**
 * Where markers of credit notes being applied were kept before the durable-operation runner:
 * stored data may still hold some, adopted by the runner (`creditNoteOperation.legacyMarkers`).
 */
export function billCreditMarkers(db: Connection): Model<MarkerDoc> {
  return modelOn<MarkerDoc>(db, 'BillCreditMarker', markerSchema, 'bill_credit_markers');
}

/** The unique key of a vendor's credit note number (its own numbering, apart from its invoices'). */
export function creditKey(workspace: string, vendorId: string, number: string): string {
  return supplierKey(workspace, vendorId, `credit:${number}`);
}

/** What a credit note is asked for. */
export interface CreditNoteInput {
  bill_id: string;
  supplier_number: string;
  reason: string;
  issue_date?: string;
  lines?: readonly { line: number; quantity: number }[];
}

/** Quantity of a bill line not yet credited, in millionths. */
function remaining(bill: BillDoc, i: number): bigint {
  return storedMicros(bill.lines[i].quantity) - BigInt(bill.credited_micros?.[i] ?? 0);
}

/**
 * The credit note document (draft) for a request against a bill, after every check that can be
 * made before writing: the bill posted and open, lines that exist with quantity left to credit,
 * and the note owing back no more than the bill has open.
 */
export function planCreditNote(ctx: Pick<ToolContext, 'workspace' | 'now'>, bill: BillDoc, input: CreditNoteInput, id: string, today: string): BillDoc {
  if ((bill.kind ?? 'invoice') !== 'invoice') throw new CuadraError('conflict', `${bill.supplier_number} is a credit note; a credit note credits a bill.`);
  if (bill.status !== 'posted' && bill.status !== 'partially_paid') {
    throw new CuadraError('conflict', `Bill ${bill.supplier_number} is ${bill.status}; only a posted bill with something open can be credited.`);
  }
  const wanted = input.lines ?? bill.lines.map((_, i) => ({ line: i, quantity: quantityFromMicros(remaining(bill, i)) })).filter((l) => l.quantity > 0);
  if (!wanted.length) throw new CuadraError('conflict', `Every line of bill ${bill.supplier_number} is already credited.`);
  const seen = new Set<number>();
  wanted.forEach((w, i) => {
    if (w.line >= bill.lines.length) throw new CuadraError('invalid_input', `Bill ${bill.supplier_number} has no line ${w.line}.`, { field: `/lines/${i}/line` });
    if (seen.has(w.line)) throw new CuadraError('invalid_input', `Line ${w.line} is named twice.`, { field: `/lines/${i}/line` });
    seen.add(w.line);
    const asked = quantityMicros(w.quantity, `/lines/${i}/quantity`);
    if (asked > remaining(bill, w.line)) {
      throw new CuadraError('conflict', `Line ${w.line} of bill ${bill.supplier_number} has ${quantityFromMicros(remaining(bill, w.line))} left to credit; ${w.quantity} asked.`);
    }
  });
  const issueDate = input.issue_date ?? today;
  if (issueDate < bill.issue_date) throw new CuadraError('invalid_input', 'A credit note cannot be dated before the bill it credits.', { field: '/issue_date' });
  const lines = billLines(wanted.map((w) => {
    const src = bill.lines[w.line];
    return {
      ...(src.item_id ? { item_id: src.item_id } : {}), ...(src.warehouse_id ? { warehouse_id: src.warehouse_id } : {}),
      description: src.description, account: src.account, quantity: w.quantity, unit_price: src.unit_price, discount_bps: src.discount_bps, tax_rate_ppm: src.tax_rate_ppm,
      ...(src.withholding_concept ? { withholding_concept: src.withholding_concept } : {}),
    };
  }));
  // The bill's withholdings, concept by concept at the rates it applied, on the note's base: they reverse in proportion.
  const totals = billTotals(lines, bill.withholding_rates, bill.issue_date, bill.withholdings);
  if (totals.amount_due > bill.balance) {
    throw new CuadraError('conflict', `The credit note would give back ${totals.amount_due}, but bill ${bill.supplier_number} has ${bill.balance} open. A credit note cannot exceed what is open.`);
  }
  return {
    _id: id, workspace: ctx.workspace, kind: 'credit_note', credit_of: bill._id, credit_lines: wanted.map((w) => w.line), status: 'draft',
    vendor_id: bill.vendor_id, vendor: bill.vendor, supplier_number: input.supplier_number, supplier_key: creditKey(ctx.workspace, bill.vendor_id, input.supplier_number),
    search_lc: billSearchText(input.supplier_number, bill.vendor.name), currency: bill.currency, issue_date: issueDate, due_date: issueDate, lines,
    withholding_rates: bill.withholding_rates, ...totals, paid: 0, balance: 0, settlements: [], closed_on: issueDate, journal_entry_id: null, posting: null,
    rev: 0, pending_rollups: [], pending_count: 0, notes: `Nota crédito de ${bill.supplier_number}: ${input.reason}`, posted_at: null, created_at: ctx.now, updated_at: ctx.now,
  };
}

/** The entry of a credit note: the bill's entry for the note's lines, taken back (books creditNoteLines; Σ debits = note total = Σ credits). */
export function creditNoteEntryLines(note: BillDoc): JournalLine[] {
  return creditNoteLines(billEntryLines(note));
}

/** The change a credit note makes to the bill it credits (one conditional update): its settlement, credited quantities, balance and status. */
function creditApplied(b: BillDoc, note: BillDoc): BillChange {
  if ((b.status !== 'posted' && b.status !== 'partially_paid') || note.amount_due > b.balance) {
    throw new CuadraError('conflict', `Bill ${b.supplier_number} has ${b.balance} open; the credit note gives back ${note.amount_due}. A credit note cannot exceed what is open.`);
  }
  const creditedMicros = b.lines.map((_, i) => b.credited_micros?.[i] ?? 0);
  note.credit_lines!.forEach((line, i) => {
    const next = BigInt(creditedMicros[line]) + storedMicros(note.lines[i].quantity);
    if (next > storedMicros(b.lines[line].quantity)) throw new CuadraError('conflict', `Line ${line} of bill ${b.supplier_number} was credited meanwhile; nothing was changed.`);
    creditedMicros[line] = Number(next);
  });
  const balance = b.balance - note.amount_due;
  const status = settledStatus({ balance, paid: b.paid, status: b.status });
  return {
    set: { balance, status, credited_micros: creditedMicros, closed_on: balance <= 0 ? note.issue_date : null },
    push: { settlements: { ref: note._id, date: note.issue_date, amount: note.amount_due }, credit_notes: note._id },
    deltas: billStatusDelta(b, b.status, status),
  };
}

const creditNoteSource = (note: BillDoc): EntrySource => ({ kind: 'bill_credit_note', id: note._id });
const creditNoteHeading = (note: BillDoc): EntryHeading => ({
  id: `je_${note._id}`, date: note.issue_date, currency: note.currency, memo: `Nota crédito de proveedor ${note.supplier_number} — ${note.vendor.name}`,
});

/** A credit note while its operation runs, with the bill it credits once applied. */
type CreditNoteInFlight = BillDoc & { credited?: BillDoc };

/** The goods a vendor's credit note sends back: its lines of product items, each with the bill line it credits (null: none). */
async function noteStock(ctx: Pick<OperationContext, 'db' | 'workspace'>, note: BillDoc): Promise<StockDocument | null> {
  const lines = (await productLines(ctx.db, ctx.workspace, note.lines)).map((l) => ({ ...l, bill_line: note.credit_lines![l.line]! }));
  return lines.length ? { kind: 'bill_credit_note', id: note._id, credit_of: note.credit_of ?? null, date: note.issue_date, currency: note.currency, lines } : null;
}

/** Ends a note refused before it was applied: its hold given back, the draft and its operation gone (the number is free again). */
async function dropRefusedNote(ctx: OperationContext, note: BillDoc): Promise<void> {
  if (note.stock_held) await releaseStock(ctx, note._id);
  await bills(ctx.db).deleteOne({ _id: note._id, workspace: ctx.workspace, status: 'draft' });
  await dropOperation(ctx, creditNoteOperation, note._id);
}

/** Steps 2–5 of a credit note written as draft, as a durable operation (shared/src/operations.ts): each runs again without effect. */
export const creditNoteOperation = defineOperation<CreditNoteInFlight>({
  kind: 'bill_credit',
  legacyMarkers: [{ collection: 'bill_credit_markers', record: (m) => m._id }],
  load: (ctx, id) => bills(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean(),
  steps: [
    async function holdStockStep(ctx, note) {
      if (note.status !== 'draft' || note.stock_held) return note;
      const stock = await noteStock(ctx, note);
      if (!stock) return note;
      try {
        await holdStock(ctx, stock);
      } catch (err) {
        // Refused (the goods are no longer there), or inventory not answering: nothing is applied either way.
        await dropRefusedNote(ctx, { ...note, stock_held: true });
        throw err;
      }
      await bills(ctx.db).updateOne({ _id: note._id, workspace: ctx.workspace, status: 'draft' }, { $set: { stock_held: true } });
      return { ...note, stock_held: true };
    },
    async function applyToBill(ctx, note) {
      const model = bills(ctx.db);
      const billId = note.credit_of!;
      try {
        const credited = await changeBill(ctx, billId, (b) => (b.settlements.some((s) => s.ref === note._id) ? null : creditApplied(b, note)));
        return { ...note, credited };
      } catch (err) {
        // Refused before anything was applied: the draft note and its operation go, the number is free again.
        if (err instanceof CuadraError && err.code === 'conflict' && note.status === 'draft' && !(await model.exists({ _id: billId, workspace: ctx.workspace, 'settlements.ref': note._id }))) {
          await dropRefusedNote(ctx, note);
        }
        throw err;
      }
    },
    async function postAndCount(ctx, note) {
      if (note.status !== 'draft') return note;
      const model = bills(ctx.db);
      const entryId = `je_${note._id}`;
      await postEntry(ctx, creditNoteSource(note), creditNoteEntryLines(note), creditNoteHeading(note));
      const currency = payablesRollupCurrency(note.currency);
      const intent = rollupIntent([{
        day: note.issue_date, currency, due: { date: note.credited!.due_date, amount: -note.amount_due },
        customer: { id: note.vendor_id, name: note.vendor.name, inc: { spend: -note.subtotal } },
        inc: { expenses: -expenseOf(note.lines), purchases: -note.subtotal, billed: -note.total, ap: -note.amount_due, bill_credit_notes: 1 },
      }, { day: note.issue_date, currency: withholdingCurrency(note.currency), inc: withholdingIncrements('p', note.withholdings, -1) }], ctx.now);
      await updateCounted(ctx, model, note._id, { _id: note._id, workspace: ctx.workspace, status: 'draft' }, { $set: { status: 'posted', journal_entry_id: entryId, posted_at: ctx.now, updated_at: ctx.now }, $inc: { rev: 1 } }, intent);
      return note;
    },
    async function readBack(ctx, note) {
      const final = await bills(ctx.db).findOne({ _id: note._id, workspace: ctx.workspace }).lean();
      if (!final) throw new CuadraError('internal', 'The credit note vanished while being applied.');
      return { ...final, credited: note.credited };
    },
    async function stockFeed(ctx, note) {
      // Posted: inventory may now send its goods back (open-items/stock.ts); once, whoever runs this step.
      const stock = note.status === 'posted' ? await noteStock(ctx, note) : null;
      if (stock) await publishStockDocument(ctx, stock);
      return note;
    },
  ],
});

/** Applies a credit note written as draft and posts it (every step idempotent: see {@link creditNoteOperation}). */
export async function completeCreditNote(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, note: BillDoc): Promise<{ note: BillDoc; bill: BillDoc }> {
  const { credited, ...done } = await runOperation<CreditNoteInFlight>(ctx, creditNoteOperation, note, note._id);
  return { note: done, bill: credited! };
}

/**
 * What a credit-note call finds or plans, read only: the bill, and either the note already recorded
 * under that number (a retry) or the new note, checked — one path for the note and its dry run.
 */
async function plannedCreditNote(ctx: ToolContext, input: CreditNoteInput, id: string, today: string): Promise<{ bill: BillDoc; existing?: BillDoc; note?: BillDoc }> {
  const model = bills(ctx.db);
  const bill = await model.findOne({ _id: input.bill_id, workspace: ctx.workspace }).lean();
  if (!bill) throw new CuadraError('not_found', `No bill ${input.bill_id} exists in this workspace.`);
  const existing = await model.findOne({ supplier_key: creditKey(ctx.workspace, bill.vendor_id, input.supplier_number), workspace: ctx.workspace }).lean();
  if (existing) {
    if (existing.credit_of !== bill._id) throw new CuadraError('conflict', 'This vendor already has a credit note with that number in this workspace.');
    return { bill, existing };
  }
  const note = planCreditNote(ctx, bill, input, id, today);
  // What a payment run's bank file pays cannot shrink under it (checked again as the note is applied).
  await assertNotHeld(ctx, bill, null);
  await assertPeriodOpen(ctx.db, ctx.workspace, note.issue_date);
  return { bill, note };
}

/**
 * What {@link creditBill} would do, read only (the dry run of `bills.credit_note`, and the preview
 * a held note shows the person deciding): the note posted, the bill's change by the operation's own
 * {@link creditApplied}, and the note's entry by {@link previewEntry}. A number already recorded
 * (a retry) changes nothing — unless its note is still a draft, which the call would finish.
 */
export async function previewCreditBill(ctx: ToolContext, input: CreditNoteInput, id: string, today: string): Promise<PostingPreview> {
  const planned = await plannedCreditNote(ctx, input, id, today);
  const note = planned.note ?? (planned.existing?.status === 'draft' ? planned.existing : undefined);
  const { bill } = planned;
  if (!note) return { changes: [], journal_lines: [] };
  const change = creditApplied(bill, note);
  const lines = creditNoteEntryLines(note);
  const heading = creditNoteHeading(note);
  // The goods it sends back, as inventory would value them (a note whose goods were held already changes no stock it has not shown).
  const stock = note.stock_held ? null : await noteStock(ctx, note);
  return {
    changes: [
      { source: 'bills', id: note._id, op: planned.note ? 'insert' : 'update', after: { kind: 'credit_note', credit_of: bill._id, supplier_number: note.supplier_number, status: 'posted', total: note.total, amount_due: note.amount_due, journal_entry_id: heading.id } },
      { source: 'bills', id: bill._id, op: 'update', before: { balance: bill.balance, status: bill.status }, after: { balance: change.set!.balance, status: change.set!.status } },
      await previewEntry(ctx, creditNoteSource(note), lines, heading),
      ...(stock ? await previewStock(ctx, stock) : []),
    ],
    journal_lines: lines,
  };
}

/** Issues a credit note against a bill: checked, written as draft under a marker, then completed. */
export async function creditBill(ctx: ToolContext, input: CreditNoteInput, id: string, today: string): Promise<{ note: BillDoc; bill: BillDoc }> {
  const model = bills(ctx.db);
  const { bill, existing, note } = await plannedCreditNote(ctx, input, id, today);
  // The same note again (a retry): finish it if it is not finished, and answer it.
  if (existing) {
    if (existing.status === 'draft') return completeCreditNote(ctx, existing);
    return { note: existing, bill };
  }
  await beginOperation(ctx, creditNoteOperation, note!._id);
  try {
    await createPositioned(model, note!, { searchable: searchTextsOf });
  } catch (err) {
    await dropOperation(ctx, creditNoteOperation, note!._id);
    throw duplicateSupplierNumber(err);
  }
  return completeCreditNote(ctx, note!);
}
