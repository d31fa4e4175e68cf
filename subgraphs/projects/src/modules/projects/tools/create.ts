import { createPositioned, CuadraError, defineTool, newId, recordOutput } from '@cuadra/shared';
import { generateNKeysBetween } from 'fractional-indexing';
import { DEFAULT_COLUMNS, PROJECT_VIEW_SCHEMA, projects, projectView, type ProjectDoc } from '../model.ts';

/** Creates a project board with its own key and columns. */
export const create = defineTool({
  name: 'projects.create',
  description:
    'Create a project board: a name, a short upper-case key unique in the workspace (WEB, OPS2) that prefixes its task references, ' +
    'an optional description and its columns in order (default "To do", "Doing", "Done").',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'key'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      key: { type: 'string', pattern: '^[A-Z][A-Z0-9]{1,9}$' },
      description: { type: 'string', maxLength: 5000 },
      columns: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
        // No leading or trailing spaces: "Done" and "Done " would look like one column.
        items: { type: 'string', minLength: 1, maxLength: 60, pattern: '^\\S(.*\\S)?$' },
      },
    },
  },
  output: recordOutput('project', PROJECT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const columns = input.columns ?? [...DEFAULT_COLUMNS];
    const doc: ProjectDoc = {
      _id: newId('prj'),
      workspace: ctx.workspace,
      name: input.name.trim(),
      name_lc: input.name.trim().toLowerCase(),
      key: input.key,
      description: input.description ?? null,
      columns,
      column_keys: generateNKeysBetween(null, null, columns.length),
      task_ids: [],
      task_seq: 0,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    try {
      await createPositioned(projects(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) {
        throw new CuadraError('conflict', `A project with key ${input.key} already exists in this workspace.`);
      }
      throw err;
    }
    return { project: projectView(doc) };
  },
});
