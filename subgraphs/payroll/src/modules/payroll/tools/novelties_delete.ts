import { CuadraError, defineTool, ID_INPUT, releasePosition } from '@cuadra/shared';
import { assertPeriodOpen, novelties } from '../novelties.ts';

/** Deletes a novelty whose period no approved or posted run has closed. */
export const noveltiesDelete = defineTool({
  name: 'payroll.novelties.delete',
  description: 'Delete a payroll novelty. Refused once a run covering its dates is approved or posted (void the run first if it is not posted). A computed run keeps what it computed: void and run the period again to apply the change.',
  risk: 'destructive',
  input: ID_INPUT,
  output: { type: 'object', additionalProperties: false, required: ['deleted'], properties: { deleted: { type: 'string' } } },
  async handler(input, ctx) {
    const model = novelties(ctx.db);
    const doc = await model.findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!doc) throw new CuadraError('not_found', `No payroll novelty ${input.id} exists in this workspace.`);
    await assertPeriodOpen(ctx.db, ctx.workspace, doc.date, doc.end_date);
    const gone = await model.deleteOne({ _id: doc._id, workspace: ctx.workspace });
    if (gone.deletedCount !== 1) throw new CuadraError('not_found', `No payroll novelty ${input.id} exists in this workspace.`);
    await releasePosition(ctx.db, model.collection.collectionName, ctx.workspace);
    return { deleted: doc._id };
  },
});
