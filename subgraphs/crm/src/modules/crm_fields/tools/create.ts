import { CuadraError, defineTool, recordOutput } from '@cuadra/shared';
import { changeFields, FIELD_TYPES, FIELD_VIEW_SCHEMA, fieldView, MAX_FIELDS, newField } from '../model.ts';

/** JSON Schema of a field's label and options (create and update). */
export const FIELD_LABEL = { type: 'string', minLength: 1, maxLength: 80 } as const;
export const FIELD_OPTIONS = { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 80 } } as const;

/** Adds a custom field to deals or parties; the workspace's fields become the JSON Schema their values are checked against. */
export const create = defineTool({
  name: 'crm_fields.create',
  description: 'Add a custom field to deals or parties: key (the property under `custom`), label, type text, number, money (minor units), date, select or multiselect (with options), boolean, member or party; `required` for new records. Values are then checked (JSON Schema, ajv) on every create and update; text and select values are searchable.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['entity', 'key', 'label', 'type'],
    properties: {
      entity: { enum: ['deal', 'party'] },
      key: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$' },
      label: FIELD_LABEL,
      type: { enum: [...FIELD_TYPES] },
      options: FIELD_OPTIONS,
      required: { type: 'boolean' },
    },
  },
  output: recordOutput('field', FIELD_VIEW_SCHEMA),
  async handler(input, ctx) {
    const choice = input.type === 'select' || input.type === 'multiselect';
    if (choice && !input.options) throw new CuadraError('invalid_input', `A ${input.type} field needs its options.`, { field: '/options' });
    if (!choice && input.options) throw new CuadraError('invalid_input', `A ${input.type} field has no options.`, { field: '/options' });
    const { result } = await changeFields(ctx.db, ctx.workspace, (set) => {
      if (set.fields.length >= MAX_FIELDS) throw new CuadraError('conflict', `A workspace has at most ${MAX_FIELDS} custom fields.`);
      if (set.fields.some((f) => f.entity === input.entity && f.key === input.key)) throw new CuadraError('invalid_input', `${input.entity}s already have a custom field "${input.key}" (archived ones keep their key).`, { field: '/key' });
      const field = newField(input, ctx.now);
      set.fields.push(field);
      return field;
    });
    return { field: fieldView(result) };
  },
});
