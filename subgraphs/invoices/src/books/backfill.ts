import type { Connection } from 'mongoose';
import { pendingChanges } from './rollup-store.ts';
import { applyRollupIntent, markIntent, rollupIntent } from './rollup-intents.ts';
import { journalEntries, LEDGER_ROLLUP_VERSION, ledgerDeltas, type JournalEntryDoc } from './journal.ts';

/** The marker of a database whose journal entries were all brought up to {@link LEDGER_ROLLUP_VERSION}. */
export const BACKFILL_MARKER = `ledger-rollups-v${LEDGER_ROLLUP_VERSION}`;

/**
 * Brings every journal entry's ledger counters up to {@link LEDGER_ROLLUP_VERSION}, so the
 * statements (trial balance, balance sheet, income statement, cash flow, profitability) count
 * entries written before their counters existed: entries without `pending_rollups` predate the
 * ledger rollups (version 0: every counter is added), entries with it but without `rolled` have
 * version 1 (`d`/`c`/`n`; the per-tag and cash counters are added).
 *
 * Each entry goes as a posting does (post.ts postEntry): the marker first, then ONE
 * conditional update that sets `rolled` and carries the rollup intent — matching only the entry
 * still at the version read, so two starts at once, or a crash and a rerun, count it once — then
 * the intent is applied (or, after a crash, by the repair every statement read runs). Runs at
 * start-up (server.ts prepare); a database marked done is not scanned again.
 */
export async function backfillLedgerRollups(db: Connection, now = new Date()): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>('migrations');
  if (await migrations.findOne({ _id: BACKFILL_MARKER })) return 0;
  const model = journalEntries(db);
  let brought = 0;
  for await (const raw of model.collection.find({ rolled: { $ne: LEDGER_ROLLUP_VERSION } } as never)) {
    const entry = raw as unknown as JournalEntryDoc;
    const since = entry.rolled ?? (Array.isArray(entry.pending_rollups) ? 1 : 0);
    if (since >= LEDGER_ROLLUP_VERSION) continue;
    const intent = rollupIntent(ledgerDeltas(entry, since), now);
    const still = entry.rolled !== undefined ? { rolled: entry.rolled } : { rolled: { $exists: false }, pending_rollups: { $exists: since === 1 } };
    await markIntent(db, entry.workspace, model, entry._id, intent);
    const update = intent
      ? { $set: { rolled: LEDGER_ROLLUP_VERSION }, $push: { pending_rollups: intent }, $inc: { pending_count: 1 } }
      : { $set: { rolled: LEDGER_ROLLUP_VERSION } };
    const done = await model.collection.updateOne({ _id: entry._id, ...still } as never, update as never);
    if (done.modifiedCount !== 1) {
      if (intent) await pendingChanges(db).deleteOne({ _id: intent.id });
      continue;
    }
    await applyRollupIntent(db, model, entry._id, entry.workspace, intent);
    brought++;
  }
  await migrations.updateOne({ _id: BACKFILL_MARKER }, { $set: { at: now } }, { upsert: true });
  return brought;
}
