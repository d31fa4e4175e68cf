import { DATE_SCHEMA, defineListTool, ID_SCHEMA } from '@cuadra/shared';
import { NOVELTY_TYPES, NOVELTY_VIEW_SCHEMA, novelties, noveltyView } from '../novelties.ts';

/** Lists novelties, newest first. */
export const noveltiesList = defineListTool({
  name: 'payroll.novelties.list',
  description: 'List payroll novelties, newest recorded first; filter by employee, type, or a period (from–to: the novelties with a day in it).',
  model: novelties,
  view: noveltyView,
  viewSchema: NOVELTY_VIEW_SCHEMA,
  filters: { employee_id: ID_SCHEMA, type: { enum: [...NOVELTY_TYPES] }, from: DATE_SCHEMA, to: DATE_SCHEMA },
  match: ({ employee_id, type, from, to }) => (employee_id || type || from || to
    ? (n) => (!employee_id || n.employee_id === employee_id) && (!type || n.type === type) && (!from || n.end_date >= from) && (!to || n.date <= to)
    : undefined),
});
