import { REPAIR_AFTER_MS, type MaintenanceHook } from '@cuadra/shared';
import { assets } from './model.ts';
import { completeAcquisition, completeDisposal } from './ops.ts';

/** Most unfinished assets one sweep pass finishes. */
const BATCH = 50;

/**
 * The sweep's share of fixed assets: an acquisition or a disposal a dead process left half done
 * (`recording`, `disposing`, untouched for REPAIR_AFTER_MS) is finished with the figures its intent
 * holds; the entries' ids come from the asset, so nothing is posted twice.
 */
export const assetsMaintenance: MaintenanceHook = async (ctx) => {
  const stale = await assets(ctx.db).find({ status: { $in: ['recording', 'disposing'] }, updated_at: { $lt: new Date(ctx.now.getTime() - REPAIR_AFTER_MS) } }).limit(BATCH).lean();
  let repaired = 0;
  for (const a of stale) {
    const books = { db: ctx.db, workspace: a.workspace, now: ctx.now };
    try {
      const after = a.status === 'recording' ? await completeAcquisition(books, a) : await completeDisposal(books, a);
      if (after.status !== a.status) repaired++;
    } catch (err) {
      ctx.log.warn({ asset: a._id, err: (err as Error).message }, 'fixed asset: could not finish a half-done change');
    }
  }
  return repaired;
};
