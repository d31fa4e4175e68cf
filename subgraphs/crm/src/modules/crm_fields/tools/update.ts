import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changeFields, FIELD_VIEW_SCHEMA, fieldView } from '../model.ts';
import { FIELD_LABEL, FIELD_OPTIONS } from './create.ts';

/** Changes a field's label, options (only added: stored values stay valid) or whether it is required. */
export const update = defineTool({
  name: 'crm_fields.update',
  description: 'Change a custom field: its label, whether new records must give it, or its options (a select keeps every option values may already use: options can be added, not removed). Its key and type are fixed.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id'], minProperties: 2,
    properties: { id: ID_SCHEMA, label: FIELD_LABEL, options: FIELD_OPTIONS, required: { type: 'boolean' } },
  },
  output: recordOutput('field', FIELD_VIEW_SCHEMA),
  async handler(input, ctx) {
    const { result } = await changeFields(ctx.db, ctx.workspace, (set) => {
      const f = set.fields.find((x) => x.id === input.id);
      if (!f) throw new CuadraError('not_found', `No custom field ${input.id} exists in this workspace.`);
      if (f.status === 'archived') throw new CuadraError('conflict', `The field ${f.label} is archived; restore it before changing it.`);
      if (input.options) {
        if (f.type !== 'select' && f.type !== 'multiselect') throw new CuadraError('invalid_input', `A ${f.type} field has no options.`, { field: '/options' });
        const dropped = f.options.filter((o) => !input.options!.includes(o));
        if (dropped.length) throw new CuadraError('invalid_input', `Options in use cannot be removed (${dropped.join(', ')}): stored values would stop being valid.`, { field: '/options' });
        f.options = input.options;
      }
      if (input.label) f.label = input.label.trim();
      if (input.required !== undefined) f.required = input.required;
      f.updated_at = ctx.now;
      return f;
    });
    return { field: fieldView(result) };
  },
});
