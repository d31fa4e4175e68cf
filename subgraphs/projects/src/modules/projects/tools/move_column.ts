import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { changeColumns, keyAfter } from '../columns.ts';
import { boardColumns, PROJECT_VIEW_SCHEMA, projectView } from '../model.ts';

const COLUMN_NAME = { type: 'string', minLength: 1, maxLength: 60 } as const;

/** Moves a column of a board: only its own order key changes. */
export const moveColumn = defineTool({
  name: 'projects.move_column',
  description: 'Move a column of a project board to just after the column named in after (null: first). Only the moved column\'s fractional order key changes; its tasks stay in it.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'column', 'after'],
    properties: { id: ID_SCHEMA, column: COLUMN_NAME, after: { anyOf: [COLUMN_NAME, { type: 'null' }] } },
  },
  output: recordOutput('project', PROJECT_VIEW_SCHEMA),
  async handler(input, ctx) {
    const p = await changeColumns(ctx.db, ctx.workspace, input.id, ctx.now, (p) => {
      if (!p.columns.includes(input.column)) throw new CuadraError('invalid_input', `The column "${input.column}" is not on this project.`, { field: '/column' });
      if (input.after === input.column) throw new CuadraError('invalid_input', 'A column cannot follow itself.', { field: '/after' });
      const key = keyAfter(p, input.after, input.column);
      return boardColumns(p).map((c) => (c.name === input.column ? { ...c, key } : c));
    });
    return { project: projectView(p) };
  },
});
