import { addDays, isCuadraError, type Principal } from '@cuadra/shared';
import { batchGraphReads } from './batch.ts';
import { listRecords, queryMetric, readAgenda, readBoard, type GraphRunner, type LocalSourceReader, type SavedMetricReader } from './routes.ts';
import { AGENDA_LANES, BLOCK_TYPES, METRIC_BLOCKS, RECORDS_BLOCKS, type Block, type MetricQuery, type ParamControl, type RecordsQuery } from './schema.ts';
import { walkBlocks } from './rules.ts';

/** What the viewer has chosen: params control values and selector selections (CONTRACT.md §8). */
export interface RenderValues {
  params?: Record<string, string | number | boolean | null>;
  selections?: Record<string, Record<string, unknown>>;
}

/** What rendering needs: the graph as the caller, and a way to run a read tool as the caller. */
export interface RenderDeps {
  run: GraphRunner;
  /** Reads the records sources the gateway answers itself. */
  readLocal: LocalSourceReader;
  principal: Principal;
  /** Runs a read tool through the pipeline as the caller; answers its output. */
  invokeRead: (tool: string, input: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Today, YYYY-MM-DD (the agenda's default start). */
  today: string;
  /** Now (default the clock's): an event block following a lane shows what has not ended by then. */
  now?: Date;
  /** Reads the workspace's saved metrics, for blocks naming `saved:<key>`. */
  saved?: SavedMetricReader;
}

/** Default span on the twelve-column grid (specification §2.2). */
export function defaultSpan(type: string): number {
  return ['chart', 'table', 'records', 'detail'].includes(type) ? 6 : 12;
}

const NUMERIC_TARGETS = new Set(['days', 'limit', 'horizon']);

function blockError(err: unknown): { code: string; error: string } {
  if (isCuadraError(err)) return { code: err.code, error: err.message };
  return { code: 'internal', error: 'This block could not be read; the rest of the dashboard is unaffected.' };
}

const BLOCK_TYPE = { enum: [...BLOCK_TYPES] } as const;
const SPAN = { type: 'integer', minimum: 1, maximum: 12 } as const;

/**
 * JSON Schema of a block {@link renderBlocks} answers: the stored block with its span filled in,
 * `waiting` or `error` when it could not be read, and its payload (`data`, `records_data`,
 * `agenda_data`, `event_data`, `result_data`, stat cards' values) filled from the reads. The
 * payloads are the answers of metrics.query, records.list, the agenda or a read tool, or what the
 * author stored in them; they and the children (rendered blocks again) stay open here.
 */
export const RENDERED_BLOCK_SCHEMA = {
  type: 'object', required: ['type', 'span'],
  properties: {
    type: BLOCK_TYPE,
    span: SPAN,
    children: { type: 'array', items: { type: 'object', required: ['type', 'span'], properties: { type: BLOCK_TYPE, span: SPAN } } },
    items: { type: 'array', items: { type: 'object', required: ['label'], properties: { label: { type: 'string' } } } },
    waiting: { const: true },
    error: { type: 'object', additionalProperties: false, required: ['code', 'error'], properties: { code: { type: 'string' }, error: { type: 'string' } } },
  },
} as const;

/**
 * `dashboards.render`: the same block tree with each block's payload filled (CONTRACT.md §8),
 * every data block read concurrently through the composed graph. `bind`, `inputs` and `params`
 * apply the given values; a block waiting for a required param or a selection gets
 * `waiting: true`; a block whose data fails gets `error` and the rest still render.
 */
export async function renderBlocks(blocks: readonly Block[], values: RenderValues, deps: RenderDeps): Promise<Block[]> {
  const controls = new Map<string, ParamControl>();
  for (const { block } of walkBlocks(blocks)) for (const c of block.params ?? []) controls.set(c.key, c);
  const params = values.params ?? {};
  const selections = values.selections ?? {};
  // One read per distinct query in a render: a stat card and a chart over the same metric share it.
  const reads = new Map<string, Promise<Record<string, unknown>>>();
  const once = (kind: string, query: object, read: () => Promise<Record<string, unknown>>) => {
    const id = `${kind}:${JSON.stringify(query)}`;
    if (!reads.has(id)) reads.set(id, read());
    return reads.get(id)!;
  };
  // The reads a render starts together go to the graph as one operation (one request per subgraph).
  const run = batchGraphReads(deps.run);
  const metric = (q: MetricQuery) => once('metric', q, () => queryMetric(run, deps.principal, q, deps.saved));
  const recordsOf = (q: RecordsQuery) => once('records', q, () => listRecords(run, deps.readLocal, deps.principal, q));
  const board = (q: { pipeline?: string; limit?: number }) => once('board', q, () => readBoard(run, deps.principal, q));

  /** A param's value: the viewer's, else the control's default; `missing` when a required one has none. */
  const paramValue = (key: string): { value?: unknown; missing: boolean } => {
    const given = params[key];
    if (given !== undefined && given !== null && given !== '') return { value: given, missing: false };
    const control = controls.get(key);
    if (control?.default !== undefined && control.default !== '') return { value: control.default, missing: false };
    return { missing: control?.required === true };
  };

  /** The values a block's bind and inputs add, by target; `waiting` when one it needs is absent. */
  const applied = (block: Block): { set: Record<string, unknown>; waiting: boolean } => {
    const set: Record<string, unknown> = {};
    let waiting = false;
    if (block.bind) {
      const selection = selections[block.bind.block];
      const value = selection?.[block.bind.field ?? 'id'];
      if (value === undefined || value === null || value === '') waiting = true;
      else set[block.bind.param ?? 'ref'] = String(value);
    }
    for (const input of block.inputs ?? []) {
      let value: unknown;
      if (input.block !== undefined) {
        value = selections[input.block]?.[input.field ?? 'id'];
      } else if (input.param !== undefined) {
        const p = paramValue(input.param);
        if (p.missing) waiting = true;
        value = p.value;
      }
      if (value === undefined || value === null || value === '') continue;
      set[input.target] = NUMERIC_TARGETS.has(input.target) && typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    }
    return { set, waiting };
  };

  const renderLeaf = async (block: Block): Promise<Block> => {
    const out: Block = { ...block, span: block.span ?? defaultSpan(block.type) };
    const { set, waiting } = applied(block);
    if (waiting && (block.bind || block.inputs)) return { ...out, waiting: true };
    try {
      if ((METRIC_BLOCKS as readonly string[]).includes(block.type)) {
        if (block.type === 'stats') {
          const failures: unknown[] = [];
          out.items = await Promise.all((block.items ?? []).map(async (card) => {
            if (!card.query) return card;
            const query = withInputs(card.query, set);
            try {
              const data = await metric(query);
              const summary = (data.summary ?? {}) as Record<string, number | undefined>;
              const series = (data.series ?? []) as { value: number }[];
              return {
                ...card, value: summary[card.stat ?? 'value'] ?? summary.value, previous: summary.previous, change_bps: summary.change_bps,
                target: card.target ?? summary.target, spark: series.map((p) => p.value), format: card.format ?? (data.unit === 'money' ? 'money' : 'number'),
                currency: card.currency ?? (data.currency as string | undefined),
              };
            } catch (err) {
              failures.push(err);
              return { ...card, error: blockError(err) };
            }
          }));
          if (failures.length) out.error = blockError(failures[0]);
        } else if (block.query) {
          out.data = await metric(withInputs(block.query, set));
        }
      } else if ((RECORDS_BLOCKS as readonly string[]).includes(block.type) && block.records) {
        const query = { ...block.records, ...set } as RecordsQuery;
        if (block.type === 'detail' && query.limit === undefined) query.limit = 1;
        out.records_data = await recordsOf(query);
      } else if (block.type === 'agenda') {
        const a = block.agenda ?? {};
        const from = a.from ?? deps.today;
        const to = a.to ?? addDays(from, (a.days ?? 30) - 1);
        out.agenda_data = await readAgenda(run, deps.principal, { from, to, limit: a.limit ?? 100, overdue: a.overdue ?? true, kinds: a.kinds, sources: a.sources ?? [...AGENDA_LANES] });
      } else if (block.type === 'event') {
        const e = block.event ?? {};
        if (e.event_id) {
          // Pinned: the event from its records source, shown at its next occurrence (null once none is ahead).
          const answer = (await recordsOf({ source: 'calendar_events', ref: e.event_id })) as { rows?: PinnedEventRow[] };
          const row = answer.rows?.[0];
          const next = row?.next ?? null;
          out.event_data = {
            event: row && next ? { date: next.date, kind: row.kind, source: 'events', title: row.title, event_id: row.id, recurrence_id: next.recurrence_id, status: row.status, all_day: row.all_day, starts_at: next.start, ends_at: next.end, time_zone: row.time_zone } : null,
            pinned: e.event_id,
          };
          return out;
        }
        const agenda = await readAgenda(run, deps.principal, {
          from: deps.today, to: addDays(deps.today, (e.horizon ?? 90) - 1), limit: 400, overdue: false, kinds: e.kind ? [e.kind] : undefined,
          sources: e.source ? [e.source] : [...AGENDA_LANES],
        });
        // What is next: an occurrence of today that already ended is behind, not next (as a pinned event's next occurrence).
        const now = (deps.now ?? new Date()).getTime();
        const ahead = agenda.entries.find((entry) => typeof entry.ends_at !== 'string' || Date.parse(entry.ends_at) > now);
        out.event_data = { event: ahead ?? null, horizon: e.horizon ?? 90, unavailable_lanes: agenda.unavailable_lanes };
      } else if (block.type === 'kanban') {
        out.board_data = await board({ pipeline: block.board?.pipeline, limit: block.board?.limit });
      } else if (block.type === 'result' && block.result) {
        out.result_data = await deps.invokeRead(block.result.tool, { ...(block.result.values ?? {}), ...set });
      }
    } catch (err) {
      out.error = blockError(err);
    }
    return out;
  };

  const renderTree = (list: readonly Block[]): Promise<Block[]> =>
    Promise.all(list.map(async (block) => (block.children ? { ...block, span: block.span ?? defaultSpan(block.type), children: await renderTree(block.children) } : renderLeaf(block))));
  return renderTree(blocks);
}

/** What the `calendar_events` records source answers of one event (subgraphs/projects calendar_events/sources.ts). */
interface PinnedEventRow {
  id: string; title: string; kind: string; status: string; all_day: boolean; time_zone: string;
  next: { start: string; end: string; date: string; recurrence_id: string | null } | null;
}

/** A metric query with a block's inputs applied; from/to given together override days. */
function withInputs(query: MetricQuery, set: Record<string, unknown>): MetricQuery {
  const q = { ...query, ...set } as MetricQuery;
  if ((set.from !== undefined) !== (set.to !== undefined)) {
    // One end alone cannot make a window (specification §2.3): keep the stored window.
    delete (q as Partial<MetricQuery>).from;
    delete (q as Partial<MetricQuery>).to;
    if (query.from) Object.assign(q, { from: query.from, to: query.to });
  }
  return q;
}

/**
 * The blocks that listed `module` in `live` (specification §6): an action of that module on
 * the workspace ledger makes them stale, and only they are re-queried.
 */
export function liveBlocks(blocks: readonly Block[], module: string): { block: Block; pointer: string }[] {
  return [...walkBlocks(blocks)].filter(({ block }) => block.live?.includes(module));
}
