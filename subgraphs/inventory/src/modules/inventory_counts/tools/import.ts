import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { inventoryCounts, type CountDoc } from '../model.ts';
import { countedIn } from '../sheet.ts';
import { COUNT_VIEW_SCHEMA, countView } from '../view.ts';

/** 2 MiB of spreadsheet, as base64. */
const MAX_BASE64 = Math.ceil((2 * 1024 * 1024) / 3) * 4;

/** The filled-in count sheet comes back. */
export const importSheet = defineTool({
  name: 'inventory_counts.import',
  description: 'Import a filled-in count sheet (the XLSX inventory_counts.export made, base64, at most 2 MiB): the Contado column of each row becomes that item\'s count; blank rows keep what they had. The whole file is refused (nothing changed) when a row names an item not on the sheet or a count that is not a quantity. Only an open sheet.',
  risk: 'write',
  maxInputBytes: MAX_BASE64 + 4_096,
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'content'],
    properties: { id: { type: 'string', minLength: 1, maxLength: 64 }, content: { type: 'string', minLength: 1, maxLength: MAX_BASE64, contentEncoding: 'base64' } },
  },
  output: recordOutput('count', COUNT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const model = inventoryCounts(ctx.db);
    const count = await model.findOne({ _id: input.id, workspace: ctx.workspace }).lean<CountDoc>();
    if (!count) throw new CuadraError('not_found', `No count sheet ${input.id}.`);
    if (count.status !== 'open') throw new CuadraError('conflict', 'The count sheet is posted: its counts no longer change.');
    const bytes = Buffer.from(input.content, 'base64');
    if (bytes.toString('base64').replace(/=+$/, '') !== input.content.replace(/=+$/, '')) throw new CuadraError('invalid_input', 'The content is not base64.', { field: '/content' });
    const counted = await countedIn(count, bytes);
    const lines = count.lines.map((l) => (counted.has(l.item_id) ? { ...l, counted: counted.get(l.item_id)! } : l));
    const done = await model.updateOne({ _id: count._id, status: 'open' }, { $set: { lines } });
    if (done.modifiedCount !== 1 && done.matchedCount !== 1) throw new CuadraError('conflict', 'The count sheet was posted meanwhile: its counts no longer change.');
    return { count: countView({ ...count, lines }) };
  },
});
