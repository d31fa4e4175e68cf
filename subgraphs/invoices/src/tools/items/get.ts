import { CuadraError, defineTool } from '@cuadra/shared';
import { items, itemView } from '../../models/item.ts';

/** Reads one catalog item. */
export const get = defineTool<{ id: string }>({
  name: 'items.get',
  description: 'Get one catalog item (product or service) by id: price, VAT rate, unit, status.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } },
  async handler(input, ctx) {
    const item = await items(ctx.db).findOne({ _id: input.id, workspace: ctx.workspace }).lean();
    if (!item) throw new CuadraError('not_found', `No item ${input.id} exists in this workspace.`);
    return { item: itemView(item) };
  },
});
