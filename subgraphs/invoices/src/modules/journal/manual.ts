import { CuadraError, type ToolContext } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';
import { postableAccount } from '../../accounting/chart.ts';
import { JOURNAL_LINES_VIEW_SCHEMA, postEntry, previewEntry, previewReversal, reverseEntry, REVERSAL_SOURCE, type JournalLine, type PostingPreview, type Reversal } from '../../books/index.ts';

/**
 * A manual journal entry: written as a draft, then posted once (its journal entry `je_<id>`),
 * and corrected only by a reversing entry (`je_<id>_rev`), never edited once posted.
 */
export interface ManualEntryDoc {
  _id: string;
  workspace: string;
  status: 'draft' | 'posted' | 'reversed';
  date: string;
  currency: string;
  memo: string;
  lines: JournalLine[];
  journal_entry_id: string | null;
  reversal_entry_id: string | null;
  created_at: Date;
  posted_at: Date | null;
  reversed_at: Date | null;
  updated_at: Date;
}

const manualSchema = new Schema<ManualEntryDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    status: { type: String, required: true },
    date: { type: String, required: true },
    currency: { type: String, required: true },
    memo: { type: String, required: true },
    lines: { type: Schema.Types.Mixed, required: true },
    journal_entry_id: { type: String, default: null },
    reversal_entry_id: { type: String, default: null },
    created_at: { type: Date, required: true },
    posted_at: { type: Date, default: null },
    reversed_at: { type: Date, default: null },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);

/** The manual entries collection. */
export function manualEntries(db: Connection): Model<ManualEntryDoc> {
  return (db.models.ManualEntry as Model<ManualEntryDoc> | undefined) ?? db.model<ManualEntryDoc>('ManualEntry', manualSchema, 'manual_entries');
}

/** JSON Schema of {@link manualEntryView}. */
export const MANUAL_ENTRY_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['id', 'status', 'date', 'currency', 'memo', 'lines', 'total_debit', 'total_credit', 'journal_entry_id', 'reversal_entry_id'],
  properties: {
    id: { type: 'string' }, status: { enum: ['draft', 'posted', 'reversed'] }, date: { type: 'string', format: 'date' }, currency: { type: 'string' }, memo: { type: 'string' },
    lines: JOURNAL_LINES_VIEW_SCHEMA,
    total_debit: { type: 'integer' }, total_credit: { type: 'integer' },
    journal_entry_id: { type: ['string', 'null'] }, reversal_entry_id: { type: ['string', 'null'] },
  },
} as const;

/** Public shape of a manual entry. */
export function manualEntryView(e: ManualEntryDoc) {
  return {
    id: e._id, status: e.status, date: e.date, currency: e.currency, memo: e.memo, lines: e.lines,
    total_debit: e.lines.reduce((s, l) => s + l.debit, 0), total_credit: e.lines.reduce((s, l) => s + l.credit, 0),
    journal_entry_id: e.journal_entry_id, reversal_entry_id: e.reversal_entry_id,
  };
}

/** Re-checks every line's account at posting time (it may have been archived since the draft). */
async function checkAccounts(ctx: Pick<ToolContext, 'db' | 'workspace'>, lines: readonly JournalLine[]): Promise<void> {
  for (const [i, l] of lines.entries()) {
    try {
      await postableAccount(ctx.db, ctx.workspace, l.account, `/lines/${i}/account`);
    } catch (err) {
      throw new CuadraError('conflict', `Line ${i} of this entry posts to ${l.account}: ${(err as Error).message}`);
    }
  }
}

/** The draft `id`, checked as posting it checks it: it exists, is a draft, and every account of it still takes postings. */
async function postableDraft(ctx: ToolContext, id: string): Promise<ManualEntryDoc> {
  const doc = await manualEntries(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No journal entry ${id} exists in this workspace.`);
  if (doc.status !== 'draft') throw new CuadraError('conflict', `Journal entry ${id} is already ${doc.status}; an entry is posted once (correct it with journal.reverse).`);
  await checkAccounts(ctx, doc.lines);
  return doc;
}

/** What posting a draft would do, read only (the dry run of `journal.post`): its checks, the journal entry and the draft's change. */
export async function previewManualPost(ctx: ToolContext, id: string): Promise<PostingPreview> {
  const doc = await postableDraft(ctx, id);
  const entry = await previewEntry(ctx, { kind: 'manual', id: doc._id }, doc.lines, { id: `je_${doc._id}`, date: doc.date, currency: doc.currency, memo: doc.memo });
  return { changes: [{ source: 'manual_entries', id: doc._id, op: 'update', before: { status: 'draft', journal_entry_id: null }, after: { status: 'posted', journal_entry_id: entry.id } }, entry], journal_lines: doc.lines };
}

/**
 * Posts a draft: writes its journal entry (id derived from the draft, so a retry or a second
 * call writes nothing more; the period guard lives in postEntry), then the one
 * conditional update draft → posted.
 */
export async function postManualEntry(ctx: ToolContext, id: string): Promise<ManualEntryDoc> {
  const model = manualEntries(ctx.db);
  const doc = await postableDraft(ctx, id);
  const entryId = `je_${doc._id}`;
  await postEntry(ctx, { kind: 'manual', id: doc._id }, doc.lines, { id: entryId, date: doc.date, currency: doc.currency, memo: doc.memo });
  const posted = await model.findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, status: 'draft' },
    { $set: { status: 'posted', journal_entry_id: entryId, posted_at: ctx.now, updated_at: ctx.now } },
    { returnDocument: 'after' },
  ).lean();
  if (!posted) throw new CuadraError('conflict', `Journal entry ${id} was posted by another call.`);
  return posted;
}

/** How reversing the posted entry `id` goes, checked as the reversal checks it: the journal entry, the date and the reversal's heading. */
async function reversalOfManual(ctx: ToolContext, id: string, date: string | undefined, memo: string | undefined): Promise<{ doc: ManualEntryDoc; entryId: string; on: string; reversal: Reversal }> {
  const doc = await manualEntries(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No journal entry ${id} exists in this workspace.`);
  if (doc.status !== 'posted') throw new CuadraError('conflict', doc.status === 'draft' ? `Journal entry ${id} is a draft; only a posted entry is reversed (a draft is simply not posted).` : `Journal entry ${id} is already reversed.`);
  const on = date ?? doc.date;
  if (on < doc.date) throw new CuadraError('invalid_input', `A reversal is dated on or after the entry it reverses (${doc.date}).`, { field: '/date' });
  return { doc, entryId: doc.journal_entry_id ?? `je_${doc._id}`, on, reversal: { id: `je_${doc._id}_rev`, memo, source: { kind: REVERSAL_SOURCE, id: doc._id } } };
}

/** What reversing a posted entry would do, read only (the dry run of `journal.reverse`): the reversing entry and the entry's change. */
export async function previewManualReverse(ctx: ToolContext, id: string, date: string | undefined, memo: string | undefined): Promise<PostingPreview> {
  const { doc, entryId, on, reversal } = await reversalOfManual(ctx, id, date, memo);
  const entry = await previewReversal(ctx, entryId, on, reversal);
  return { changes: [{ source: 'manual_entries', id: doc._id, op: 'update', before: { status: 'posted', reversal_entry_id: null }, after: { status: 'reversed', reversal_entry_id: entry.id } }, entry], journal_lines: entry.after.lines as JournalLine[] };
}

/**
 * Reverses a posted entry: a new entry with every debit and credit swapped, dated `date` (by
 * default the original's), then posted → reversed. The original is never touched.
 */
export async function reverseManualEntry(ctx: ToolContext, id: string, date: string | undefined, memo: string | undefined): Promise<ManualEntryDoc> {
  const model = manualEntries(ctx.db);
  const { entryId: original, on, reversal } = await reversalOfManual(ctx, id, date, memo);
  const entryId = await reverseEntry(ctx, original, on, reversal);
  const reversed = await model.findOneAndUpdate(
    { _id: id, workspace: ctx.workspace, status: 'posted' },
    { $set: { status: 'reversed', reversal_entry_id: entryId, reversed_at: ctx.now, updated_at: ctx.now } },
    { returnDocument: 'after' },
  ).lean();
  if (!reversed) throw new CuadraError('conflict', `Journal entry ${id} was reversed by another call.`);
  return reversed;
}
