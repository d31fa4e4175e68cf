import {
  addDays, changeBps, containsText, countSeries, CuadraError, type Governance, type ListAnswer, listNewestFirst, localDate, localDayStart, metricQueryValidator, previousWindow, queryWindow, readModule, type RecordsQuery, windowProblem, type WindowQuery,
} from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { agents, type AgentDoc } from '../models/agent.ts';
import { owned } from '../modules/index.ts';

/** The records sources and metrics this subgraph answers, with the tool module each belongs to (its read guard). */
const SOURCES = owned.reads.sources ?? {};
const METRICS = owned.reads.metrics ?? {};

/** The module whose read reach a records source needs (`agents` for an unknown one, refused after the guard). */
export function sourceModule(source: unknown): string {
  return readModule(SOURCES, source, 'agents');
}
/** The module whose read reach a metric needs (`ledger` for an unknown one, refused after the guard). */
export function metricModule(metric: unknown): string {
  return readModule(METRICS, metric, 'ledger');
}

export { validateRecordsQuery } from '@cuadra/shared';
export type { RecordsQuery } from '@cuadra/shared';
/** Throws `invalid_input` with a JSON Pointer when a metric query (§2.3) does not fit. */
export const validateMetricQuery = metricQueryValidator(Object.keys(METRICS));
export interface MetricQuery extends WindowQuery { metric: string; limit?: number; target?: number }

function agentRow(a: AgentDoc) {
  return { id: a._id, name: a.name, description: a.description, model: a.model, tools: a.tools, status: a.status, created_at: a.created_at.toISOString() };
}

/**
 * `records.list` for agents (newest first, by cursor, CONTRACT §9: `total` only without search;
 * `search` the name, description or model) and policies (the governance store's, sealed to the
 * workspace, highest priority first, one page: a workspace's policies are few; `search` the name). Both ignore `status` and take no kind or ref (specification §2.5).
 */
export async function agentsRecords(db: Connection, governance: Governance, workspace: string, q: RecordsQuery): Promise<{ source: string } & ListAnswer<Record<string, unknown>>> {
  if (!Object.hasOwn(SOURCES, q.source)) throw new CuadraError('invalid_input', `The agents subgraph does not answer the source "${q.source}".`, { field: '/source' });
  if (q.kind !== undefined) throw new CuadraError('invalid_input', `The source ${q.source} takes no kind.`, { field: '/kind' });
  if (q.ref !== undefined) throw new CuadraError('invalid_input', `The source ${q.source} takes no ref.`, { field: '/ref' });
  const limit = q.limit ?? 8;
  if (q.source === 'agents') {
    const text = q.search?.toLowerCase();
    const match = text ? (a: AgentDoc) => a.name_lc.includes(text) || containsText(a.description, text) || containsText(a.model, text) : undefined;
    return { source: q.source, ...(await listNewestFirst<AgentDoc, Record<string, unknown>>(agents(db), { workspace, cursor: q.cursor, limit, match }, agentRow)) };
  }
  if (q.cursor !== undefined) throw new CuadraError('invalid_input', 'Policies come in one page; they take no cursor.', { field: '/cursor' });
  // A workspace's policies are few (every call reads them all to decide): filtered here.
  const search = q.search?.toLowerCase();
  const matching = (await governance.policies.list(workspace)).filter((p) => !search || p.name.toLowerCase().includes(search));
  const rows = matching.slice(0, limit).map(({ workspace: _sealed, ...p }) => p);
  return { source: q.source, rows, total: matching.length };
}

/**
 * `metrics.query` for the governance metrics (unit count), from the shared governance store:
 * - approvals_pending: summary = approvals waiting for a decision now; series = approvals
 *   requested per bucket of the window (`previous` from the comparison window).
 * - activity: ledger entries per bucket of the window; summary = the window's total (and the
 *   comparison window's); rows = the most used tools in the window (`limit`, default 5). The
 *   ledger is read by `Ledger.span`, which walks seq windows back from the head and stops at
 *   50 000 entries read: a busier workspace is counted over its newest 50 000 entries.
 */
export async function agentsMetric(governance: Governance, workspace: string, q: MetricQuery, now = new Date()) {
  if (!Object.hasOwn(METRICS, q.metric)) throw new CuadraError('invalid_input', `The agents subgraph does not answer the metric "${q.metric}".`, { field: '/metric' });
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const today = localDate(now);
  const w = queryWindow(q, today);
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const from = localDayStart(pw && pw.from < w.from ? pw.from : w.from);
  const to = localDayStart(addDays(w.to, 1));
  const withTarget = <T extends object>(s: T) => (q.target === undefined ? s : { ...s, target: q.target });

  if (q.metric === 'approvals_pending') {
    const [pending, requested] = await Promise.all([governance.approvals.countPending(workspace, now), governance.approvals.requestedBetween(workspace, from, to)]);
    const { series } = countSeries(requested.map((at) => localDate(new Date(at))), q, today);
    return { metric: q.metric, unit: 'count' as const, series, summary: withTarget({ value: pending }) };
  }

  const { entries } = await governance.ledger.span(workspace, from, to);
  const days = entries.map((e) => localDate(new Date(e.at)));
  const r = countSeries(days, q, today);
  const tools = new Map<string, number>();
  entries.forEach((e, i) => {
    if (days[i] >= w.from && days[i] <= w.to) tools.set(e.tool, (tools.get(e.tool) ?? 0) + 1);
  });
  const rows = [...tools].map(([tool, count]) => ({ tool, count }))
    .sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool))
    .slice(0, q.limit ?? 5);
  let summary: { value: number; previous?: number; change_bps?: number } = { value: r.value };
  if (r.previous !== undefined) {
    const change = changeBps(r.value, r.previous);
    summary = change === undefined ? { value: r.value, previous: r.previous } : { value: r.value, previous: r.previous, change_bps: change };
  }
  return { metric: q.metric, unit: 'count' as const, series: r.series, summary: withTarget(summary), rows };
}
