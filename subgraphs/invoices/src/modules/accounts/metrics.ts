import type { MetricQuery, MetricReader, ReadContext } from '@cuadra/shared';
import { wakingPayrollPull } from '../../accounting/payroll_pull.ts';
import { statement, STATEMENT_METRICS, type StatementMetric } from './statements.ts';

/** The readers of the statements, one per metric (the module manifest declares them); payroll's postings are pulled in first. */
export const statementMetrics: Record<StatementMetric, MetricReader> = Object.fromEntries(
  STATEMENT_METRICS.map((metric) => [metric, wakingPayrollPull(async (q: MetricQuery, ctx: ReadContext) =>
    statement(ctx.db, ctx.workspace, { ...q, metric }, ctx.now) as unknown as Promise<Record<string, unknown>>)]),
) as Record<StatementMetric, MetricReader>;
