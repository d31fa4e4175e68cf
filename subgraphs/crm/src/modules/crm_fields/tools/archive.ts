import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changeFields, FIELD_VIEW_SCHEMA, fieldView } from '../model.ts';

/** Archives a custom field: records keep their values (still shown and searchable); it takes no new ones. */
export const archive = defineTool({
  name: 'crm_fields.archive',
  description: 'Archive a custom field: deals and parties keep the values they have (still shown and searchable), but it takes no new ones and leaves forms. `restore: true` makes it active again.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: ID_SCHEMA, restore: { type: 'boolean' } } },
  output: recordOutput('field', FIELD_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { result } = await changeFields(ctx.db, ctx.workspace, (set) => {
      const f = set.fields.find((x) => x.id === input.id);
      if (!f) throw new CuadraError('not_found', `No custom field ${input.id} exists in this workspace.`);
      const to = input.restore ? 'active' : 'archived';
      if (f.status === to) throw new CuadraError('conflict', `The field ${f.label} is already ${to}.`);
      f.status = to;
      f.updated_at = ctx.now;
      return f;
    });
    return { field: fieldView(result) };
  },
});
