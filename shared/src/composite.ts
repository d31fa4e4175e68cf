import type { Connection, Model } from 'mongoose';
import { CuadraError } from './errors.ts';
import type { Governance } from './governance/index.ts';
import { containsText, listNewestFirst, type ListAnswer, type SeriesOptions } from './paging.ts';
import { peerGraph, type PeerConfig, type PeerGraph } from './peers.ts';
import type { Principal } from './principal.ts';
import { daysBetween } from './periods.ts';
import { DATE_SCHEMA, validateMetricQuery, validateRecordsQuery, type RecordsQuery } from './queries.ts';
import type { ReadDeclarations, ReadKind } from './reads.ts';
import { lazyAjv, lazyValidator } from './validation.ts';

/**
 * The composite reads (specification §2.3, §2.5, §2.6) as modules declare them: a records source,
 * a metric or an agenda lane is one reader function in the module's manifest. The subgraph
 * serves them through three graph fields written once here — `<subgraph>Records`,
 * `<subgraph>Metric`, `<subgraph>Agenda` — which check the query's shape, the caller's reach of
 * the owning module, and dispatch to the reader. The build writes each reader's name, field and
 * module into the catalog; the gateway routes by it.
 */

/** What a reader receives besides its query. */
export interface ReadContext {
  db: Connection;
  workspace: string;
  principal: Principal;
  /** The moment the read started. */
  now: Date;
  /** The shared governance stores, as tools get them: the governance modules read policies, approvals and the ledger there. */
  governance: Governance;
  /**
   * Reads another subgraph's graph for this workspace with the read-only service assertion
   * (peers.ts); absent when the subgraph has no peers configured. A read only reads through it
   * (reads never write: the finance journal takes in payroll's postings in the background,
   * invoices accounting/payroll_pull.ts).
   */
  graph?: PeerGraph;
  /**
   * Runs `work` once for every read of the same operation that asks with the same key (a
   * dashboard's reads reach a subgraph as one operation): a lookup every field needs (the
   * workspace's currency) runs once per operation instead of once per field. Absent outside the composite fields; use {@link onceInRead}.
   */
  once?: <T>(key: string, work: () => Promise<T>) => Promise<T>;
}

/** `ctx.once(key, work)` when the read has an operation to share it with, else `work()`. */
export function onceInRead<T>(ctx: Pick<ReadContext, 'once'>, key: string, work: () => Promise<T>): Promise<T> {
  return ctx.once ? ctx.once(key, work) : work();
}

/** Per GraphQL operation (its context object): key → the promise of the work done once for it. */
const perOperation = new WeakMap<object, Map<string, Promise<unknown>>>();

function onceFor(operation: object): NonNullable<ReadContext['once']> {
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    let done = perOperation.get(operation);
    if (!done) perOperation.set(operation, (done = new Map()));
    let p = done.get(key) as Promise<T> | undefined;
    if (!p) {
      p = work();
      done.set(key, p);
      // A failure is not kept: a later read of the operation tries again.
      p.catch(() => done!.delete(key));
    }
    return p;
  };
}

/** A metric query (specification §2.3; CONTRACT §8). */
export interface MetricQuery {
  metric: string;
  days?: number;
  from?: string;
  to?: string;
  as_of?: string;
  compare?: 'previous_period' | 'previous_year';
  interval?: 'day' | 'week' | 'month';
  horizon?: number;
  limit?: number;
  dimension_key?: string;
  target?: number;
}

/** The agenda window one lane is asked for (the gateway has resolved its defaults). */
export interface AgendaWindow {
  from: string;
  to: string;
  limit: number;
  /** Include entries that fell due before `from` and are still open (receivables, payables). */
  overdue: boolean;
}

/** One agenda entry, whatever lane it came from (specification §2.6). */
export interface AgendaEntry { date: string; kind: string; source: string; title: string; [k: string]: unknown }

export type SourceReader = (query: RecordsQuery, ctx: ReadContext) => Promise<ListAnswer<Record<string, unknown>>>;
export type MetricReader = (query: MetricQuery, ctx: ReadContext) => Promise<Record<string, unknown>>;
export type LaneReader = (window: AgendaWindow, ctx: ReadContext) => Promise<AgendaEntry[]>;

/** What a kanban block asks of a board (specification §2.2 `board`): the pipeline's key (empty: the first) and cards per column. */
export interface BoardQuery { board: string; pipeline?: string; limit?: number }
/** Reads a board: its columns with their first cards, counts and sums (the kanban block's `board_data`). */
export type BoardReader = (query: BoardQuery, ctx: ReadContext) => Promise<Record<string, unknown>>;

/** The composite reads one module answers, by name. */
export interface ModuleReads {
  sources?: Record<string, SourceReader>;
  metrics?: Record<string, MetricReader>;
  agenda?: Record<string, LaneReader>;
  /** Boards (the kanban block's `board_data`), by the kind of board: `pipeline` for the sales pipeline. */
  boards?: Record<string, BoardReader>;
  /**
   * Records sources read only service to service (another subgraph pulling through the graph with the
   * read-only service assertion, e.g. payroll's `payroll_journal` feed that finance takes in). Served by
   * the same records field and guard as `sources`, but not published in the catalog: records.list and
   * canvas blocks offer the specification's sources (§2.5) only.
   */
  feeds?: Record<string, SourceReader>;
  /**
   * Entries this module adds to an agenda lane another module of the same subgraph answers (the
   * `tax` lane carries e-invoicing's compliance warnings). The subgraph's field reads the owner's
   * reader and each part, and merges them as the gateway merges a lane several subgraphs answer
   * ({@link mergeLane}); a part whose module the caller does not read is left out.
   */
  agendaParts?: Record<string, LaneReader>;
}

/** The graph field of a subgraph that answers one kind of composite read. */
export function compositeField(subgraph: string, kind: ReadKind): string {
  return `${subgraph}${kind === 'sources' ? 'Records' : kind === 'metrics' ? 'Metric' : kind === 'boards' ? 'Board' : 'Agenda'}`;
}

/** A subgraph's composite reads, with the module that owns each. */
export interface OwnedReaders {
  sources: Record<string, { module: string; read: SourceReader; feed?: true }>;
  metrics: Record<string, { module: string; read: MetricReader }>;
  /** `parts`: other modules' entries of the same lane (ModuleReads.agendaParts). */
  agenda: Record<string, { module: string; read: LaneReader; parts?: { module: string; read: LaneReader }[] }>;
  boards: Record<string, { module: string; read: BoardReader }>;
}

/**
 * One agenda lane from several answerers, as the gateway merges a lane several subgraphs answer
 * (gateway canvas/routes.ts readAgenda): the lists in order, by date (a stable sort: each
 * answerer's own order kept within a day), within the window's limit.
 */
export function mergeLane(lists: readonly AgendaEntry[][], limit: number): AgendaEntry[] {
  return lists.flat().sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)).slice(0, limit);
}

/** The catalog's routes (field and module of each read) of a subgraph's readers. */
export function readRoutesOf(subgraph: string, readers: OwnedReaders): ReadDeclarations {
  const out: ReadDeclarations = {};
  for (const kind of ['sources', 'metrics', 'agenda', 'boards'] as const) {
    const entries = Object.entries(readers[kind]);
    if (entries.length === 0) continue;
    // A feed is served but not published (ModuleReads.feeds).
    const published = entries.filter(([, r]) => !(r as { feed?: true }).feed);
    if (published.length === 0) continue;
    out[kind] = Object.fromEntries(published.map(([key, r]) => [key, { field: compositeField(subgraph, kind), module: r.module }]));
  }
  return out;
}

/** The SDL of the composite fields a subgraph serves (only the kinds it has readers for). */
export function compositeTypeDefs(subgraph: string, readers: OwnedReaders): string {
  const fields: string[] = [];
  if (Object.keys(readers.sources).length) fields.push(`  """records.list for the sources ${Object.keys(readers.sources).join(', ')}: query is a records source object (specification §2.5); answer {source, rows, total?, next_cursor?}."""\n  ${compositeField(subgraph, 'sources')}(query: JSON!): JSON!`);
  if (Object.keys(readers.metrics).length) fields.push(`  """metrics.query for ${Object.keys(readers.metrics).join(', ')}: query is a metric query object (specification §2.3); answer as CONTRACT.md §8."""\n  ${compositeField(subgraph, 'metrics')}(query: JSON!): JSON!`);
  if (Object.keys(readers.agenda).length) fields.push(`  """The agenda lanes ${Object.keys(readers.agenda).join(', ')} (specification §2.6): window {from, to, limit, overdue}; answer a list of entries."""\n  ${compositeField(subgraph, 'agenda')}(lane: String!, window: JSON!): JSON!`);
  if (Object.keys(readers.boards ?? {}).length) fields.push(`  """The kanban boards ${Object.keys(readers.boards).join(', ')} (specification §2.2 \`board\`): query {board, pipeline?, limit?}; answer the board's columns with their cards, counts and sums."""\n  ${compositeField(subgraph, 'boards')}(query: JSON!): JSON!`);
  return fields.length ? `extend type Query {\n${fields.join('\n')}\n}\n` : '';
}

// Compiled at a process's first composite read, not at import (ajv's code generation is start-up CPU).
const compositeAjv = lazyAjv();

const validateBoard = lazyValidator(compositeAjv, {
  type: 'object', additionalProperties: false, required: ['board'],
  properties: { board: { type: 'string', minLength: 1, maxLength: 64 }, pipeline: { type: 'string', maxLength: 64 }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
});

const validateWindow = lazyValidator(compositeAjv, {
  type: 'object', additionalProperties: false, required: ['from', 'to', 'limit'],
  properties: { from: DATE_SCHEMA, to: DATE_SCHEMA, limit: { type: 'integer', minimum: 1, maximum: 400 }, overdue: { type: 'boolean' } },
});

/**
 * The module whose read reach a composite field needs for this call: the owner of the source,
 * metric or lane asked for; for a name this subgraph does not answer, its first module (the
 * field then refuses the name).
 */
export function compositeGuard(readers: OwnedReaders, kind: ReadKind, fallback: string): (args: any) => string {
  return (args) => {
    const key = kind === 'sources' ? args?.query?.source : kind === 'metrics' ? args?.query?.metric : kind === 'boards' ? args?.query?.board : args?.lane;
    return typeof key === 'string' && Object.hasOwn(readers[kind], key) ? readers[kind][key].module : fallback;
  };
}

type Ctx = { db: Connection; workspace: string; principal: Principal };

/** The resolvers of the composite fields: shape checked, then the reader of the name asked for. */
export function compositeResolvers(subgraph: string, readers: OwnedReaders, governance: Governance, peers?: PeerConfig, readsModule: (principal: Principal, module: string) => boolean = () => true): Record<string, (parent: unknown, args: any, ctx: Ctx) => Promise<unknown>> {
  const out: Record<string, (parent: unknown, args: any, ctx: Ctx) => Promise<unknown>> = {};
  const context = (ctx: Ctx): ReadContext => ({
    db: ctx.db, workspace: ctx.workspace, principal: ctx.principal, now: new Date(), governance, once: onceFor(ctx), ...(peers ? { graph: peerGraph(subgraph, peers, ctx.workspace) } : {}),
  });
  if (Object.keys(readers.sources).length) {
    out[compositeField(subgraph, 'sources')] = async (_p, args, ctx) => {
      validateRecordsQuery(args.query);
      const q = args.query as RecordsQuery;
      const reader = Object.hasOwn(readers.sources, q.source) ? readers.sources[q.source] : undefined;
      if (!reader) throw new CuadraError('invalid_input', `The ${subgraph} subgraph does not answer the source "${q.source}".`, { field: '/source' });
      return { source: q.source, ...(await reader.read(q, context(ctx))) };
    };
  }
  if (Object.keys(readers.metrics).length) {
    out[compositeField(subgraph, 'metrics')] = async (_p, args, ctx) => {
      validateMetricQuery(args.query);
      const q = args.query as MetricQuery;
      const reader = Object.hasOwn(readers.metrics, q.metric) ? readers.metrics[q.metric] : undefined;
      if (!reader) throw new CuadraError('invalid_input', `The ${subgraph} subgraph does not answer the metric "${q.metric}".`, { field: '/metric' });
      return reader.read(q, context(ctx));
    };
  }
  if (Object.keys(readers.boards ?? {}).length) {
    out[compositeField(subgraph, 'boards')] = async (_p, args, ctx) => {
      validateBoard(args.query);
      const q = args.query as BoardQuery;
      const reader = Object.hasOwn(readers.boards, q.board) ? readers.boards[q.board] : undefined;
      if (!reader) throw new CuadraError('invalid_input', `The ${subgraph} subgraph does not answer the board "${q.board}".`, { field: '/board' });
      return reader.read(q, context(ctx));
    };
  }
  if (Object.keys(readers.agenda).length) {
    out[compositeField(subgraph, 'agenda')] = async (_p, args, ctx) => {
      validateWindow(args.window);
      const w = args.window as { from: string; to: string; limit: number; overdue?: boolean };
      if (w.to < w.from || daysBetween(w.from, w.to) > 400) throw new CuadraError('invalid_input', 'The agenda window runs forwards and is at most 400 days.', { field: '/to' });
      const reader = Object.hasOwn(readers.agenda, args.lane) ? readers.agenda[args.lane] : undefined;
      if (!reader) throw new CuadraError('invalid_input', `The ${subgraph} subgraph does not answer the agenda lane "${args.lane}".`, { field: '/sources' });
      const window = { from: w.from, to: w.to, limit: w.limit, overdue: w.overdue ?? true };
      if (!reader.parts?.length) return reader.read(window, context(ctx));
      // The owner's reader is guarded by the field; a part the caller may not read (its module out of reach) is left out.
      const parts = reader.parts.filter((p) => readsModule(ctx.principal, p.module));
      const read = context(ctx);
      return mergeLane(await Promise.all([reader, ...parts].map((r) => r.read(window, read))), window.limit);
    };
  }
  return out;
}

/** A records source read from one positioned collection, declared as data ({@link defineSource}). */
export interface SourceSpec<D> {
  model: (db: Connection) => Model<any>;
  /** The paging series when the collection holds several (quotes and sales orders). */
  series?: SeriesOptions;
  /** Whether a document matches a lower-cased search term. */
  search: (doc: D, needle: string) => boolean;
  /** `kind` values: the fields a document of that kind has, or a test. Absent: kind is refused. */
  kinds?: Record<string, Record<string, unknown> | ((doc: D) => boolean)>;
  /** Status values of the source's own vocabulary; absent: status is ignored (specification §2.5). */
  statuses?: readonly string[];
  row: (doc: D) => Record<string, unknown>;
  /** The total of a filtered page when counts kept on write know it (rollups); null: none. */
  total?: (query: RecordsQuery, ctx: ReadContext) => Promise<number | null>;
}

/** Whether a document has the fields' values (dotted paths allowed). */
function hasFields(doc: Record<string, unknown>, fields: Record<string, unknown>): boolean {
  for (const [key, want] of Object.entries(fields)) {
    const have = key.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], doc);
    if (have !== want) return false;
  }
  return true;
}

/** A case-insensitive search of the lower-cased text fields named (for {@link SourceSpec.search}). */
export function searchIn<D>(...fields: (keyof D & string)[]): (doc: D, needle: string) => boolean {
  return (doc, needle) => fields.some((f) => containsText((doc as Record<string, unknown>)[f], needle));
}

/**
 * A records source from one collection: newest first, one bounded page by cursor (CONTRACT §9);
 * `kind` and `status` in the source's vocabulary (an unknown value is `invalid_input` at /kind or
 * /status), `search` through the spec's test; `total` without filters from the list counter, with
 * filters only when the spec's `total` knows it.
 */
export function defineSource<D>(spec: SourceSpec<D>): SourceReader {
  return async (q, ctx) => {
    const limit = Math.min(Math.max(Math.trunc(q.limit ?? 8), 1), 100);
    const tests: ((doc: D) => boolean)[] = [];
    if (q.kind) {
      const kind = spec.kinds && Object.hasOwn(spec.kinds, q.kind) ? spec.kinds[q.kind] : undefined;
      if (!kind) throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of ${q.source}${spec.kinds ? ` (${Object.keys(spec.kinds).join(', ')})` : ''}.`, { field: '/kind' });
      tests.push(typeof kind === 'function' ? kind : (doc) => hasFields(doc as Record<string, unknown>, kind));
    }
    if (q.status && spec.statuses) {
      if (!spec.statuses.includes(q.status)) throw new CuadraError('invalid_input', `"${q.status}" is not a status of ${q.source} (${spec.statuses.join(', ')}).`, { field: '/status' });
      const status = q.status;
      tests.push((doc) => (doc as { status?: unknown }).status === status);
    }
    const text = q.search?.toLowerCase();
    if (text) tests.push((doc) => spec.search(doc, text));
    const match = tests.length ? (doc: D) => tests.every((t) => t(doc)) : undefined;
    const page = await listNewestFirst<D, Record<string, unknown>>(spec.model(ctx.db), { workspace: ctx.workspace, ...spec.series, cursor: q.cursor, limit, match, searchTerm: text }, spec.row);
    if (match && spec.total) {
      const total = await spec.total(q, ctx);
      if (total !== null) page.total = total;
    }
    return page;
  };
}
