import { type AgendaEntry, type CatalogReads, CuadraError, DATE_SCHEMA as DATE, type ListAnswer, type Principal } from '@cuadra/shared';
import { buildProducts } from '../catalog.ts';
import { GATEWAY_OWNER } from '../local/services.ts';
import { resolveSaved } from './saved.ts';
import { metricQuerySchema, SOURCES, type MetricQuery, type RecordsQuery } from './schema.ts';

/** Reads a records source the gateway answers itself (members, roles) as a caller, who must reach its owning module. */
export type LocalSourceReader = (principal: Principal, query: RecordsQuery) => Promise<ListAnswer<Record<string, unknown>>>;

/** Runs one GraphQL operation on the composed graph as `principal`; answers `data` or throws the first error as a contract error. */
export type GraphRunner = (principal: Principal, query: string, variables?: Record<string, unknown>) => Promise<Record<string, unknown>>;

/**
 * The routing table of the composite reads (DOMAIN.md: each module answers for its own metrics,
 * sources and agenda lanes in its subgraph schema): what each subgraph declared, and the sources
 * of the gateway's own modules (owner `gateway`, read in process), written into the catalog by the
 * build. What is absent is not answered by any module yet.
 */
export function readRoutes(): CatalogReads {
  return buildProducts().reads;
}

const NUMBER = { type: 'number' } as const;

/**
 * JSON Schema of a metric answer (specification §2.3, CONTRACT.md §8), whichever module answers
 * it: the envelope is fixed; `rows` are the metric's own breakdown (aging buckets, top customers,
 * statuses…), objects of any shape.
 */
export const METRIC_ANSWER_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['metric', 'unit', 'series', 'summary'],
  properties: {
    metric: metricQuerySchema.properties.metric,
    unit: { enum: ['money', 'ratio', 'count'] },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    series: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['period', 'period_end', 'value'],
        properties: { period: DATE, period_end: DATE, value: NUMBER, previous: NUMBER },
      },
    },
    summary: {
      type: 'object', additionalProperties: false, required: ['value'],
      properties: { value: NUMBER, previous: NUMBER, change_bps: { type: 'integer' }, target: NUMBER },
    },
    rows: { type: 'array', items: { type: 'object' } },
  },
} as const;

/**
 * JSON Schema of a records answer (specification §2.5): one page of a source, newest first. Rows
 * are the source's own rows (an invoice, a party, an employee…), objects of any shape.
 */
export const RECORDS_ANSWER_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['source', 'rows'],
  properties: {
    source: { enum: [...SOURCES] },
    rows: { type: 'array', items: { type: 'object' } },
    total: { type: 'integer', minimum: 0 },
    next_cursor: { type: 'string' },
  },
} as const;

/** Reads a workspace's saved metric query by key (null when it has none of that key). */
export type SavedMetricReader = (workspace: string, key: string) => Promise<MetricQuery | null>;

/**
 * `metrics.query`: fans out to the subgraph field that owns the metric. A `saved:<key>` metric
 * is the caller's workspace's saved query (metrics.save) with the caller's other fields laid over it.
 */
export async function queryMetric(run: GraphRunner, principal: Principal, asked: MetricQuery, saved?: SavedMetricReader): Promise<Record<string, unknown>> {
  let query = asked;
  if (asked.metric.startsWith('saved:') && saved) {
    const stored = await saved(principal.workspace, asked.metric.slice(6));
    if (!stored) throw new CuadraError('not_found', `There is no saved metric "${asked.metric.slice(6)}" in this workspace (metrics.save makes one).`);
    query = resolveSaved(stored, asked);
  }
  const metrics = readRoutes().metrics;
  const field = Object.hasOwn(metrics, query.metric) ? metrics[query.metric].field : undefined;
  if (!field) {
    const what = query.metric.startsWith('saved:') ? `The saved metric "${query.metric.slice(6)}"` : `The metric "${query.metric}"`;
    throw new CuadraError('not_found', `${what} is not available yet: no module of this workspace answers it.`);
  }
  const data = await run(principal, `query Metric($q: JSON!) { ${field}(query: $q) }`, { q: query });
  return data[field] as Record<string, unknown>;
}

/** `records.list`: fans out to the subgraph field that owns the source, or reads the gateway's own data in process. */
export async function listRecords(run: GraphRunner, local: LocalSourceReader, principal: Principal, query: RecordsQuery): Promise<Record<string, unknown>> {
  const sources = readRoutes().sources;
  const route = Object.hasOwn(sources, query.source) ? sources[query.source] : undefined;
  if (!route) throw new CuadraError('not_found', `The records source "${query.source}" is not available yet: no module of this workspace answers it.`);
  if (route.subgraph === GATEWAY_OWNER) return { source: query.source, ...(await local(principal, query)) };
  const field = route.field;
  const data = await run(principal, `query Records($q: JSON!) { ${field}(query: $q) }`, { q: query });
  return data[field] as Record<string, unknown>;
}


/**
 * A kanban block's board (specification §2.2 `board`): the board reader of the subgraph that
 * declared it (`pipeline`: the sales pipeline), with the pipeline's key (empty: the first) and
 * cards per column (default 25, max 100).
 */
export async function readBoard(run: GraphRunner, principal: Principal, query: { pipeline?: string; limit?: number }): Promise<Record<string, unknown>> {
  const boards = readRoutes().boards ?? {};
  const route = Object.hasOwn(boards, 'pipeline') ? boards.pipeline : undefined;
  if (!route) throw new CuadraError('not_found', 'The deals board is not available yet: no module of this workspace answers it.');
  const q = { board: 'pipeline', pipeline: query.pipeline ?? '', limit: query.limit ?? 25 };
  const data = await run(principal, `query Board($q: JSON!) { ${route.field}(query: $q) }`, { q });
  return data[route.field] as Record<string, unknown>;
}

/**
 * The agenda (specification §2.6): the lanes asked for, merged by date. Lanes no module answers
 * yet are named in `unavailable_lanes`; when none of the asked lanes is answered, it is `not_found`.
 */
export async function readAgenda(run: GraphRunner, principal: Principal, window: { from: string; to: string; limit: number; overdue: boolean; kinds?: string[]; sources: string[] }): Promise<{ from: string; to: string; entries: AgendaEntry[]; unavailable_lanes: string[] }> {
  const lanes = readRoutes().agenda;
  const answered = window.sources.filter((s) => Object.hasOwn(lanes, s));
  const unavailable = window.sources.filter((s) => !Object.hasOwn(lanes, s));
  if (answered.length === 0) throw new CuadraError('not_found', `The agenda lanes ${unavailable.join(', ')} are not available yet: no module of this workspace answers them.`);
  // A lane several subgraphs answer (`recurring`: invoices and payroll) is read from each; a part the
  // caller may not read (its module out of reach) is left out rather than failing the lane.
  const parts = answered.flatMap((lane) => [{ lane, route: lanes[lane], extra: false }, ...(lanes[lane].also ?? []).map((route) => ({ lane, route, extra: true }))]);
  const lists = await Promise.all(parts.map(async ({ lane, route, extra }) => {
    const field = route.field;
    try {
      const data = await run(principal, `query Lane($lane: String!, $w: JSON!) { ${field}(lane: $lane, window: $w) }`, { lane, w: { from: window.from, to: window.to, limit: window.limit, overdue: window.overdue } });
      return data[field] as AgendaEntry[];
    } catch (err) {
      if (extra && err instanceof CuadraError && (err.code === 'policy_denied' || err.code === 'insufficient_scope')) return [];
      throw err;
    }
  }));
  let entries = lists.flat();
  if (window.kinds?.length) entries = entries.filter((e) => window.kinds!.includes(e.kind));
  entries.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return { from: window.from, to: window.to, entries: entries.slice(0, window.limit), unavailable_lanes: unavailable };
}
