import { CuadraError } from '@cuadra/shared';
import type { Model } from 'mongoose';

/** A workspace's small set of settings kept as one document (`_id` = workspace), changed by `version`. */
export interface WorkspaceSet {
  _id: string;
  workspace: string;
  /** Bumped by every change: the condition of the next one. */
  version: number;
}

/** The workspace's set (`empty` when it has none yet: version 0). */
export async function readSet<D extends WorkspaceSet>(model: Model<D>, workspace: string, empty: () => D): Promise<D> {
  return ((await model.findOne({ _id: workspace }).lean()) as D | null) ?? empty();
}

/**
 * Changes a workspace's set: `change` edits a copy (and may throw a refusal); the copy replaces the
 * stored fields `fields` only if nobody changed the set since it was read (`version`; the first one
 * is an insert, unique by `_id`), else the change is made again on the new set. Atomic without
 * transactions: one document, one conditional write. Answers the set as written and `change`'s result.
 */
export async function changeSet<D extends WorkspaceSet, T>(model: Model<D>, workspace: string, empty: () => D, fields: readonly (keyof D & string)[], what: string, change: (set: D) => T): Promise<{ set: D; result: T }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const current = await readSet(model, workspace, empty);
    const copy = structuredClone(current);
    const result = change(copy);
    const next = { ...copy, version: current.version + 1 };
    if (current.version === 0) {
      const inserted = await model.collection.insertOne(next as never).then(() => true, (err: { code?: number }) => {
        if (err.code === 11000) return false; // another writer made the set first: change theirs
        throw err;
      });
      if (inserted) return { set: next, result };
      continue;
    }
    const $set = Object.fromEntries([...fields.map((f) => [f, next[f]]), ['version', next.version]]);
    const written = await model.collection.updateOne({ _id: workspace, version: current.version } as never, { $set } as never);
    if (written.modifiedCount === 1) return { set: next, result };
    await new Promise((r) => setTimeout(r, Math.random() * 10 * (attempt + 1)));
  }
  throw new CuadraError('conflict', `The ${what} are being changed by many calls at once; try again.`);
}
