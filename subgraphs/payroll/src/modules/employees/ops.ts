import { CuadraError, type ToolContext } from '@cuadra/shared';
import { employees, type EmployeeDoc } from './model.ts';

/** The employee `id` of the caller's workspace, or `not_found`. */
export async function loadEmployee(ctx: Pick<ToolContext, 'db' | 'workspace'>, id: string): Promise<EmployeeDoc> {
  const doc = await employees(ctx.db).findOne({ _id: id, workspace: ctx.workspace }).lean();
  if (!doc) throw new CuadraError('not_found', `No employee ${id} exists in this workspace.`);
  return doc;
}

/** Refuses a change to a terminated contract. */
export function assertActive(doc: EmployeeDoc): void {
  if (doc.status !== 'active') throw new CuadraError('conflict', `${doc.name}'s contract ended on ${doc.termination?.date ?? 'an earlier date'}; a terminated employee is not changed.`);
}

/**
 * Applies `update` to the employee as it was read (`seen`), in one conditional update on its
 * revision: a concurrent change in between makes this one a `conflict`, never a lost update.
 */
export async function updateSeen(ctx: Pick<ToolContext, 'db' | 'workspace' | 'now'>, seen: EmployeeDoc, set: Partial<EmployeeDoc>): Promise<EmployeeDoc> {
  const updated = await employees(ctx.db).findOneAndUpdate(
    { _id: seen._id, workspace: ctx.workspace, status: 'active', rev: seen.rev ?? null },
    { $set: { ...set, updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  if (!updated) throw new CuadraError('conflict', `${seen.name} was changed by another call at the same time; nothing was done. Read the employee again and retry.`);
  return updated;
}
