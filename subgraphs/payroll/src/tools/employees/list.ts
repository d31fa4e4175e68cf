import { CURSOR_SCHEMA, defineTool, listNewestFirst } from '@cuadra/shared';
import { employees, employeeView, type EmployeeDoc } from '../../models/employee.ts';

interface Input { status?: EmployeeDoc['status']; search?: string; limit?: number; cursor?: string }


/** Lists the workspace's employees, newest first, one page at a time (CONTRACT §9). */
export const list = defineTool<Input>({
  name: 'employees.list',
  description: 'List employees of the workspace, newest first (most recently added); filter by status (active, terminated) or search by name or document number.' +
    ' Pages: pass next_cursor back as cursor until it is absent; a filtered page may be short, even empty, and still carry next_cursor; total is given only without filters.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { enum: ['active', 'terminated'] },
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      cursor: CURSOR_SCHEMA,
    },
  },
  async handler(input, ctx) {
    const text = input.search?.toLowerCase();
    // Document numbers are stored without separators, so they are searched the same way.
    const number = text?.replace(/[.\s-]/g, '').toUpperCase();
    const match = input.status || text
      ? (e: EmployeeDoc) => (!input.status || e.status === input.status) && (!text || e.name_lc.includes(text) || (!!number && e.document.number.includes(number)))
      : undefined;
    return listNewestFirst<EmployeeDoc, ReturnType<typeof employeeView>>(employees(ctx.db), { workspace: ctx.workspace, cursor: input.cursor, limit: input.limit ?? 20, match }, employeeView);
  },
});
