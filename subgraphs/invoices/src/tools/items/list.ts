import { defineTool, escapeRegex } from '@cuadra/shared';
import { items, itemView, type ItemDoc } from '../../models/item.ts';

interface Input { search?: string; kind?: ItemDoc['kind']; status?: ItemDoc['status']; limit?: number; offset?: number }


/** Lists catalog items, newest first. */
export const list = defineTool<Input>({
  name: 'items.list',
  description: 'List catalog items (products and services), newest first; filter by kind, status or a case-insensitive name search.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100 },
      kind: { enum: ['product', 'service'] },
      status: { enum: ['active', 'archived'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.kind) filter.kind = input.kind;
    if (input.status) filter.status = input.status;
    if (input.search) filter.name_lc = { $regex: escapeRegex(input.search.toLowerCase()) };
    const model = items(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(input.limit ?? 20).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(itemView), total };
  },
});
