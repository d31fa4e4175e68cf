import { compileValidator, createAjv, isCuadraError } from '@cuadra/shared';
import { describe, expect, it } from 'vitest';
import { readRoutes } from '../src/canvas/routes.ts';
import { checkDashboardRules } from '../src/canvas/rules.ts';
import { BLOCK_TYPES, METRICS, OWN_SOURCES, patchInputSchema, saveInputSchema, SOURCES, SPEC_SOURCES, type Block } from '../src/canvas/schema.ts';

// Compiled once, as the registry does.
const ajv = createAjv();
const validateSave = compileValidator(ajv, saveInputSchema);
const validatePatch = compileValidator(ajv, patchInputSchema);
const TOOLS: Record<string, { risk: string; input_schema?: Record<string, unknown> }> = {
  'invoices.create': { risk: 'write' }, 'parties.create': { risk: 'write' }, 'invoices.list': { risk: 'read' }, 'ledger.verify': { risk: 'read' },
  // A tool with a secret argument, nested too (issue 31, finding 1).
  'payroll.epayroll_configure': { risk: 'write', input_schema: { type: 'object', properties: { nit: { type: 'string' }, software_pin: { type: 'string', writeOnly: true }, bank: { type: 'object', properties: { password: { type: 'string', writeOnly: true } } } } } },
};
const lookup = (name: string) => TOOLS[name];

/** The refusal's field for a dashboard, or null when it is accepted — through both variants. */
function refusalOf(blocks: unknown[]): string | null {
  const fields = [
    () => validateSave({ title: 'T', blocks }),
    () => validatePatch({ id: 'dsh_1', blocks }),
  ].map((validate) => {
    try {
      validate();
      checkDashboardRules(blocks as Block[], lookup);
      return null;
    } catch (err) {
      if (!isCuadraError(err) || err.code !== 'invalid_input') throw err;
      return err.field ?? '';
    }
  });
  expect(fields[1]).toBe(fields[0]);
  return fields[0];
}

type Case = [name: string, blocks: unknown[], field: string | null];
const records = (r: Record<string, unknown>) => [{ type: 'records', records: r }];
const metric = (q: Record<string, unknown>) => [{ type: 'chart', query: q }];
const params = (p: unknown[]) => [{ type: 'params', params: p }];
const actions = (a: unknown[], type = 'actions') => [{ type, actions: a }];
const selector = { type: 'records', key: 'cust', records: { source: 'parties' } };

const cases: Case[] = [
  // §2.2 block: type, additional properties, span and its bounds
  ['only type is required', [{ type: 'divider' }], null],
  ['type is required', [{ title: 'x' }], '/blocks/0/type'],
  ['unknown type', [{ type: 'widget' }], '/blocks/0/type'],
  ['unknown field', [{ type: 'text', colour: 'red' }], '/blocks/0/colour'],
  ['span 1', [{ type: 'text', span: 1 }], null],
  ['span 12', [{ type: 'text', span: 12 }], null],
  ['span 0', [{ type: 'text', span: 0 }], '/blocks/0/span'],
  ['span 13 deep in children', [{ type: 'row', children: [{ type: 'text' }, { type: 'stack', children: [{ type: 'chart', span: 13 }] }] }], '/blocks/0/children/1/children/0/span'],
  ['span not a number', [{ type: 'text', span: '6' }], '/blocks/0/span'],
  // children only on containers, recursively
  ['children on row, stack, tabs, section', [{ type: 'row', children: [{ type: 'stack', children: [{ type: 'tabs', children: [{ type: 'section', children: [{ type: 'text', title: 'tab' }] }] }] }] }], null],
  ['children on a leaf', [{ type: 'text', children: [] }], '/blocks/0/children'],
  ['children on a nested leaf', [{ type: 'row', children: [{ type: 'chart', children: [{ type: 'text' }] }] }], '/blocks/0/children/0/children'],
  ['bad block inside children', [{ type: 'section', children: [{ type: 'text', nope: 1 }] }], '/blocks/0/children/0/nope'],
  // markdown, title, key, series, live, deferred, payloads
  ['markdown on text and callout', [{ type: 'text', markdown: '**x**' }, { type: 'callout', markdown: 'y' }], null],
  ['markdown on chart', [{ type: 'chart', markdown: 'x' }], '/blocks/0/markdown'],
  ['key, series, live, deferred, payloads', [{ type: 'chart', key: 'k1', series: ['value'], live: ['invoices', 'payments'], deferred: true, data: { any: 1 }, query: { metric: 'revenue' } }], null],
  ['live names are module names', [{ type: 'chart', live: ['Invoices!'] }], '/blocks/0/live/0'],
  ['deferred is boolean', [{ type: 'text', deferred: 'yes' }], '/blocks/0/deferred'],
  ['key is a plain name', [{ type: 'records', key: 'a b', records: { source: 'parties' } }], '/blocks/0/key'],
  ['duplicate key', [selector, { type: 'table', key: 'cust' }], '/blocks/1/key'],
  // variant per type
  ['callout variants', ['info', 'success', 'warning', 'danger'].map((variant) => ({ type: 'callout', variant })), null],
  ['callout variant h2', [{ type: 'callout', variant: 'h2' }], '/blocks/0/variant'],
  ['heading variants', [{ type: 'heading', variant: 'h2' }, { type: 'heading', variant: 'h3' }], null],
  ['heading variant h1', [{ type: 'heading', variant: 'h1' }], '/blocks/0/variant'],
  ['section collapsed', [{ type: 'section', variant: 'collapsed', children: [] }], null],
  ['section variant open', [{ type: 'section', variant: 'open', children: [] }], '/blocks/0/variant'],
  ['variant on text', [{ type: 'text', variant: 'info' }], '/blocks/0/variant'],
  // chart enum, url
  ['chart kinds', ['line', 'area', 'bar', 'pie'].map((chart) => ({ type: 'chart', chart })), null],
  ['chart kind donut', [{ type: 'chart', chart: 'donut' }], '/blocks/0/chart'],
  ['chart field on table', [{ type: 'table', chart: 'bar' }], '/blocks/0/chart'],
  ['image https and data:', [{ type: 'image', url: 'https://example.com/a.png', title: 'Logo' }, { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' }], null],
  ['image http', [{ type: 'image', url: 'http://example.com/a.png' }], '/blocks/0/url'],
  ['image javascript:', [{ type: 'image', url: 'javascript:alert(1)' }], '/blocks/0/url'],
  ['url on text', [{ type: 'text', url: 'https://example.com' }], '/blocks/0/url'],
  // §2.3 metric query
  ['every metric', METRICS.map((m) => ({ type: 'chart', query: { metric: m } })), null],
  ['saved metric', metric({ metric: 'saved:margin_by_branch' }), null],
  ['unknown metric', metric({ metric: 'profit' }), '/blocks/0/query/metric'],
  ['metric required', metric({ days: 30 }), '/blocks/0/query/metric'],
  ['days 366', metric({ metric: 'revenue', days: 366 }), null],
  ['days 367', metric({ metric: 'revenue', days: 367 }), '/blocks/0/query/days'],
  ['from and to', metric({ metric: 'revenue', from: '2026-01-01', to: '2026-03-31' }), null],
  ['from without to', metric({ metric: 'revenue', from: '2026-01-01' }), '/blocks/0/query/to'],
  ['to without from', metric({ metric: 'revenue', to: '2026-01-01' }), '/blocks/0/query/from'],
  ['from not YYYY-MM-DD', metric({ metric: 'revenue', from: '01/01/2026', to: '2026-03-31' }), '/blocks/0/query/from'],
  ['as_of', metric({ metric: 'ar_aging', as_of: '2026-02-30' }), '/blocks/0/query/as_of'],
  ['compare', metric({ metric: 'revenue', compare: 'previous_year' }), null],
  ['compare other', metric({ metric: 'revenue', compare: 'last_week' }), '/blocks/0/query/compare'],
  ['interval', metric({ metric: 'revenue', interval: 'month' }), null],
  ['interval year', metric({ metric: 'revenue', interval: 'year' }), '/blocks/0/query/interval'],
  ['horizon 24', metric({ metric: 'cash_projection', horizon: 24 }), null],
  ['horizon 25', metric({ metric: 'cash_projection', horizon: 25 }), '/blocks/0/query/horizon'],
  ['limit 100', metric({ metric: 'top_customers', limit: 100 }), null],
  ['limit 101', metric({ metric: 'top_customers', limit: 101 }), '/blocks/0/query/limit'],
  ['dimension_key and target', metric({ metric: 'profitability', dimension_key: 'branch', target: 1500 }), null],
  ['dimension_key empty', metric({ metric: 'profitability', dimension_key: '' }), '/blocks/0/query/dimension_key'],
  ['target not a number', metric({ metric: 'revenue', target: 'high' }), '/blocks/0/query/target'],
  ['unknown query field', metric({ metric: 'revenue', window: 3 }), '/blocks/0/query/window'],
  ['query on records', [{ type: 'records', query: { metric: 'revenue' } }], '/blocks/0/query'],
  // §2.4 stat cards
  ['stat cards', [{ type: 'stats', items: [{ label: 'Revenue', query: { metric: 'revenue', compare: 'previous_period' }, format: 'money', currency: 'COP', spark: [1, 2], change_bps: 120 }, { label: 'Open', value: 3 }] }], null],
  ['stat card label required', [{ type: 'stats', items: [{ query: { metric: 'revenue' } }] }], '/blocks/0/items/0/label'],
  ['stat card label empty', [{ type: 'stats', items: [{ label: '' }] }], '/blocks/0/items/0/label'],
  ['stat card format', [{ type: 'stats', items: [{ label: 'x', format: 'percent' }] }], '/blocks/0/items/0/format'],
  ['stat card bad query', [{ type: 'stats', items: [{ label: 'x', query: { metric: 'revenue', days: 0 } }] }], '/blocks/0/items/0/query/days'],
  ['items on chart', [{ type: 'chart', items: [{ label: 'x' }] }], '/blocks/0/items'],
  // §2.5 records sources
  ['every listed source', SOURCES.map((source) => ({ type: 'records', records: { source } })), null],
  ['unknown source', records({ source: 'contacts' }), '/blocks/0/records/source'],
  ['source required', records({ limit: 3 }), '/blocks/0/records/source'],
  ['records limit 100', records({ source: 'invoices', limit: 100 }), null],
  ['records limit 101', records({ source: 'invoices', limit: 101 }), '/blocks/0/records/limit'],
  ['parties kind', records({ source: 'parties', kind: 'vendor' }), null],
  ['parties kind product', records({ source: 'parties', kind: 'product' }), '/blocks/0/records/kind'],
  ['invoices credit_note', records({ source: 'invoices', kind: 'credit_note', status: 'posted' }), null],
  ['payments outgoing', records({ source: 'payments', kind: 'outgoing' }), null],
  ['calendar_events tax', records({ source: 'calendar_events', kind: 'tax' }), null],
  ['crm_fields party', records({ source: 'crm_fields', kind: 'party' }), null],
  ['stock_movements any movement type', records({ source: 'stock_movements', kind: 'transfer' }), null],
  ['kind on a source without kinds', records({ source: 'employees', kind: 'x' }), '/blocks/0/records/kind'],
  ['ref on payslips', records({ source: 'payslips', ref: 'prn_1' }), null],
  ['ref year on payroll_parameters', records({ source: 'payroll_parameters', ref: '2026' }), null],
  ['ref not a year on payroll_parameters', records({ source: 'payroll_parameters', ref: 'latest' }), '/blocks/0/records/ref'],
  ['ref on a source without parent', records({ source: 'invoices', ref: 'x' }), '/blocks/0/records/ref'],
  ['search', records({ source: 'parties', search: 'ferre' }), null],
  ['records on detail', [{ type: 'detail', records: { source: 'invoices', limit: 1 } }], null],
  ['records on chart', [{ type: 'chart', records: { source: 'invoices' } }], '/blocks/0/records'],
  // result
  ['result with values', [{ type: 'result', result: { tool: 'invoices.list', values: { limit: 3 } } }], null],
  ['result tool required', [{ type: 'result', result: { values: {} } }], '/blocks/0/result/tool'],
  ['result tool unknown', [{ type: 'result', result: { tool: 'nope.list' } }], '/blocks/0/result/tool'],
  ['result tool not read', [{ type: 'result', result: { tool: 'invoices.create' } }], '/blocks/0/result/tool'],
  // board
  ['board', [{ type: 'kanban', board: { pipeline: '', limit: 100 } }], null],
  ['board limit 101', [{ type: 'kanban', board: { limit: 101 } }], '/blocks/0/board/limit'],
  ['board field', [{ type: 'kanban', board: { stage: 'x' } }], '/blocks/0/board/stage'],
  // §2.6 agenda
  ['empty agenda', [{ type: 'agenda', agenda: {} }], null],
  ['agenda full', [{ type: 'agenda', agenda: { from: '2026-01-01', to: '2027-02-04', kinds: ['tax', 'deadline'], sources: ['tax', 'receivables'], limit: 400, overdue: false } }], null],
  ['agenda window 401 days', [{ type: 'agenda', agenda: { from: '2026-01-01', to: '2027-02-05' } }], '/blocks/0/agenda/to'],
  ['agenda days 401', [{ type: 'agenda', agenda: { days: 401 } }], '/blocks/0/agenda/days'],
  ['agenda limit 401', [{ type: 'agenda', agenda: { limit: 401 } }], '/blocks/0/agenda/limit'],
  ['agenda kind', [{ type: 'agenda', agenda: { kinds: ['party'] } }], '/blocks/0/agenda/kinds/0'],
  ['agenda lane', [{ type: 'agenda', agenda: { sources: ['mail'] } }], '/blocks/0/agenda/sources/0'],
  ['agenda overdue', [{ type: 'agenda', agenda: { overdue: 'no' } }], '/blocks/0/agenda/overdue'],
  ['agenda ends before start', [{ type: 'agenda', agenda: { from: '2026-02-01', to: '2026-01-01' } }], '/blocks/0/agenda/to'],
  // §2.7 event
  ['event pinned', [{ type: 'event', event: { event_id: 'evt_1' } }], null],
  ['event following', [{ type: 'event', event: { kind: 'tax', source: 'tax', horizon: 400 } }], null],
  ['event horizon 401', [{ type: 'event', event: { horizon: 401 } }], '/blocks/0/event/horizon'],
  ['event kind', [{ type: 'event', event: { kind: 'party' } }], '/blocks/0/event/kind'],
  ['event pinned and following', [{ type: 'event', event: { event_id: 'evt_1', horizon: 30 } }], '/blocks/0/event/horizon'],
  // bind
  ['bind to a selector', [selector, { type: 'records', records: { source: 'invoices' }, bind: { block: 'cust', field: 'name', param: 'search' } }], null],
  ['bind block required', [selector, { type: 'records', bind: { field: 'id' } }], '/blocks/1/bind/block'],
  ['bind param', [selector, { type: 'records', bind: { block: 'cust', param: 'limit' } }], '/blocks/1/bind/param'],
  ['bind to a missing selector', [{ type: 'records', bind: { block: 'nobody' } }], '/blocks/0/bind/block'],
  ['bind to a key that is not a selector', [{ type: 'text', key: 'note' }, { type: 'records', bind: { block: 'note' } }], '/blocks/1/bind/block'],
  ['bind on a chart', [selector, { type: 'chart', bind: { block: 'cust' } }], '/blocks/1/bind'],
  // inputs
  ['inputs on records and metrics', [selector, ...params([{ key: 'from', type: 'date' }, { key: 'to', type: 'date' }]),
    { type: 'records', records: { source: 'invoices' }, inputs: [{ target: 'search', block: 'cust', field: 'name' }, { target: 'limit', param: 'from' }] },
    { type: 'chart', query: { metric: 'revenue' }, inputs: [{ target: 'from', param: 'from' }, { target: 'to', param: 'to' }] }], null],
  ['input target required', [selector, { type: 'records', inputs: [{ block: 'cust' }] }], '/blocks/1/inputs/0/target'],
  ['records target days', [selector, { type: 'records', inputs: [{ target: 'days', block: 'cust' }] }], '/blocks/1/inputs/0/target'],
  ['metric target search', [selector, { type: 'chart', inputs: [{ target: 'search', block: 'cust' }] }], '/blocks/1/inputs/0/target'],
  ['result takes any target', [selector, { type: 'result', result: { tool: 'invoices.list' }, inputs: [{ target: 'customer_id', block: 'cust' }] }], null],
  ['field only with block', [...params([{ key: 'p' }]), { type: 'records', inputs: [{ target: 'search', param: 'p', field: 'name' }] }], '/blocks/1/inputs/0/block'],
  ['input block unknown', [{ type: 'records', inputs: [{ target: 'search', block: 'ghost' }] }], '/blocks/0/inputs/0/block'],
  ['input param unknown', [{ type: 'records', inputs: [{ target: 'search', param: 'ghost' }] }], '/blocks/0/inputs/0/param'],
  ['inputs on text', [{ type: 'text', inputs: [{ target: 'search' }] }], '/blocks/0/inputs'],
  // §2.8 params
  ['every control type', params([
    { key: 'q', type: 'text', pattern: '^[a-z]+$', placeholder: 'name' }, { key: 's', type: 'search' }, { key: 'n', type: 'number', min: 1, max: 9 },
    { key: 'd1', type: 'date' }, { key: 'd2', type: 'date', not_before: 'd1', required: true, default: '2026-01-01' },
    { key: 'sel', type: 'select', options: [{ value: 'a', label: 'A' }, { value: 'b' }] }, { key: 't', type: 'toggle' }, { key: 'r', type: 'record', source: 'parties' },
  ]), null],
  ['param key required', params([{ type: 'text' }]), '/blocks/0/params/0/key'],
  ['param type', params([{ key: 'x', type: 'color' }]), '/blocks/0/params/0/type'],
  ['select needs options', params([{ key: 'x', type: 'select' }]), '/blocks/0/params/0/options'],
  ['option value required', params([{ key: 'x', type: 'select', options: [{ label: 'A' }] }]), '/blocks/0/params/0/options/0/value'],
  ['options only for select', params([{ key: 'x', type: 'text', options: [{ value: 'a' }] }]), '/blocks/0/params/0/options'],
  ['min only for number', params([{ key: 'x', type: 'date', min: 1 }]), '/blocks/0/params/0/min'],
  ['pattern is a regular expression', params([{ key: 'x', pattern: '([' }]), '/blocks/0/params/0/pattern'],
  ['pattern not for number', params([{ key: 'x', type: 'number', pattern: '\\d' }]), '/blocks/0/params/0/pattern'],
  ['record needs a source', params([{ key: 'x', type: 'record' }]), '/blocks/0/params/0/source'],
  ['record source listed', params([{ key: 'x', type: 'record', source: 'people' }]), '/blocks/0/params/0/source'],
  ['not_before only for date', params([{ key: 'd', type: 'date' }, { key: 'x', type: 'text', not_before: 'd' }]), '/blocks/0/params/1/not_before'],
  ['not_before names a date param', params([{ key: 'q' }, { key: 'd', type: 'date', not_before: 'q' }]), '/blocks/0/params/1/not_before'],
  ['not_before names nothing', params([{ key: 'd', type: 'date', not_before: 'ghost' }]), '/blocks/0/params/0/not_before'],
  ['params block needs params', [{ type: 'params' }], '/blocks/0/params'],
  ['duplicate param key', [...params([{ key: 'a' }]), ...params([{ key: 'a' }])], '/blocks/1/params/0/key'],
  // §2.9 actions
  ['actions 1 to 8', actions(Array.from({ length: 8 }, () => ({ tool: 'parties.create' }))), null],
  // A dashboard is stored as given and shown to every reader: it never fixes a secret argument.
  ['an action fixing a secret argument', actions([{ tool: 'payroll.epayroll_configure', values: { nit: '900', software_pin: '1234' } }]), '/blocks/0/actions/0/values/software_pin'],
  ['an action fixing a nested secret argument', actions([{ tool: 'payroll.epayroll_configure', values: { bank: { password: 'x' } } }]), '/blocks/0/actions/0/values/bank/password'],
  ['an action fixing only visible arguments of a tool with secrets', actions([{ tool: 'payroll.epayroll_configure', values: { nit: '900' } }]), null],
  ['actions 9', actions(Array.from({ length: 9 }, () => ({ tool: 'parties.create' }))), '/blocks/0/actions'],
  ['actions 0', actions([]), '/blocks/0/actions'],
  ['actions block needs actions', [{ type: 'actions' }], '/blocks/0/actions'],
  ['form with one action', actions([{ tool: 'parties.create', values: { kind: 'customer' }, prompt: true, confirm: 'Create it?' }], 'form'), null],
  ['form with two actions', actions([{ tool: 'parties.create' }, { tool: 'invoices.create' }], 'form'), '/blocks/0/actions'],
  ['form without action', [{ type: 'form' }], '/blocks/0/actions'],
  ['href alone', actions([{ href: '/invoices/new', label: 'New', icon: 'plus', variant: 'link' }]), null],
  ['tool and href', actions([{ tool: 'parties.create', href: '/x' }]), '/blocks/0/actions/0/href'],
  ['neither tool nor href', actions([{ label: 'Nothing' }]), '/blocks/0/actions/0/tool'],
  ['href is an app path', actions([{ href: 'https://evil.example' }]), '/blocks/0/actions/0/href'],
  ['every icon and variant', actions([{ tool: 'parties.create', icon: 'money', variant: 'destructive' }, { tool: 'parties.create', icon: 'arrow-right', variant: 'ghost' }]), null],
  ['icon unknown', actions([{ tool: 'parties.create', icon: 'rocket' }]), '/blocks/0/actions/0/icon'],
  ['variant unknown', actions([{ tool: 'parties.create', variant: 'primary' }]), '/blocks/0/actions/0/variant'],
  ['values is an object', actions([{ tool: 'parties.create', values: 'x' }]), '/blocks/0/actions/0/values'],
  ['prompt is boolean', actions([{ tool: 'parties.create', prompt: 'yes' }]), '/blocks/0/actions/0/prompt'],
  ['confirm is a question', actions([{ tool: 'parties.create', confirm: '' }]), '/blocks/0/actions/0/confirm'],
  ['toggle field', actions([{ tool: 'parties.create', field: 'active' }], 'toggle'), null],
  ['unregistered tool', actions([{ tool: 'parties.teleport' }]), '/blocks/0/actions/0/tool'],
  ['tool name shape', actions([{ tool: 'Parties Create' }]), '/blocks/0/actions/0/tool'],
  ['unknown action field', actions([{ tool: 'parties.create', colour: 'red' }]), '/blocks/0/actions/0/colour'],
  ['actions on chart', [{ type: 'chart', actions: [{ tool: 'parties.create' }] }], '/blocks/0/actions'],
  ['unregistered tool deep inside', [{ type: 'tabs', children: [{ type: 'text' }, { type: 'section', children: [{ type: 'button', actions: [{ tool: 'x.y' }] }] }] }], '/blocks/0/children/1/children/0/actions/0/tool'],
];

describe('canvas block schema (specification §2.2–2.9)', () => {
  it('covers all 24 block types', () => {
    expect(BLOCK_TYPES).toHaveLength(24);
    expect(METRICS).toHaveLength(28);
    // The specification's §2.5 list has 56 names (the issue counted 55); all are accepted, and ours beside them.
    expect(SPEC_SOURCES).toHaveLength(56);
    expect(SOURCES).toEqual([...SPEC_SOURCES, ...OWN_SOURCES]);
    expect(OWN_SOURCES.filter((s) => (SPEC_SOURCES as readonly string[]).includes(s))).toEqual([]);
    expect(refusalOf(BLOCK_TYPES.map((type) => (type === 'actions' || type === 'form' ? { type, actions: [{ tool: 'parties.create' }] } : type === 'params' ? { type, params: [{ key: `p_${type}` }] } : { type })))).toBeNull();
  });

  it('accepts every source and metric the build says a module answers, the gateway\'s own included', () => {
    // The lists above are the specification's (a name no module answers yet is not_found, not invalid_input);
    // what the modules answer comes from their declarations, through the build's catalog.
    const reads = readRoutes();
    for (const source of Object.keys(reads.sources)) expect(SOURCES).toContain(source);
    for (const metric of Object.keys(reads.metrics)) expect(METRICS).toContain(metric);
    expect(reads.sources.members).toMatchObject({ subgraph: 'gateway', module: 'members' });
    expect(reads.sources.roles).toMatchObject({ subgraph: 'gateway', module: 'roles' });
  });

  it.each(cases)('%s', (_name, blocks, field) => {
    expect(refusalOf(blocks)).toBe(field);
  });

  it('refuses a save without title or blocks, and a patch without id', () => {
    expect(() => validateSave({ blocks: [] })).toThrow(expect.objectContaining({ field: '/title' }));
    expect(() => validateSave({ title: 'x' })).toThrow(expect.objectContaining({ field: '/blocks' }));
    expect(() => validatePatch({ title: 'x' })).toThrow(expect.objectContaining({ field: '/id' }));
  });
});
