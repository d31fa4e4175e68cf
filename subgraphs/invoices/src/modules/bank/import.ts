import { createHash } from 'node:crypto';
import { assignPositions, beginOperation, CuadraError, defineOperation, finishStaleOperations, newId, positionKey, releasePosition, runOperation, type ToolContext } from '@cuadra/shared';
import { updateCounted } from '../../books/index.ts';
import { rollupIntent, type RollupIntent } from '../../books/rollup-intents.ts';
import {
  bankImports, bankTransactions, dedupKey, type BankAccountDoc, type BankImportDoc, type BankTransactionDoc, type StatementFormat,
} from './model.ts';
import type { ParsedStatement, StatementEntry } from './statements/entry.ts';

/**
 * The rollup namespace of one bank account's reconciliation counters (`currency` of the shared
 * rollups): `unrec_n`/`unrec_amt` and `rec_n`/`rec_amt`, amounts as Σ |amount| in the account's
 * currency. Kept on write on each transaction's booking date: + on import, moved on reconcile and
 * unreconcile (so a window of bank_reconciliation is the transactions the bank booked in it).
 */
export function bankRollupNs(bankId: string): string {
  return `bank:${bankId}`;
}

/**
 * The dedup key of each line: the bank's own id when the file gives one, else a hash of the
 * line's fields with its occurrence among identical lines of the same file (two equal purchases
 * on one day stay two lines, and importing the file again still yields the same keys).
 */
export function entryKeys(entries: readonly StatementEntry[]): string[] {
  const seen = new Map<string, number>();
  return entries.map((e) => {
    if (e.entry_id) return `id:${e.entry_id}`;
    const hash = createHash('sha256').update(JSON.stringify([e.date, e.amount, e.description, e.reference])).digest('hex').slice(0, 32);
    const n = (seen.get(hash) ?? 0) + 1;
    seen.set(hash, n);
    return `h:${hash}#${n}`;
  });
}

type Ctx = Pick<ToolContext, 'db' | 'workspace' | 'now'>;

/**
 * Writes a parsed statement into an account: the import is recorded `pending` with the keys of
 * its lines (and a marker), the lines are inserted under the unique dedup index (a line already
 * there is skipped by the index, whoever wrote it), then {@link completeImport} counts what this
 * import added and books the counters. Two imports of one file at once add each line once.
 */
export async function importStatement(ctx: Ctx, account: BankAccountDoc, format: StatementFormat, parsed: ParsedStatement, fileSha256: string): Promise<BankImportDoc> {
  const keys = entryKeys(parsed.entries).map((k) => dedupKey(ctx.workspace, account._id, k));
  const imp: BankImportDoc = {
    _id: newId('bim'), workspace: ctx.workspace, bank_id: account._id, format, statement_id: parsed.statement_id, file_sha256: fileSha256, status: 'pending',
    keys, entries: keys.length, added: 0, already_there: 0, pending_rollups: [], pending_count: 0, created_at: ctx.now, updated_at: ctx.now,
  };
  await beginOperation(ctx, importOperation, imp._id);
  await bankImports(ctx.db).create(imp);
  const model = bankTransactions(ctx.db);
  // Lines whose key is already stored need no position; the rest take a block of positions at once.
  const known = new Set((await model.find({ dedup_key: { $in: keys } }, { dedup_key: 1 }).lean()).map((t) => t.dedup_key));
  const fresh = parsed.entries.map((e, i) => ({ e, key: keys[i] })).filter(({ key }) => !known.has(key));
  if (fresh.length) {
    const first = await assignPositions(ctx.db, 'bank_transactions', ctx.workspace, fresh.length);
    const docs: (BankTransactionDoc & { pos: number; pos_key: string })[] = fresh.map(({ e, key }, i) => ({
      _id: newId('btx'), workspace: ctx.workspace, bank_id: account._id, import_id: imp._id, format, statement_id: parsed.statement_id, entry_id: e.entry_id,
      dedup_key: key, date: e.date, amount: e.amount, currency: e.currency, description: e.description, reference: e.reference,
      search_lc: `${e.description} ${e.reference ?? ''}`.toLowerCase(), status: 'unreconciled', matches: [], reconciled_at: null, lock_at: null, rev: 0,
      pending_rollups: [], pending_count: 0, created_at: ctx.now, updated_at: ctx.now, pos: first + i, pos_key: positionKey('bank_transactions', ctx.workspace, first + i),
    }));
    let lost = 0;
    try {
      await model.insertMany(docs, { ordered: false });
    } catch (err) {
      // Lines another import wrote meanwhile collide on the unique key: their positions stay holes.
      type WriteError = { code?: number; err?: { code?: number } };
      const e = err as WriteError & { writeErrors?: WriteError[] };
      const errors: WriteError[] = e.writeErrors ?? [e];
      if (!errors.every((w) => (w.code ?? w.err?.code) === 11000)) throw err;
      lost = errors.length;
    }
    for (let i = 0; i < lost; i++) await releasePosition(ctx.db, 'bank_transactions', ctx.workspace);
  }
  return completeImport(ctx, imp);
}

/**
 * A statement import as a durable operation (shared/src/operations.ts): its lines inserted (by
 * {@link importStatement}), then counted — the lines carrying its id — and the import completed
 * with the rollup intent of the unreconciled counters in one conditional update. Runs again
 * without effect.
 */
export const importOperation = defineOperation<BankImportDoc>({
  kind: 'bank_import',
  legacyMarkers: [{ collection: 'bank_markers', filter: { kind: 'import' }, record: (m) => m._id }],
  load: (ctx, id) => bankImports(ctx.db).findById(id).lean(),
  steps: [
    async function countAndComplete(ctx, imp) {
      if (imp.status !== 'pending') return imp;
      const model = bankImports(ctx.db);
      const mine = (await bankTransactions(ctx.db).find({ dedup_key: { $in: imp.keys } }, { import_id: 1, amount: 1, date: 1 }).lean()).filter((t) => t.import_id === imp._id);
      // Counted on each line's booking date (the window of bank_reconciliation is the bank's dates).
      const byDay = new Map<string, { n: number; amt: number }>();
      for (const t of mine) {
        const d = byDay.get(t.date) ?? { n: 0, amt: 0 };
        d.n += 1;
        d.amt += Math.abs(t.amount);
        byDay.set(t.date, d);
      }
      const intent: RollupIntent | null = rollupIntent([...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([day, d]) => ({ day, currency: bankRollupNs(imp.bank_id), inc: { unrec_n: d.n, unrec_amt: d.amt } })), ctx.now);
      await updateCounted(ctx, model, imp._id, { _id: imp._id, workspace: ctx.workspace, status: 'pending' }, { $set: { status: 'completed', added: mine.length, already_there: imp.entries - mine.length, updated_at: ctx.now } }, intent);
      return imp;
    },
    async function readBack(ctx, imp) {
      const final = await bankImports(ctx.db).findById(imp._id).lean();
      if (!final) throw new CuadraError('internal', 'The statement import vanished while being completed.');
      return final;
    },
  ],
});

/** Completes an import whose lines are written (idempotent: see {@link importOperation}). */
export function completeImport(ctx: Ctx, imp: BankImportDoc): Promise<BankImportDoc> {
  return runOperation(ctx, importOperation, imp, imp._id);
}

/** Finishes the imports of a workspace a dead process left pending (past the lease). */
export function completeStuckImports(ctx: Ctx): Promise<number> {
  return finishStaleOperations(ctx.db, [importOperation], ctx.now, ctx.workspace);
}
