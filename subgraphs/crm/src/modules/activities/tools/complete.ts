import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { deals } from '../../deals/model.ts';
import { ACTIVITY_DUE, ACTIVITY_VIEW_SCHEMA, activities, activityView, dueId } from '../model.ts';

/** Marks an open activity done: it leaves the agenda. */
export const complete = defineTool({
  name: 'activities.complete',
  description: 'Mark an open activity done (it leaves the agenda), optionally adding to its notes.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, notes: { type: 'string', maxLength: 5000 } } },
  output: recordOutput('activity', ACTIVITY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await activities(ctx.db).findOneAndUpdate(
      { _id: input.id, workspace: ctx.workspace, status: 'open' },
      { $set: { status: 'done', done_at: ctx.now, updated_at: ctx.now, ...(input.notes ? { notes: input.notes } : {}) } },
      { returnDocument: 'after' },
    ).lean();
    if (!after) {
      if (!(await activities(ctx.db).exists({ _id: input.id, workspace: ctx.workspace }))) throw new CuadraError('not_found', `No activity ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Activity ${input.id} is done already.`);
    }
    if (after.due_date) await ctx.db.collection(ACTIVITY_DUE).updateOne({ _id: dueId(ctx.workspace, after.due_date) } as never, { $pull: { ids: after._id } } as never);
    if (after.deal_id) await deals(ctx.db).updateOne({ _id: after.deal_id, workspace: ctx.workspace }, { $set: { updated_at: ctx.now } });
    return { activity: activityView(after) };
  },
});
