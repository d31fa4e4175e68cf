import type { Model } from 'mongoose';
import { pendingChanges } from './rollup-store.ts';
import { applyRollupIntent, intentUpdate, markIntent, type RollupIntent } from './rollup-intents.ts';

/** What a counted write needs: the database and the workspace. */
export interface CountedWriteContext { db: import('mongoose').Connection; workspace: string }

/**
 * One conditional update of a document that carries its rollup intent, the way every counted
 * change of a record is written: the intent's marker first, then the update (the intent pushed
 * on the document in the same write), then the intent applied — or, when the condition did not
 * hold (another writer got there first), its marker dropped, nothing counted.
 * @returns the document after the update, or null when the condition did not hold
 */
export async function updateCounted<T>(
  ctx: CountedWriteContext, model: Model<T>, docId: string, filter: Record<string, unknown>,
  update: { $set: Record<string, unknown>; $inc?: Record<string, number> }, intent: RollupIntent | null,
): Promise<T | null> {
  const counted = intentUpdate(intent);
  await markIntent(ctx.db, ctx.workspace, model, docId, intent);
  const $inc = { ...update.$inc, ...counted.$inc };
  const done = await model.findOneAndUpdate(
    filter as never,
    { $set: update.$set, ...(Object.keys($inc).length ? { $inc } : {}), ...(counted.$push ? { $push: counted.$push } : {}) } as never,
    { returnDocument: 'after' },
  ).lean<T>();
  if (done) await applyRollupIntent(ctx.db, model, docId, ctx.workspace, intent);
  else if (intent) await pendingChanges(ctx.db).deleteOne({ _id: intent.id });
  return done;
}
