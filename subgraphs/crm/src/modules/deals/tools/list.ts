import { CuadraError, defineTool, ID_SCHEMA, pageOutput, CURSOR_SCHEMA, PAGING_NOTE } from '@cuadra/shared';
import { findDeals } from '../find.ts';
import { DEAL_VIEW_SCHEMA, dealView } from '../model.ts';

/** Deals newest first, filtered by status, pipeline, stage, party or a search. */
export const list = defineTool({
  name: 'deals.list',
  description: 'List deals, newest first; filter by status (open, won, lost), pipeline (key or id), stage, party, or search (title, party, tags, text and select custom values; words match from their start, accents and case ignored).' + PAGING_NOTE,
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false,
    properties: {
      status: { enum: ['open', 'won', 'lost'] }, pipeline: { type: 'string', minLength: 1, maxLength: 64 }, stage_id: ID_SCHEMA, party_id: ID_SCHEMA,
      search: { type: 'string', minLength: 1, maxLength: 100 }, limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: CURSOR_SCHEMA,
    },
  },
  output: pageOutput(DEAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const page = await findDeals(ctx, { ...input, limit: input.limit ?? 20 }, dealView);
    if (!page) throw new CuadraError('invalid_input', `No pipeline "${input.pipeline}" exists in this workspace.`, { field: '/pipeline' });
    return page;
  },
});
