import { defineTool } from '@cuadra/shared';
import { journalEntries, journalView } from '../../accounting/journal.ts';

interface Input { from?: string; to?: string; limit?: number }

/** Lists journal entries by date. */
export const list = defineTool<Input>({
  name: 'journal.list',
  description: 'List journal entries (double entry, PUC accounts) between two dates, oldest first; each with its lines and its debit and credit totals.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
  },
  async handler(input, ctx) {
    const date: Record<string, string> = {};
    if (input.from) date.$gte = input.from;
    if (input.to) date.$lte = input.to;
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.from || input.to) filter.date = date;
    const rows = await journalEntries(ctx.db).find(filter).sort({ date: 1, _id: 1 }).limit(input.limit ?? 50).lean();
    return { rows: rows.map(journalView) };
  },
});
