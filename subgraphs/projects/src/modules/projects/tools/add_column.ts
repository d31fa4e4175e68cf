import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changeColumns, keyAfter, MAX_COLUMNS } from '../columns.ts';
import { boardColumns, PROJECT_VIEW_SCHEMA, projectView } from '../model.ts';

const COLUMN_NAME = { type: 'string', minLength: 1, maxLength: 60, pattern: '^\\S(.*\\S)?$' } as const;

/** Adds a column to a board. */
export const addColumn = defineTool({
  name: 'projects.add_column',
  description: 'Add a column to a project board, after the column named in after (null or absent: at the end). Tasks in the last column count as done.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'name'],
    properties: { id: ID_SCHEMA, name: COLUMN_NAME, after: { anyOf: [COLUMN_NAME, { type: 'null' }] } },
  },
  output: recordOutput('project', PROJECT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const p = await changeColumns(ctx.db, ctx.workspace, input.id, ctx.now, (p) => {
      if (p.columns.includes(input.name)) throw new CuadraError('conflict', `The project already has a column "${input.name}".`);
      if (p.columns.length >= MAX_COLUMNS) throw new CuadraError('conflict', `A board has at most ${MAX_COLUMNS} columns.`);
      const cols = boardColumns(p);
      const key = input.after === undefined ? keyAfter(p, cols[cols.length - 1].name) : keyAfter(p, input.after);
      return [...cols, { name: input.name, key, done: false }];
    });
    return { project: projectView(p) };
  },
});
