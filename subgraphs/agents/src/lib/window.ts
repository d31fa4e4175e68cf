import { addDays, CuadraError, localDate, localDayStart, type MetricQuery, previousWindow, queryWindow, windowProblem } from '@cuadra/shared';

/**
 * The window of a governance metric (approvals_pending, activity): `today`, the asked window,
 * and the instants `[from, to)` to read the governance store over — the comparison window
 * included, so one read serves both. `invalid_input` with its pointer when the window does not fit.
 */
export function metricSpan(q: MetricQuery, now: Date) {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const today = localDate(now);
  const window = queryWindow(q, today);
  const previous = q.compare ? previousWindow(window, q.compare) : null;
  return {
    today,
    window,
    from: localDayStart(previous && previous.from < window.from ? previous.from : window.from),
    to: localDayStart(addDays(window.to, 1)),
  };
}

/** The summary with the query's `target` beside it, when one was asked. */
export function withTarget<T extends object>(q: MetricQuery, summary: T): T | (T & { target: number }) {
  return q.target === undefined ? summary : { ...summary, target: q.target };
}
