import { defineTool, escapeRegex } from '@cuadra/shared';
import { parties, partyView, type PartyDoc } from '../../models/party.ts';

interface Input { search?: string; kind?: PartyDoc['kind']; status?: PartyDoc['status']; limit?: number; offset?: number }


/** Lists the workspace's parties, newest first. */
export const list = defineTool<Input>({
  name: 'parties.list',
  description: 'List parties (customers, vendors) of the workspace, newest first; filter by kind, status or a case-insensitive name search.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      search: { type: 'string', minLength: 1, maxLength: 100 },
      kind: { enum: ['customer', 'vendor', 'both'] },
      status: { enum: ['active', 'archived'] },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    // `both` is a customer and a vendor: asking for customers includes it.
    if (input.kind) filter.kind = input.kind === 'both' ? 'both' : { $in: [input.kind, 'both'] };
    if (input.status) filter.status = input.status;
    if (input.search) filter.name_lc = { $regex: escapeRegex(input.search.toLowerCase()) };
    const limit = input.limit ?? 20;
    const model = parties(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ created_at: -1, _id: -1 }).skip(input.offset ?? 0).limit(limit).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(partyView), total };
  },
});
