import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveBlocks } from '../gateway/src/canvas/render.ts';
import type { Block } from '../gateway/src/canvas/schema.ts';
import { mixedDashboard, seedReceivables } from './helpers/canvas.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let seeded: Awaited<ReturnType<typeof seedReceivables>>;

async function ok(tool: string, input: unknown, headers?: Record<string, string>): Promise<any> {
  const r = await sys.invoke(tool, input, key, headers);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}
const refused = async (tool: string, input: unknown) => {
  const r = await sys.invoke(tool, input, key);
  return { status: r.status, ...r.body };
};
/** The rendered block at a path of indexes ("4.1"). */
const at = (blocks: any[], path: string): any => path.split('.').map(Number).reduce((list: any, i, n, all) => (n === all.length - 1 ? list[i] : list[i].children), blocks);

beforeAll(async () => {
  sys = await startTestSystem('dashboards');
  const ws = await sys.workspace('Cuadra Demo SAS');
  key = ws.api_key;
  seeded = await seedReceivables(sys, key);
});
afterAll(async () => {
  await sys?.stop();
});

describe('dashboards.save|patch|get|list|delete', () => {
  it('round-trips a dashboard through save, get, patch, list and delete', async () => {
    const board = mixedDashboard();
    const saved = (await ok('dashboards.save', board)).dashboard;
    expect(saved).toMatchObject({ title: 'Cobranza', version: 1, key: null });
    expect(saved.id).toMatch(/^dsh_/);
    expect((await ok('dashboards.get', { id: saved.id })).dashboard.blocks).toEqual(board.blocks);

    const patched = (await ok('dashboards.patch', { id: saved.id, title: 'Cobranza semanal' })).dashboard;
    expect(patched).toMatchObject({ title: 'Cobranza semanal', version: 2 });
    expect(patched.blocks).toEqual(board.blocks);
    const fewer = (await ok('dashboards.patch', { id: saved.id, blocks: board.blocks.slice(0, 2) })).dashboard;
    expect(fewer).toMatchObject({ title: 'Cobranza semanal', version: 3 });
    expect(fewer.blocks).toHaveLength(2);

    // A save by key replaces the dashboard with that key.
    const keyed = (await ok('dashboards.save', { title: 'Ventas', key: 'ventas', blocks: [{ type: 'text', markdown: 'v1' }] })).dashboard;
    const again = await ok('dashboards.save', { title: 'Ventas', key: 'ventas', blocks: [{ type: 'text', markdown: 'v2' }] });
    expect(again).toMatchObject({ created: false, dashboard: { id: keyed.id, version: 2, blocks: [{ type: 'text', markdown: 'v2' }] } });
    expect((await ok('dashboards.get', { id: 'ventas' })).dashboard.id).toBe(keyed.id);

    const list = (await ok('dashboards.list', {})).rows;
    expect(list.map((d: any) => d.id).sort()).toEqual([saved.id, keyed.id].sort());
    expect(list[0]).not.toHaveProperty('blocks');

    expect(await ok('dashboards.delete', { id: keyed.id })).toEqual({ deleted: true, id: keyed.id });
    expect(await refused('dashboards.get', { id: keyed.id })).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refused('dashboards.delete', { id: keyed.id })).toMatchObject({ status: 404, code: 'not_found' });
    expect(await refused('dashboards.patch', { id: 'dsh_nope', title: 'x' })).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('refuses a bad block with 422 and the pointer into the dashboard, from the schema and from the rules after it', async () => {
    expect(await refused('dashboards.save', { title: 'x', blocks: [{ type: 'row', children: [{ type: 'text' }, { type: 'chart', span: 13 }] }] }))
      .toMatchObject({ status: 422, code: 'invalid_input', field: '/blocks/0/children/1/span' });
    expect(await refused('dashboards.patch', { id: 'dsh_x', blocks: [{ type: 'text', children: [] }] }))
      .toMatchObject({ status: 422, code: 'invalid_input', field: '/blocks/0/children' });
    // Rules JSON Schema cannot say: a registered tool, a selector that exists.
    expect(await refused('dashboards.save', { title: 'x', blocks: [{ type: 'stack', children: [{ type: 'actions', actions: [{ tool: 'invoices.teleport' }] }] }] }))
      .toMatchObject({ status: 422, code: 'invalid_input', field: '/blocks/0/children/0/actions/0/tool' });
    expect(await refused('dashboards.save', { title: 'x', blocks: [{ type: 'records', records: { source: 'invoices' }, bind: { block: 'nobody' } }] }))
      .toMatchObject({ status: 422, code: 'invalid_input', field: '/blocks/0/bind/block' });
  });

  it('runs through the one pipeline: idempotency replays, the ledger records, scopes and roles apply', async () => {
    const input = { title: 'Once', blocks: [{ type: 'divider' }] };
    const first = await sys.invoke('dashboards.save', input, key, { 'Idempotency-Key': 'dash-once-1' });
    const second = await sys.invoke('dashboards.save', input, key, { 'Idempotency-Key': 'dash-once-1' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    const entries = (await ok('ledger.list', { module: 'dashboards', limit: 50 })).rows ?? (await ok('ledger.list', { module: 'dashboards', limit: 50 })).entries;
    expect(entries.some((e: any) => e.tool === 'dashboards.save' && e.outcome === 'ok')).toBe(true);
    const ws = (await sys.identity.authenticateApiKey(key)).workspace;
    const viewer = await sys.key(ws, 'viewer');
    expect((await sys.invoke('dashboards.save', input, viewer.api_key)).status).toBe(403);
    expect((await sys.invoke('dashboards.list', {}, viewer.api_key)).status).toBe(200);
  });
});

describe('metrics.query and records.list', () => {
  it('fan out to the owning module, and name what no module answers yet', async () => {
    const revenue = await ok('metrics.query', { metric: 'revenue', interval: 'week', compare: 'previous_period' });
    expect(revenue).toMatchObject({ metric: 'revenue', unit: 'money', currency: 'COP' });
    expect(revenue.summary.value).toBeGreaterThan(0);
    const parties = await ok('records.list', { source: 'parties', kind: 'customer' });
    expect(parties.rows.map((r: any) => r.name).sort()).toEqual(['Ana Gómez', 'Ferretería Búho Ltda', 'Tienda Andina SAS']);
    expect((await ok('records.list', { source: 'invoices', limit: 2 })).rows).toHaveLength(2);
    // Every name of the specification's lists is answered by a module now (what a build without a
    // module answers is in toy-module.test.ts); a saved metric the workspace does not have is named.
    expect(await ok('metrics.query', { metric: 'inventory_value' })).toMatchObject({ metric: 'inventory_value', unit: 'money' });
    const unsaved = await refused('metrics.query', { metric: 'saved:sin-guardar' });
    expect(unsaved).toMatchObject({ status: 404, code: 'not_found' });
    expect(unsaved.error).toMatch(/no saved metric "sin-guardar"/);
    expect(await refused('metrics.query', { metric: 'revenue', from: '2026-01-01' })).toMatchObject({ status: 422, field: '/to' });
    expect(await refused('records.list', { source: 'parties', kind: 'product' })).toMatchObject({ status: 422, field: '/kind' });
  });
});

describe('saved metrics: metrics.save|list|delete and saved:<key> in metrics.query and blocks', () => {
  it('saves a query under a key that blocks name, lays the block\'s fields over it, and seals it to the workspace', async () => {
    const saved = await ok('metrics.save', { key: 'ventas-semana', query: { metric: 'revenue', interval: 'week', days: 60 } });
    expect(saved).toMatchObject({ created: true, saved_metric: { key: 'ventas-semana', metric: 'saved:ventas-semana', query: { metric: 'revenue', interval: 'week', days: 60 }, version: 1 } });
    const direct = await ok('metrics.query', { metric: 'revenue', interval: 'week', days: 60 });
    expect(direct.summary.value).toBeGreaterThan(0);
    expect(await ok('metrics.query', { metric: 'saved:ventas-semana' })).toEqual(direct);
    // A caller's fields override the saved ones; a caller's window replaces the saved window.
    expect(await ok('metrics.query', { metric: 'saved:ventas-semana', interval: 'day', days: 30 })).toEqual(await ok('metrics.query', { metric: 'revenue', interval: 'day', days: 30 }));
    // A dashboard block naming saved:<key> renders the saved query.
    const rendered = (await ok('dashboards.render', { blocks: [{ type: 'chart', chart: 'bar', query: { metric: 'saved:ventas-semana' } }, { type: 'stats', items: [{ label: 'Ventas', query: { metric: 'saved:ventas-semana' } }] }] })).blocks;
    expect(rendered[0].data).toEqual(direct);
    expect(rendered[1].items[0].value).toBe(direct.summary.value);
    // Saving the key again replaces its query.
    expect(await ok('metrics.save', { key: 'ventas-semana', query: { metric: 'revenue', interval: 'month', days: 90 } })).toMatchObject({ created: false, saved_metric: { version: 2, query: { interval: 'month' } } });
    await ok('metrics.save', { key: 'cartera', query: { metric: 'ar_outstanding' } });
    expect((await ok('metrics.list', {})).rows.map((r: any) => r.key)).toEqual(['cartera', 'ventas-semana']);
    const firstPage = await ok('metrics.list', { limit: 1 });
    expect((await ok('metrics.list', { limit: 1, cursor: firstPage.next_cursor })).rows.map((r: any) => r.key)).toEqual(['ventas-semana']);
    // Refusals: the key's pattern (CONTRACT: saved:[a-z0-9_][a-z0-9_-]{0,63}), a saved metric of a saved metric, an unknown key.
    expect(await refused('metrics.save', { key: 'Ventas Semana', query: { metric: 'revenue' } })).toMatchObject({ status: 422, code: 'invalid_input', field: '/key' });
    expect(await refused('metrics.save', { key: 'x'.repeat(65), query: { metric: 'revenue' } })).toMatchObject({ status: 422, field: '/key' });
    expect(await refused('metrics.save', { key: 'otro', query: { metric: 'saved:cartera' } })).toMatchObject({ status: 422, code: 'invalid_input', field: '/query/metric' });
    expect(await refused('metrics.save', { key: 'otro', query: { metric: 'revenue', from: '2026-01-01' } })).toMatchObject({ status: 422, field: '/query/to' });
    expect(await refused('metrics.query', { metric: 'saved:nada' })).toMatchObject({ status: 404, code: 'not_found' });
    // Another workspace sees none of it.
    const stranger = (await sys.workspace('Otra SAS')).api_key;
    expect((await sys.invoke('metrics.query', { metric: 'saved:cartera' }, stranger)).body).toMatchObject({ code: 'not_found' });
    expect((await sys.invoke('metrics.list', {}, stranger)).body.output.rows).toEqual([]);
    expect((await sys.invoke('metrics.delete', { key: 'cartera' }, stranger)).body).toMatchObject({ code: 'not_found' });
    // Deleted, a block naming it shows its own not_found error.
    expect(await ok('metrics.delete', { key: 'cartera' })).toEqual({ deleted: true, key: 'cartera' });
    const after = (await ok('dashboards.render', { blocks: [{ type: 'chart', chart: 'line', query: { metric: 'saved:cartera' } }] })).blocks;
    expect(after[0].error).toMatchObject({ code: 'not_found' });
  });
});

describe('dashboards.render', () => {
  let id: string;
  beforeAll(async () => {
    id = (await ok('dashboards.save', mixedDashboard())).dashboard.id;
  });

  it('fills every leaf type over real data, each failing block with its own error', async () => {
    const out = await ok('dashboards.render', { id });
    const b = out.blocks;
    expect(out.dashboard).toMatchObject({ id, title: 'Cobranza' });
    // stats: revenue and receivables filled, the third a saved metric the workspace does not have.
    const stats = at(b, '2');
    expect(stats.items[0]).toMatchObject({ label: 'Revenue', format: 'money', currency: 'COP' });
    expect(stats.items[0].value).toBeGreaterThan(0);
    expect(stats.items[0].spark.length).toBeGreaterThan(1);
    expect(typeof stats.items[0].previous).toBe('number');
    expect(stats.items[1].value).toBeGreaterThan(0);
    expect(stats.items[2].error).toMatchObject({ code: 'not_found' });
    expect(stats.error.code).toBe('not_found');
    // chart (bar, by week, days from the param default) and pie
    expect(at(b, '3.0').data).toMatchObject({ metric: 'revenue', unit: 'money' });
    expect(at(b, '3.0').data.series.length).toBeGreaterThan(5);
    expect(at(b, '3.1').data.metric).toBe('invoices_status');
    expect(at(b, '3.0').span).toBe(6);
    // table and records
    expect(at(b, '4.0').data.rows[0].name ?? at(b, '4.0').data.rows[0].customer_name).toBeTruthy();
    expect(at(b, '4.1').records_data.rows).toHaveLength(3);
    // bound block waits for a selection
    expect(at(b, '5')).toMatchObject({ waiting: true });
    expect(at(b, '5')).not.toHaveProperty('records_data');
    expect(at(b, '6').records_data.rows).toHaveLength(1);
    // agenda: receivables and tax lanes answered (issue 17); event follows the next due invoice; kanban: this workspace has no pipeline yet
    expect(at(b, '7.0').agenda_data.entries.length).toBeGreaterThan(0);
    expect(at(b, '7.0').agenda_data.unavailable_lanes).toEqual([]);
    expect(at(b, '7.1').event_data.event).toMatchObject({ source: 'receivables' });
    expect(at(b, '7.2').error).toMatchObject({ code: 'not_found' });
    // result: a read tool through the pipeline
    expect(at(b, '8.5').result_data).toMatchObject({ ok: true });
    // leaves without data come back as they were, with their span
    expect(at(b, '8.0')).toMatchObject({ type: 'callout', span: 12 });
    expect(at(b, '9.4').error).toMatchObject({ code: 'not_found' });
  });

  it('an event block following the events lane shows what comes next: not an occurrence that ended earlier today, the kind asked for, none past its horizon', async () => {
    const k = (await sys.workspace('Agenda Próxima SAS')).api_key;
    const out = (tool: string, input: unknown) => sys.output(tool, input, k);
    // Bogotá is UTC−5 all year (no DST): the local wall time of an instant, to the minute.
    const local = (ms: number) => new Date(ms - 5 * 3_600_000).toISOString().slice(0, 16);
    const now = Date.now();
    // Ended a minute ago (today in Bogotá, unless the day began within the last three minutes); the next one starts in an hour.
    await out('calendar_events.create', { title: 'Llamada temprana', kind: 'meeting', start: local(now - 180_000), end: local(now - 60_000) });
    const next = (await out('calendar_events.create', { title: 'Revisión de cierre', kind: 'meeting', start: local(now + 3_600_000), end: local(now + 5_400_000) })).event;
    const inTenDays = local(now + 10 * 86_400_000).slice(0, 10);
    const filing = (await out('calendar_events.create', { title: 'Retención en la fuente', kind: 'tax', all_day: true, start: inTenDays })).event;
    const blocks = (await out('dashboards.render', {
      blocks: [
        { type: 'event', event: { source: 'events' } },
        { type: 'event', event: { source: 'events', kind: 'tax' } },
        { type: 'event', event: { source: 'events', kind: 'tax', horizon: 5 } },
        { type: 'event', event: { source: 'events', kind: 'legal' } },
      ],
    })).blocks;
    expect(blocks[0].event_data).toEqual({
      horizon: 90, unavailable_lanes: [],
      event: expect.objectContaining({ source: 'events', kind: 'meeting', title: 'Revisión de cierre', event_id: next.id, status: 'confirmed', all_day: false, starts_at: next.start, ends_at: next.end, overdue: false }),
    });
    expect(blocks[1].event_data.event).toMatchObject({ source: 'events', kind: 'tax', title: 'Retención en la fuente', event_id: filing.id, date: inTenDays, all_day: true });
    expect(blocks[2].event_data).toEqual({ event: null, horizon: 5, unavailable_lanes: [] });
    expect(blocks[3].event_data).toEqual({ event: null, horizon: 90, unavailable_lanes: [] });
  });

  it('merges the recurring lane from invoices and payroll (issue 18): a person under contract brings the month-end pay dates', async () => {
    expect((await ok('employees.create', {
      name: 'Ana Mínimo', document: { type: 'CC', number: '1023456711' }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    })).employee.id).toMatch(/^emp_/);
    const agenda = at((await ok('dashboards.render', { id })).blocks, '7.0').agenda_data;
    const pay = agenda.entries.filter((e: any) => e.source === 'recurring' && e.ref?.module === 'payroll');
    // The window is the next 60 days: at least one month's last day falls in it.
    expect(pay.length).toBeGreaterThan(0);
    for (const e of pay) expect(e.date).toBe(new Date(Date.UTC(Number(e.date.slice(0, 4)), Number(e.date.slice(5, 7)), 0)).toISOString().slice(0, 10));
    expect(agenda.unavailable_lanes).toEqual([]);
  });

  it('applies bind, inputs and params from the given values', async () => {
    const andina = seeded.parties.andina;
    const bound = (await ok('dashboards.render', { id, values: { selections: { cust: { id: andina.id, name: andina.name } } } })).blocks;
    const rows = at(bound, '5').records_data.rows;
    expect(rows.length).toBe(3);
    expect(new Set(rows.map((r: any) => r.customer_name))).toEqual(new Set([andina.name]));

    const filtered = (await ok('dashboards.render', { id, values: { params: { who: 'búho', days: '30' } } })).blocks;
    expect(at(filtered, '4.1').records_data.rows.map((r: any) => r.name)).toEqual(['Ferretería Búho Ltda']);
    const weeks30 = at(filtered, '3.0').data.series.length;
    const weeks90 = at((await ok('dashboards.render', { id, values: { params: { days: '90' } } })).blocks, '3.0').data.series.length;
    expect(weeks30).toBeLessThan(weeks90);

    // A chart bucket selection carries period and period_end; a metric block reads them as from/to.
    const weeks = at(bound, '3.0').data.series as { period: string; period_end: string; value: number }[];
    const busiest = weeks.reduce((a, w) => (w.value > a.value ? w : a));
    const drilled = await ok('dashboards.render', { blocks: [
      { type: 'chart', key: 'week', query: { metric: 'revenue', interval: 'week' } },
      { type: 'table', query: { metric: 'revenue', interval: 'day' }, inputs: [{ target: 'from', block: 'week', field: 'period' }, { target: 'to', block: 'week', field: 'period_end' }] },
    ], values: { selections: { week: { period: busiest.period, period_end: busiest.period_end } } } });
    const days = drilled.blocks[1].data.series;
    expect(days.length).toBeLessThanOrEqual(7);
    expect(days[0].period >= busiest.period).toBe(true);
    expect(drilled.blocks[1].data.summary.value).toBe(busiest.value);

    // A viewer's value the owning module refuses fails only that block.
    const bad = (await ok('dashboards.render', { id, values: { params: { days: '999' } } })).blocks;
    expect(at(bad, '3.0').error).toMatchObject({ code: 'invalid_input' });
    expect(at(bad, '3.1').data.metric).toBe('invoices_status');

    // A required param with no value makes its dependants wait.
    const waiting = await ok('dashboards.render', { blocks: [
      { type: 'params', params: [{ key: 'q', required: true }] },
      { type: 'records', records: { source: 'parties' }, inputs: [{ target: 'search', param: 'q' }] },
    ] });
    expect(waiting.blocks[1]).toMatchObject({ waiting: true });
  });

  it('re-queries only the blocks that listed the module of a ledger event', async () => {
    const stored = (await ok('dashboards.get', { id })).dashboard.blocks as Block[];
    const res = await fetch(`${sys.gatewayUrl}/v1/events`, { headers: { authorization: `Bearer ${key}` } });
    const reader = res.body!.getReader();
    const created = await ok('parties.create', { name: 'Distribuidora Sur', kind: 'customer' });
    let event: any;
    let buffer = '';
    while (!event) {
      buffer += new TextDecoder().decode((await reader.read()).value);
      const match = /data: (\{[^\n]*"tool":"parties\.create"[^\n]*\})/.exec(buffer);
      if (match) event = JSON.parse(match[1]);
    }
    await reader.cancel();
    expect(event).toMatchObject({ module: 'parties', outcome: 'ok' });

    const stale = liveBlocks(stored, event.module);
    expect(stale.map((s) => s.pointer)).toEqual(['/blocks/4/children/1']);
    const fresh = (await ok('dashboards.render', { blocks: stale.map((s) => s.block) })).blocks;
    expect(fresh[0].records_data.rows.map((r: any) => r.id)).toContain(created.party.id);
    // An invoices action would re-query the stats, the weekly chart and the bound invoices, nothing else.
    expect(liveBlocks(stored, 'invoices').map((s) => s.pointer)).toEqual(['/blocks/2', '/blocks/3/children/0', '/blocks/5']);
  });
});
