import { defineTool, escapeRegex } from '@cuadra/shared';
import { employees, employeeView, type EmployeeDoc } from '../../models/employee.ts';

interface Input { status?: EmployeeDoc['status']; search?: string; limit?: number; offset?: number }


/** Lists the workspace's employees in name order. */
export const list = defineTool<Input>({
  name: 'employees.list',
  description: 'List employees of the workspace in name order; filter by status (active, terminated) or search by name or document number.',
  risk: 'read',
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { enum: ['active', 'terminated'] },
      search: { type: 'string', minLength: 1, maxLength: 100 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      offset: { type: 'integer', minimum: 0, maximum: 100000 },
    },
  },
  async handler(input, ctx) {
    const filter: Record<string, unknown> = { workspace: ctx.workspace };
    if (input.status) filter.status = input.status;
    if (input.search) {
      const text = input.search.toLowerCase();
      const or: Record<string, unknown>[] = [{ name_lc: { $regex: escapeRegex(text) } }];
      // Document numbers are stored without separators, so they are searched the same way.
      const number = text.replace(/[.\s-]/g, '').toUpperCase();
      if (number) or.push({ 'document.number': { $regex: escapeRegex(number) } });
      filter.$or = or;
    }
    const limit = input.limit ?? 20;
    const model = employees(ctx.db);
    const [rows, total] = await Promise.all([
      model.find(filter).sort({ name_lc: 1, _id: 1 }).skip(input.offset ?? 0).limit(limit).lean(),
      model.countDocuments(filter),
    ]);
    return { rows: rows.map(employeeView), total };
  },
});
