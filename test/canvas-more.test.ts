import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '@cuadra/shared';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// The canvas reads answered by payroll, projects and agents, over REST, equal to what the tools created.
let sys: TestSystem;
let key: string;
let workspace: string;

async function ok(tool: string, input: unknown, as = key): Promise<any> {
  const r = await sys.invoke(tool, input, as);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

beforeAll(async () => {
  sys = await startTestSystem('canvas_more');
  const ws = await sys.workspace('Canvas Más SAS');
  key = ws.api_key;
  workspace = ws.workspace_id;
});
afterAll(async () => {
  await sys?.stop();
});

describe('metrics.query and records.list beyond receivables', () => {
  it('payroll_employees, activity and project_tasks equal what the tools created', async () => {
    const today = localDate(new Date());
    const employee = (name: string, number: string, hire_date: string, contract_type: string) => ok('employees.create', {
      name, document: { type: 'CC', number }, position: 'Analista', hire_date, salary: { amount: 350_000_000, currency: 'COP' }, contract_type, arl_class: 1,
      // A fixed-term contract records its agreed end: a year's term here.
      ...(contract_type === 'fixed_term' ? { term_end: new Date(Date.parse(`${hire_date}T00:00:00Z`) + 364 * 86_400_000).toISOString().slice(0, 10) } : {}),
    });
    await employee('Ana Pérez', '1020304050', today, 'indefinite');
    await employee('Bruno Díaz', '1020304051', today, 'fixed_term');
    const web = (await ok('projects.create', { name: 'Sitio', key: 'WEB' })).project;
    const t1 = (await ok('tasks.create', { project_id: web.id, title: 'Portada' })).task;
    const t2 = (await ok('tasks.create', { project_id: web.id, title: 'Publicar', column: 'Doing' })).task;
    const ops = (await ok('projects.create', { name: 'Operaciones', key: 'OPS' })).project;
    await ok('tasks.create', { project_id: ops.id, title: 'Cerrar mes' });

    const staff = await ok('metrics.query', { metric: 'payroll_employees', days: 7 });
    expect(staff).toMatchObject({ metric: 'payroll_employees', unit: 'count', summary: { value: 2 } });
    expect(staff.series.at(-1)).toEqual({ period: today, period_end: today, value: 2 });
    expect(staff.rows).toContainEqual({ contract_type: 'indefinite', count: 1 });
    expect(staff.rows).toContainEqual({ contract_type: 'fixed_term', count: 1 });
    const people = await ok('records.list', { source: 'employees', status: 'active' });
    expect(people.total).toBeUndefined(); // filtered: no count kept on write for it (CONTRACT §9)
    expect(people.rows.map((r: any) => r.name).sort()).toEqual(['Ana Pérez', 'Bruno Díaz']);

    const web_tasks = await ok('records.list', { source: 'project_tasks', ref: 'WEB' });
    expect(web_tasks).toMatchObject({ source: 'project_tasks' });
    expect(web_tasks.rows.map((r: any) => r.id).sort()).toEqual([t1.id, t2.id].sort());
    expect(await ok('records.list', { source: 'project_tasks', ref: 'WEB', status: 'Doing' })).toMatchObject({ rows: [{ id: t2.id, ref: 'WEB-2', project_key: 'WEB' }] });
    expect((await ok('records.list', { source: 'project_tasks' })).total).toBe(3);
    // records.list passes the cursor to the owning subgraph and answers its next_cursor.
    const firstPage = await ok('records.list', { source: 'project_tasks', limit: 2 });
    expect(firstPage).toMatchObject({ total: 3, next_cursor: expect.any(String) });
    const lastPage = await ok('records.list', { source: 'project_tasks', limit: 2, cursor: firstPage.next_cursor });
    expect(lastPage.next_cursor).toBeUndefined();
    expect(new Set([...firstPage.rows, ...lastPage.rows].map((r: any) => r.id)).size).toBe(3);
    expect((await sys.invoke('records.list', { source: 'project_tasks', cursor: 'forged' }, key)).body).toMatchObject({ code: 'invalid_input', field: '/cursor' });

    // Everything so far is on the ledger; the ledger.list call adds its own entry before the next read.
    const ledger = (await ok('ledger.list', { limit: 200 })).rows as { tool: string; at: string }[];
    const activity = await ok('metrics.query', { metric: 'activity', days: 1, limit: 100 });
    expect(activity).toMatchObject({ metric: 'activity', unit: 'count', summary: { value: ledger.length + 1 } });
    expect(activity.series).toEqual([{ period: today, period_end: today, value: ledger.length + 1 }]);
    const counted = (tool: string) => activity.rows.find((r: any) => r.tool === tool)?.count;
    expect(counted('employees.create')).toBe(2);
    expect(counted('projects.create')).toBe(2);
    expect(counted('tasks.create')).toBe(3);
    expect(counted('ledger.list')).toBe(1);
    expect(counted('metrics.query')).toBe(ledger.filter((e) => e.tool === 'metrics.query').length);
  });

  it('reads each source with the reach of its own module, and still refuses what no module answers', async () => {
    const narrowed = (await sys.key(workspace, 'owner', ['records.%', 'metrics.%', 'projects.%'])).api_key;
    expect((await ok('records.list', { source: 'projects' }, narrowed)).total).toBe(2);
    expect((await sys.invoke('records.list', { source: 'project_tasks' }, narrowed)).body).toMatchObject({ code: 'policy_denied' });
    expect((await sys.invoke('metrics.query', { metric: 'activity' }, narrowed)).body).toMatchObject({ code: 'policy_denied' });
    expect((await sys.invoke('metrics.query', { metric: 'saved:sin-guardar' }, key)).body).toMatchObject({ code: 'not_found' });
    expect((await sys.invoke('records.list', { source: 'project_tasks', ref: 'NOPE' }, key)).body).toMatchObject({ code: 'not_found' });
    expect((await sys.invoke('records.list', { source: 'employees', status: 'fired' }, key)).body).toMatchObject({ code: 'invalid_input', field: '/status' });
  });
});
