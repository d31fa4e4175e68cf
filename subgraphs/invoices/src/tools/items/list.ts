import { CURSOR_SCHEMA, defineTool, listNewestFirst } from '@cuadra/shared';
import { items, itemView, type ItemDoc } from '../../models/item.ts';

interface Input { search?: string; kind?: ItemDoc['kind']; status?: ItemDoc['status']; limit?: number; cursor?: string }


/** Lists catalog items, newest first. */
export const list = defineTool<Input>({
  name: 'items.list',
  description: 'List catalog items (products and services), newest first; filter by kind, status or a case-insensitive name search.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100 },
      kind: { enum: ['product', 'service'] },
      status: { enum: ['active', 'archived'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  async handler(input, ctx) {
    const text = input.search?.toLowerCase();
    const match = input.kind || input.status || text
      ? (i: ItemDoc) => (!input.kind || i.kind === input.kind) && (!input.status || i.status === input.status) && (!text || i.name_lc.includes(text))
      : undefined;
    return listNewestFirst<ItemDoc, ReturnType<typeof itemView>>(items(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, itemView);
  },
});
