import type { Connection, Model } from 'mongoose';
import { pendingChanges } from './rollup-store.ts';
import { repairPendingRollups, REPAIR_AFTER_MS } from './rollup-intents.ts';

/** Markers read per pass of the sweep: what is in flight or abandoned, a handful when all is well. */
const MARKERS_PER_PASS = 200;

/**
 * The workspaces with a marker older than the repair's wait in a marker collection: what a dead
 * process left, for the owner's background sweep to finish (ModuleManifest.maintenance), never a
 * read. Reads at most {@link MARKERS_PER_PASS} markers; the next pass takes the rest.
 */
export async function staleWorkspaces(markers: Model<any>, filter: Record<string, unknown>, now: Date): Promise<string[]> {
  const cutoff = new Date(now.getTime() - REPAIR_AFTER_MS);
  const found = await markers.find({ ...filter, at: { $lt: cutoff } }, { workspace: 1 }).limit(MARKERS_PER_PASS).lean<{ workspace: string }[]>();
  return [...new Set(found.map((m) => m.workspace))];
}

/**
 * Finishes the rollup intents a dead process left on documents of `models` (every workspace):
 * the maintenance share of each module that keeps rollups.
 * @returns how many intents it applied
 */
export async function repairRollupsOf(db: Connection, models: readonly Model<any>[], now: Date): Promise<number> {
  const names = models.map((m) => m.collection.collectionName);
  let repaired = 0;
  for (const workspace of await staleWorkspaces(pendingChanges(db), { kind: 'intent', collection: { $in: names } }, now)) {
    repaired += await repairPendingRollups(db, workspace, models, now);
  }
  return repaired;
}
