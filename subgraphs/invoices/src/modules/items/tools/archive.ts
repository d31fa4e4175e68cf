import { CuadraError, defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { ITEM_VIEW_SCHEMA, items, itemView } from '../model.ts';

/** Archives an item: it stays on documents that name it but can no longer be sold. */
export const archive = defineTool({
  name: 'items.archive',
  description: 'Archive a catalog item: it stays on the documents that already name it but can no longer be added to new ones.',
  risk: 'write',
  input: ID_INPUT,
  output: recordOutput('item', ITEM_VIEW_SCHEMA),
  async handler(input, ctx) {
    const after = await items(ctx.db).findOneAndUpdate({ _id: input.id, workspace: ctx.workspace, status: 'active' }, { $set: { status: 'archived' } }, { returnDocument: 'after' }).lean();
    if (!after) {
      const exists = await items(ctx.db).exists({ _id: input.id, workspace: ctx.workspace });
      if (!exists) throw new CuadraError('not_found', `No item ${input.id} exists in this workspace.`);
      throw new CuadraError('conflict', `Item ${input.id} is already archived.`);
    }
    return { item: itemView(after) };
  },
});
