import { defineTool, pageOutput } from '@cuadra/shared';
import { FIELD_VIEW_SCHEMA, fieldView, readFields } from '../model.ts';

/** The workspace's custom fields (at most 200: one page), with the JSON Schema of each. */
export const list = defineTool({
  name: 'crm_fields.list',
  description: 'List the custom fields of deals and parties, each with the JSON Schema its values are checked against; filter by entity (deal, party) and status. At most 200 fields: always one page.',
  risk: 'read',
  input: { type: 'object', additionalProperties: false, properties: { entity: { enum: ['deal', 'party'] }, status: { enum: ['active', 'archived'] } } },
  output: pageOutput(FIELD_VIEW_SCHEMA),
  async handler(input, ctx) {
    const set = await readFields(ctx.db, ctx.workspace);
    const rows = set.fields.filter((f) => (!input.entity || f.entity === input.entity) && (!input.status || f.status === input.status)).map(fieldView);
    return { rows, total: rows.length };
  },
});
