import { DATE_SCHEMA, METRIC_QUERY_DEPENDENCIES, METRIC_QUERY_FIELDS, RECORDS_QUERY_FIELDS, TOOL_NAME, type MetricQuery, type RecordsQuery } from '@cuadra/shared';

/**
 * The canvas block schema of specification §2.2–2.9 (CONTRACT.md §8) as JSON Schema 2020-12:
 * the one source the save and patch tools' input schemas, `metrics.query`, `records.list`,
 * OpenAPI and MCP all read. Rules JSON Schema cannot say (cross references) are in `rules.ts`.
 */

/** Leaf block types (specification §2.2, plus `result`: CONTRACT.md §8). */
export const LEAF_TYPES = ['stats', 'chart', 'table', 'text', 'records', 'detail', 'actions', 'form', 'button', 'toggle', 'profile', 'kanban', 'agenda', 'event', 'callout', 'heading', 'divider', 'image', 'params', 'result'] as const;
/** Container block types: the only ones with `children`. */
export const CONTAINER_TYPES = ['row', 'stack', 'tabs', 'section'] as const;
export const BLOCK_TYPES = [...LEAF_TYPES, ...CONTAINER_TYPES] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

/** The 28 metrics of specification §2.3. */
export const METRICS = [
  'revenue', 'expenses', 'cashflow', 'profitability', 'ar_outstanding', 'ap_outstanding', 'invoices_status', 'bills_status', 'agent_runs', 'activity',
  'llm_usage', 'approvals_pending', 'top_customers', 'top_vendors', 'revenue_forecast', 'expenses_forecast', 'cashflow_forecast', 'cash_projection',
  'trial_balance', 'inventory_value', 'assets_summary', 'bank_reconciliation', 'payroll_employees', 'crm_pipeline', 'balance_sheet', 'income_statement',
  'ar_aging', 'ap_aging',
] as const;
/** A workspace's saved metric. */
export const SAVED_METRIC = '^saved:[a-z0-9_][a-z0-9_-]{0,63}$';

/** The records sources of specification §2.5 (56 names). */
export const SPEC_SOURCES = [
  'invoices', 'bills', 'parties', 'items', 'quotes', 'sales_orders', 'rentals', 'purchase_orders', 'employees', 'assets', 'bank_transactions', 'warehouses',
  'stock_levels', 'stock_movements', 'inventory_counts', 'payroll_runs', 'payslips', 'payroll_novelties', 'payroll_parameters', 'payment_runs',
  'journal_entries', 'accounts', 'agent_runs', 'crm_deals', 'members', 'roles', 'policies', 'connections', 'mcp_servers', 'email_accounts',
  'calendar_accounts', 'connected_calendars', 'connected_calendar_events', 'marketing_ad_accounts', 'email_templates', 'email_rows', 'email_campaigns',
  'categorization_rules', 'documents', 'calendar_events', 'projects', 'project_tasks', 'project_columns', 'agents', 'tags', 'tag_dimensions',
  'crm_pipelines', 'crm_stages', 'crm_fields', 'payments', 'banks', 'plans', 'ai_models', 'payment_formats', 'booking_types', 'bookings',
] as const;

/** Records sources of Cuadra's own beyond §2.5, each named in CHANGELOG: `subscriptions` (plans' subscribers and their dunning state, issue 38). */
export const OWN_SOURCES = ['subscriptions'] as const;
/** Every records source a block may name. */
export const SOURCES = [...SPEC_SOURCES, ...OWN_SOURCES] as const;

export const EVENT_KINDS = ['legal', 'tax', 'compliance', 'deadline', 'meeting', 'reminder', 'event'] as const;
export const AGENDA_LANES = ['events', 'tax', 'receivables', 'payables', 'recurring', 'tasks'] as const;
export const ICONS = ['plus', 'check', 'x', 'play', 'send', 'download', 'upload', 'trash', 'pencil', 'eye', 'refresh', 'search', 'filter', 'calendar', 'user', 'users', 'file', 'mail', 'link', 'settings', 'alert', 'info', 'star', 'arrow-right', 'clock', 'lock', 'copy', 'printer', 'money', 'package'] as const;
export const ACTION_VARIANTS = ['default', 'secondary', 'outline', 'ghost', 'destructive', 'link'] as const;
export const PARAM_TYPES = ['text', 'search', 'number', 'date', 'select', 'toggle', 'record'] as const;
/** Input targets per block kind (specification §2.2 `inputs`); `result` takes any tool argument. */
export const RECORDS_TARGETS = ['ref', 'search', 'status', 'kind', 'limit'] as const;
export const METRIC_TARGETS = ['from', 'to', 'days', 'interval', 'limit', 'dimension_key', 'horizon'] as const;
/** Block types whose data is a metric query (targets: METRIC_TARGETS). */
export const METRIC_BLOCKS = ['chart', 'table', 'stats'] as const;
/** Block types whose data is a records source (targets: RECORDS_TARGETS). */
export const RECORDS_BLOCKS = ['records', 'detail'] as const;
/** Block types a row or bucket click makes a selection on, when they carry a `key`. */
export const SELECTOR_TYPES = ['records', 'table', 'chart'] as const;

/** `kind` vocabularies per source (specification §2.5); `true`: any movement type. Sources absent here take no kind. */
export const SOURCE_KINDS: Record<string, readonly string[] | true> = {
  parties: ['customer', 'vendor', 'both'],
  items: ['product', 'service'],
  invoices: ['invoice', 'credit_note'],
  bills: ['invoice', 'credit_note'],
  stock_movements: true,
  calendar_events: EVENT_KINDS,
  payments: ['incoming', 'outgoing'],
  crm_fields: ['deal', 'party'],
};
/** Sources with a parent scope `ref` (specification §2.5). */
export const REF_SOURCES = ['payslips', 'payroll_parameters', 'crm_deals', 'crm_stages', 'project_tasks', 'project_columns', 'tags'] as const;

const DATE = DATE_SCHEMA;
const NAME = { type: 'string', minLength: 1, maxLength: 200 } as const;
const TEXT = { type: 'string', maxLength: 2000 } as const;

/** Specification §2.3: the metric query object. */
export const metricQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['metric'],
  properties: {
    metric: { anyOf: [{ enum: [...METRICS] }, { type: 'string', pattern: SAVED_METRIC }] },
    ...METRIC_QUERY_FIELDS,
  },
  dependentRequired: METRIC_QUERY_DEPENDENCIES,
} as const;

/** Specification §2.5: the records source object, with each source's kind and ref rules. */
export const recordsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: {
    source: { enum: [...SOURCES] },
    ...RECORDS_QUERY_FIELDS,
  },
  allOf: [
    ...Object.entries(SOURCE_KINDS).filter(([, kinds]) => kinds !== true).map(([source, kinds]) => ({
      if: { properties: { source: { const: source } }, required: ['source'] },
      then: { properties: { kind: { enum: [...(kinds as readonly string[])] } } },
    })),
    {
      if: { properties: { source: { enum: SOURCES.filter((s) => !(s in SOURCE_KINDS)) } }, required: ['source'] },
      then: { properties: { kind: false } },
    },
    {
      if: { properties: { source: { enum: SOURCES.filter((s) => !(REF_SOURCES as readonly string[]).includes(s)) } }, required: ['source'] },
      then: { properties: { ref: false } },
    },
    { if: { properties: { source: { const: 'payroll_parameters' } }, required: ['source'] }, then: { properties: { ref: { type: 'string', pattern: '^\\d{4}$' } } } },
  ],
} as const;

const statCard = {
  type: 'object',
  additionalProperties: false,
  required: ['label'],
  properties: {
    label: { type: 'string', minLength: 1, maxLength: 200 },
    query: { $ref: '#/$defs/metric_query' },
    stat: { type: 'string', minLength: 1, maxLength: 64 },
    format: { enum: ['money', 'number'] },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    polarity: { type: 'string', maxLength: 32 },
    value: { type: 'number' },
    previous: { type: 'number' },
    target: { type: 'number' },
    change_bps: { type: 'number' },
    spark: { type: 'array', maxItems: 400, items: { type: 'number' } },
    compare: { type: 'string', maxLength: 64 },
    compare_from: { type: 'string', maxLength: 64 },
    compare_to: { type: 'string', maxLength: 64 },
  },
} as const;

const paramControl = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: {
    key: { type: 'string', minLength: 1, maxLength: 64 },
    type: { enum: [...PARAM_TYPES] },
    label: NAME,
    help: TEXT,
    placeholder: NAME,
    default: { type: 'string', maxLength: 500 },
    required: { type: 'boolean' },
    min: { type: 'number' },
    max: { type: 'number' },
    pattern: { type: 'string', format: 'regex', maxLength: 500 },
    not_before: { type: 'string', minLength: 1, maxLength: 64 },
    source: { enum: [...SOURCES] },
    options: {
      type: 'array', minItems: 1, maxItems: 200,
      items: { type: 'object', additionalProperties: false, required: ['value'], properties: { value: { type: 'string', minLength: 1, maxLength: 200 }, label: NAME } },
    },
  },
  allOf: [
    // Each field belongs to one control type; `type` defaults to text.
    { if: { properties: { type: { const: 'number' } }, required: ['type'] }, else: { properties: { min: false, max: false } } },
    { if: { properties: { type: { enum: ['number', 'date', 'select', 'toggle', 'record'] } }, required: ['type'] }, then: { properties: { pattern: false } } },
    { if: { properties: { type: { const: 'date' } }, required: ['type'] }, else: { properties: { not_before: false } } },
    { if: { properties: { type: { const: 'record' } }, required: ['type'] }, then: { properties: { source: true }, required: ['source'] }, else: { properties: { source: false } } },
    { if: { properties: { type: { const: 'select' } }, required: ['type'] }, then: { properties: { options: true }, required: ['options'] }, else: { properties: { options: false } } },
  ],
} as const;

const action = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tool: { type: 'string', pattern: TOOL_NAME.source, maxLength: 120 },
    href: { type: 'string', pattern: '^/(?!/)[^\\s]*$', maxLength: 500 },
    label: NAME,
    description: TEXT,
    risk: { type: 'string', maxLength: 32 },
    icon: { enum: [...ICONS] },
    variant: { enum: [...ACTION_VARIANTS] },
    values: { type: 'object' },
    input_schema: true,
    prompt: { type: 'boolean' },
    confirm: { type: 'string', minLength: 1, maxLength: 500 },
    field: { type: 'string', minLength: 1, maxLength: 64 },
  },
  allOf: [
    // tool xor href: with a tool there is no href; without an href there must be a tool.
    { if: { properties: { tool: true }, required: ['tool'] }, then: { properties: { href: false } } },
    { if: { not: { properties: { href: true }, required: ['href'] } }, then: { properties: { tool: true }, required: ['tool'] } },
  ],
} as const;

const input = {
  type: 'object',
  additionalProperties: false,
  required: ['target'],
  properties: {
    target: { type: 'string', minLength: 1, maxLength: 64 },
    block: { type: 'string', minLength: 1, maxLength: 64 },
    field: { type: 'string', minLength: 1, maxLength: 64 },
    param: { type: 'string', minLength: 1, maxLength: 64 },
  },
  dependentRequired: { field: ['block'] },
} as const;

/** `field: false` for the block types a field does not belong to. */
function only(field: string, types: readonly string[]): Record<string, unknown> {
  return { if: { properties: { type: { enum: BLOCK_TYPES.filter((t) => !types.includes(t)) } }, required: ['type'] }, then: { properties: { [field]: false } } };
}
function when(type: string | readonly string[], then: Record<string, unknown>): Record<string, unknown> {
  return { if: { properties: { type: typeof type === 'string' ? { const: type } : { enum: [...type] } }, required: ['type'] }, then };
}

/**
 * A reference to the block definition, with its `$ref` typed as any string: the block tree is
 * recursive, which json-schema-to-ts cannot infer, so the tools taking blocks see them as unknown
 * and take them as {@link Block} through {@link validatedBlocks} (ajv has checked them by then).
 */
const BLOCK_REF: { readonly $ref: string } = { $ref: '#/$defs/block' };

/** One canvas block (specification §2.2); `children` are blocks of the same variant. */
const block = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { enum: [...BLOCK_TYPES] },
    title: { type: 'string', maxLength: 200 },
    span: { type: 'integer', minimum: 1, maximum: 12 },
    key: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    children: { type: 'array', maxItems: 100, items: BLOCK_REF },
    markdown: { type: 'string', maxLength: 20000 },
    variant: { type: 'string' },
    url: { type: 'string', maxLength: 200000, pattern: '^(https://[^\\s]+|data:[^\\s]+)$' },
    chart: { enum: ['line', 'area', 'bar', 'pie'] },
    series: { type: 'array', maxItems: 12, items: { type: 'string', minLength: 1, maxLength: 64 } },
    live: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', pattern: '^[a-z0-9_]+$', maxLength: 64 } },
    deferred: { type: 'boolean' },
    data: true, agenda_data: true, board_data: true, event_data: true, records_data: true, result_data: true, profile: true,
    query: { $ref: '#/$defs/metric_query' },
    items: { type: 'array', minItems: 1, maxItems: 24, items: statCard },
    records: { $ref: '#/$defs/records_query' },
    result: {
      type: 'object', additionalProperties: false, required: ['tool'],
      properties: { tool: { type: 'string', minLength: 1, maxLength: 120, pattern: TOOL_NAME.source }, values: { type: 'object' } },
    },
    board: {
      type: 'object', additionalProperties: false,
      properties: { pipeline: { type: 'string', maxLength: 64 }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
    },
    agenda: {
      type: 'object', additionalProperties: false,
      properties: {
        from: DATE, to: DATE,
        days: { type: 'integer', minimum: 1, maximum: 400 },
        kinds: { type: 'array', uniqueItems: true, items: { enum: [...EVENT_KINDS] } },
        sources: { type: 'array', uniqueItems: true, items: { enum: [...AGENDA_LANES] } },
        limit: { type: 'integer', minimum: 1, maximum: 400 },
        overdue: { type: 'boolean' },
      },
    },
    event: {
      type: 'object', additionalProperties: false,
      properties: {
        event_id: { type: 'string', minLength: 1, maxLength: 64 },
        kind: { enum: [...EVENT_KINDS] },
        source: { enum: [...AGENDA_LANES] },
        horizon: { type: 'integer', minimum: 1, maximum: 400 },
      },
      // A pinned event is one stored event: following rules do not apply to it.
      if: { properties: { event_id: true }, required: ['event_id'] }, then: { properties: { kind: false, source: false, horizon: false } },
    },
    bind: {
      type: 'object', additionalProperties: false, required: ['block'],
      properties: {
        block: { type: 'string', minLength: 1, maxLength: 64 },
        field: { type: 'string', minLength: 1, maxLength: 64 },
        param: { enum: ['ref', 'search', 'status', 'kind'] },
      },
    },
    inputs: { type: 'array', maxItems: 20, items: input },
    params: { type: 'array', minItems: 1, maxItems: 20, items: paramControl },
    actions: { type: 'array', minItems: 1, maxItems: 8, items: action },
  },
  allOf: [
    only('children', CONTAINER_TYPES),
    only('markdown', ['text', 'callout']),
    only('url', ['image']),
    only('chart', ['chart']),
    only('query', ['chart', 'table']),
    only('items', ['stats']),
    only('records', RECORDS_BLOCKS),
    only('result', ['result']),
    only('board', ['kanban']),
    only('agenda', ['agenda']),
    only('event', ['event']),
    only('params', ['params']),
    only('actions', ['actions', 'form', 'button', 'toggle']),
    only('variant', ['callout', 'heading', 'section']),
    only('bind', [...RECORDS_BLOCKS, 'result']),
    only('inputs', [...RECORDS_BLOCKS, ...METRIC_BLOCKS, 'result']),
    when('callout', { properties: { variant: { enum: ['info', 'success', 'warning', 'danger'] } } }),
    when('heading', { properties: { variant: { enum: ['h2', 'h3'] } } }),
    when('section', { properties: { variant: { enum: ['collapsed'] } } }),
    when('actions', { properties: { actions: true }, required: ['actions'] }),
    when('form', { required: ['actions'], properties: { actions: { type: 'array', maxItems: 1 } } }),
    when('params', { properties: { params: true }, required: ['params'] }),
    when(RECORDS_BLOCKS, { properties: { inputs: { type: 'array', items: { type: 'object', properties: { target: { enum: [...RECORDS_TARGETS] } } } } } }),
    when(METRIC_BLOCKS, { properties: { inputs: { type: 'array', items: { type: 'object', properties: { target: { enum: [...METRIC_TARGETS] } } } } } }),
  ],
} as const;

/** Definitions every dashboard schema carries (one copy per tool schema, so each stands alone in OpenAPI and MCP). */
export const canvasDefs = { block, metric_query: metricQuerySchema, records_query: recordsQuerySchema } as const;

const blocks = { type: 'array', maxItems: 200, items: BLOCK_REF } as const;

/**
 * Each tool schema is its own JSON Schema resource (`$id`), so its `#/$defs/…` references resolve
 * inside it wherever it is embedded (an OpenAPI document, an MCP tools/list answer).
 */
const toolSchemaId = (tool: string) => `urn:cuadra:tool:${tool}:input`;

/** Input of `dashboards.save`. */
export const saveInputSchema = {
  $id: toolSchemaId('dashboards.save'),
  type: 'object',
  additionalProperties: false,
  required: ['title', 'blocks'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    key: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
    blocks,
  },
  $defs: canvasDefs,
} as const;

/** Input of `dashboards.patch`: the fields given replace the stored ones. */
export const patchInputSchema = {
  $id: toolSchemaId('dashboards.patch'),
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 64 },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    blocks,
  },
  $defs: canvasDefs,
} as const;

const values = {
  type: 'object',
  additionalProperties: false,
  properties: {
    params: { type: 'object', maxProperties: 50, additionalProperties: { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] } },
    selections: { type: 'object', maxProperties: 50, additionalProperties: { type: 'object', maxProperties: 100 } },
  },
} as const;

/** Input of `dashboards.render`: a stored dashboard or blocks given inline, and the viewer's values. */
export const renderInputSchema = {
  $id: toolSchemaId('dashboards.render'),
  type: 'object',
  additionalProperties: false,
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 64 },
    blocks,
    values,
  },
  // One of the two: a stored dashboard or inline blocks.
  if: { properties: { id: true }, required: ['id'] }, then: { properties: { blocks: false } }, else: { properties: { blocks: true }, required: ['blocks'] },
  $defs: canvasDefs,
} as const;

/** Input of `metrics.query`: the metric query object itself. */
export const metricsQueryInputSchema = metricQuerySchema;
/** Input of `records.list`: the records source object itself. */
export const recordsListInputSchema = recordsQuerySchema;

/**
 * Blocks of a tool input, which ajv has checked against the block schema before the handler runs:
 * the one place their static type is asserted (see BLOCK_REF for why it is not inferred).
 */
export function validatedBlocks(blocks: readonly unknown[]): Block[] {
  return blocks as Block[];
}

/** A canvas block as stored (the schema is the runtime truth). */
export interface Block {
  type: BlockType;
  title?: string;
  span?: number;
  key?: string;
  children?: Block[];
  markdown?: string;
  variant?: string;
  url?: string;
  chart?: 'line' | 'area' | 'bar' | 'pie';
  series?: string[];
  live?: string[];
  query?: MetricQuery;
  items?: StatCard[];
  records?: RecordsQuery;
  result?: { tool: string; values?: Record<string, unknown> };
  board?: { pipeline?: string; limit?: number };
  agenda?: { from?: string; to?: string; days?: number; kinds?: string[]; sources?: string[]; limit?: number; overdue?: boolean };
  event?: { event_id?: string; kind?: string; source?: string; horizon?: number };
  bind?: { block: string; field?: string; param?: 'ref' | 'search' | 'status' | 'kind' };
  inputs?: { target: string; block?: string; field?: string; param?: string }[];
  params?: ParamControl[];
  actions?: Action[];
  [payload: string]: unknown;
}
/** The two read queries, written once in the shared library. */
export type { MetricQuery, RecordsQuery } from '@cuadra/shared';
export interface StatCard { label: string; query?: MetricQuery; stat?: string; format?: string; currency?: string; value?: number; previous?: number; change_bps?: number; spark?: number[]; target?: number; [k: string]: unknown }
export interface ParamControl { key: string; type?: (typeof PARAM_TYPES)[number]; label?: string; default?: string; required?: boolean; not_before?: string; source?: string; options?: { value: string; label?: string }[]; [k: string]: unknown }
export interface Action { tool?: string; href?: string; label?: string; icon?: string; variant?: string; values?: Record<string, unknown>; prompt?: boolean; confirm?: string; field?: string; [k: string]: unknown }
