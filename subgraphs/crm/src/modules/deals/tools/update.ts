import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { DEAL_VIEW_SCHEMA, dealView, type DealDoc } from '../model.ts';
import { amountOf, changeDeal, dealLines, partyName, updatedCustom } from '../ops.ts';
import { DEAL_FIELDS } from './create.ts';

/** Changes a deal's fields (not its stage: deals.move). */
export const update = defineTool({
  name: 'deals.update',
  description: 'Change a deal: title, party, amount or lines, owner, expected close, custom field values (null clears one; archived fields keep their values) and tags. Its stage changes with deals.move, win, lose and reopen.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], minProperties: 2, properties: { id: ID_SCHEMA, ...DEAL_FIELDS } },
  output: recordOutput('deal', DEAL_VIEW_SCHEMA),
  amount: (input) => input.amount ?? null,
  async handler(input, ctx) {
    const party = input.party_id ? await partyName(ctx, input.party_id, '/party_id') : undefined;
    const deal = await changeDeal(ctx, input.id, async (d, { fields }) => {
      const set: Partial<DealDoc> = {};
      if (input.title) set.title = input.title.trim();
      if (input.party_id) Object.assign(set, { party_id: input.party_id, party_name: party });
      if (input.owner_id) set.owner_id = input.owner_id;
      if (input.expected_close) set.expected_close = input.expected_close;
      if (input.tags) set.tags = input.tags;
      if (input.custom) set.custom = updatedCustom(fields, d.custom ?? {}, input.custom);
      if (input.lines) {
        if (input.amount !== undefined) throw new CuadraError('invalid_input', 'A deal with lines takes its amount from them; give one or the other.', { field: '/amount' });
        set.lines = dealLines(input.lines);
        set.amount = amountOf(set.lines, undefined);
      } else if (input.amount !== undefined) {
        if (d.lines.length) throw new CuadraError('invalid_input', 'This deal has lines: its amount is their sum. Change the lines instead.', { field: '/amount' });
        set.amount = input.amount;
      }
      if (d.status !== 'open' && set.amount !== undefined && set.amount !== d.amount) throw new CuadraError('conflict', `Deal ${d._id} is ${d.status}; reopen it to change its amount.`);
      return { set };
    });
    return { deal: dealView(deal) };
  },
});
