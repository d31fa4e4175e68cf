import { createPositioned, CuadraError, DATE_SCHEMA, defineTool, ID_SCHEMA, newId, recordOutput, repeatableId, insertOrStored } from '@cuadra/shared';
import { PAYROLL_AMOUNT_SCHEMA } from '../../../money.ts';
import { loadEmployee } from '../../employees/ops.ts';
import { HOUR_KINDS } from '../calc.ts';
import { ABSENCE_TYPES, AMOUNT_TYPES, assertPeriodOpen, NOVELTY_TYPES, NOVELTY_VIEW_SCHEMA, novelties, noveltiesIn, noveltyView, shiftDays, type NoveltyDoc } from '../novelties.ts';

/** Records one novelty of one employee. */
export const noveltiesCreate = defineTool({
  name: 'payroll.novelties.create',
  description: 'Record a payroll novelty for an employee, inside the contract\'s dates. overtime: hour_kind, date, hours (surcharges on ordinary hours — night, sunday_holiday, sunday_holiday_night — and overtime by kind). sick_leave (from, to; prior_days of the same leave in earlier periods), leave (from, to, paid), vacations (from, to, days = business days taken): runs of days, at most a year, never overlapping another absence. commission, bonus (salary_type true for CST art. 127 pay, false for CST art. 128), loan (installment), deduction, garnishment: date and amount (cents). Refused on a period whose run is approved or posted.',
  risk: 'write',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['employee_id', 'type'],
    properties: {
      employee_id: ID_SCHEMA,
      type: { enum: [...NOVELTY_TYPES] },
      hour_kind: { enum: [...HOUR_KINDS] },
      date: DATE_SCHEMA,
      from: DATE_SCHEMA,
      to: DATE_SCHEMA,
      hours: { type: 'number', exclusiveMinimum: 0, maximum: 24, multipleOf: 0.01 },
      amount: PAYROLL_AMOUNT_SCHEMA,
      paid: { type: 'boolean' },
      salary_type: { type: 'boolean' },
      days: { type: 'integer', minimum: 0, maximum: 366 },
      prior_days: { type: 'integer', minimum: 0, maximum: 540 },
      label: { type: 'string', minLength: 1, maxLength: 200 },
    },
  } as const,
  output: recordOutput('novelty', NOVELTY_VIEW_SCHEMA),
  async handler(input, ctx) {
    const need = (field: keyof typeof input, why: string) => {
      if (input[field] === undefined) throw new CuadraError('invalid_input', `A ${input.type} novelty needs ${why}.`, { field: `/${field}` });
    };
    const refuse = (field: keyof typeof input) => {
      if (input[field] !== undefined) throw new CuadraError('invalid_input', `A ${input.type} novelty takes no ${field}.`, { field: `/${field}` });
    };
    const absence = ABSENCE_TYPES.includes(input.type);
    let first: string;
    let last: string;
    if (absence) {
      need('from', 'its first day (from)');
      need('to', 'its last day (to)');
      refuse('date');
      first = input.from!;
      last = input.to!;
      if (last < first) throw new CuadraError('invalid_input', 'The last day comes on or after the first.', { field: '/to' });
      if (last > shiftDays(first, 365)) throw new CuadraError('invalid_input', 'An absence is recorded a year at most at a time.', { field: '/to' });
    } else {
      need('date', 'its date');
      refuse('from');
      refuse('to');
      first = last = input.date!;
    }
    if (input.type === 'overtime') { need('hour_kind', 'an hour_kind'); need('hours', 'hours'); } else { refuse('hour_kind'); refuse('hours'); }
    if (AMOUNT_TYPES.includes(input.type)) need('amount', 'an amount'); else refuse('amount');
    if (input.type === 'leave') need('paid', 'paid (true or false)'); else refuse('paid');
    if (input.type === 'bonus') need('salary_type', 'salary_type (true or false)'); else refuse('salary_type');
    if (input.type === 'vacations') need('days', 'days (business days taken)'); else refuse('days');
    if (input.type !== 'sick_leave') refuse('prior_days');

    const employee = await loadEmployee(ctx, input.employee_id);
    const firstField = absence ? '/from' : '/date';
    const lastField = absence ? '/to' : '/date';
    if (first < employee.hire_date) throw new CuadraError('invalid_input', `${employee.name}'s contract starts on ${employee.hire_date}; a novelty cannot fall before it.`, { field: firstField });
    if (employee.termination && last > employee.termination.date) throw new CuadraError('invalid_input', `${employee.name}'s contract ended on ${employee.termination.date}; a novelty cannot fall after it.`, { field: lastField });
    if (input.type === 'vacations') {
      const span = Math.round((Date.parse(last) - Date.parse(first)) / 86_400_000) + 1;
      if (input.days! > span) throw new CuadraError('invalid_input', `${input.days} business days do not fit in ${span} calendar days.`, { field: '/days' });
    }
    await assertPeriodOpen(ctx.db, ctx.workspace, first, last);
    if (absence) {
      const clash = (await noveltiesIn(ctx.db, ctx.workspace, first, last, employee._id)).find((n) => ABSENCE_TYPES.includes(n.type));
      if (clash) throw new CuadraError('invalid_input', `${employee.name} already has ${clash.type.replace('_', ' ')} from ${clash.date} to ${clash.end_date}; absences do not overlap.`, { field: '/from' });
    }
    const doc: NoveltyDoc = {
      // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's novelty the store applies late is this one.
      _id: repeatableId('nov') ?? newId('nov'), workspace: ctx.workspace, employee_id: employee._id, employee_name: employee.name, type: input.type,
      hour_kind: input.hour_kind ?? null, date: first, end_date: last, hours: input.hours ?? null, amount: input.amount ?? null,
      paid: input.paid ?? null, salary_type: input.salary_type ?? null, days: input.type === 'sick_leave' ? input.prior_days ?? 0 : input.days ?? null,
      label: input.label?.trim() || null, created_at: ctx.now,
    };
    // Its id taken: the novelty an earlier attempt of this call wrote, answered as it is (not a second bonus paid).
    return { novelty: noveltyView(await insertOrStored(() => createPositioned(novelties(ctx.db), doc), novelties(ctx.db), doc, ctx.workspace)) };
  },
});
