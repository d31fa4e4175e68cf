// Boards with fractional order keys: columns added and moved, tasks moved across and within columns
// (each move writes one task), concurrent moves, the checklist, and the agenda's tasks lane.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

async function ok(ws: Principal, tool: string, input: Record<string, unknown>) {
  const r = await svc.call(tool, input, ws);
  if (!r.ok) throw new Error(`${tool}: ${r.code} ${r.field} ${r.message}`);
  return r.output;
}

/** The board as the columns source and the tasks' keys show it: column → refs in order. */
async function board(ws: Principal, projectId: string): Promise<Record<string, string[]>> {
  const { rows } = await ok(ws, 'tasks.list', { project_id: projectId, limit: 100 });
  const out: Record<string, string[]> = {};
  const { rows: projects } = await ok(ws, 'projects.list', {});
  for (const c of projects.find((p: any) => p.id === projectId).columns) out[c] = [];
  for (const t of [...rows].sort((a: any, b: any) => (a.sort_key < b.sort_key ? -1 : a.sort_key > b.sort_key ? 1 : 0))) out[t.column].push(t.ref);
  return out;
}

async function lane(ws: Principal, from: string, to: string, overdue = true) {
  const r = await svc.graphql('query($w: JSON!) { projectsAgenda(lane: "tasks", window: $w) }', { w: { from, to, limit: 400, overdue } }, ws);
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data.projectsAgenda as any[];
}

describe('columns', () => {
  it('adds and moves columns by their keys, keeping the tasks in them', async () => {
    const ws = testPrincipal();
    const { project } = await ok(ws, 'projects.create', { name: 'Web', key: 'WEB' });
    await ok(ws, 'tasks.create', { project_id: project.id, title: 'Portada', column: 'Doing' });
    expect((await ok(ws, 'projects.add_column', { id: project.id, name: 'Revisión', after: 'Doing' })).project.columns).toEqual(['To do', 'Doing', 'Revisión', 'Done']);
    expect((await ok(ws, 'projects.add_column', { id: project.id, name: 'Ideas', after: null })).project.columns).toEqual(['Ideas', 'To do', 'Doing', 'Revisión', 'Done']);
    expect((await ok(ws, 'projects.move_column', { id: project.id, column: 'Doing', after: 'Revisión' })).project.columns).toEqual(['Ideas', 'To do', 'Revisión', 'Doing', 'Done']);
    expect(await board(ws, project.id)).toEqual({ Ideas: [], 'To do': [], Revisión: [], Doing: ['WEB-1'], Done: [] });
    expect(await svc.call('projects.add_column', { id: project.id, name: 'Doing' }, ws)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await svc.call('projects.move_column', { id: project.id, column: 'Nope', after: null }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/column' });
    expect(await svc.call('projects.move_column', { id: project.id, column: 'Doing', after: 'Nope' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/after' });
    expect(await svc.call('projects.add_column', { id: 'prj_nope', name: 'X' }, ws)).toMatchObject({ ok: false, code: 'not_found' });
  });
});

describe('tasks.move', () => {
  it('moves tasks across and within columns, writing only the task moved', async () => {
    const ws = testPrincipal();
    const { project } = await ok(ws, 'projects.create', { name: 'Ops', key: 'OPS' });
    const t = [];
    for (const title of ['a', 'b', 'c', 'd']) t.push((await ok(ws, 'tasks.create', { project_id: project.id, title })).task);
    expect(await board(ws, project.id)).toEqual({ 'To do': ['OPS-1', 'OPS-2', 'OPS-3', 'OPS-4'], Doing: [], Done: [] });
    const before = Object.fromEntries((await ok(ws, 'tasks.list', { project_id: project.id })).rows.map((r: any) => [r.id, r.sort_key]));
    const moved = (await ok(ws, 'tasks.move', { id: t[3].id, after_id: null })).task;
    // One write: the moved task has a new key below the first one; the others kept theirs.
    expect(moved.sort_key < before[t[0].id]).toBe(true);
    const keys = Object.fromEntries((await ok(ws, 'tasks.list', { project_id: project.id })).rows.map((r: any) => [r.id, r.sort_key]));
    for (const task of t.slice(0, 3)) expect(keys[task.id]).toBe(before[task.id]);
    await ok(ws, 'tasks.move', { id: t[0].id, column: 'Doing' });
    await ok(ws, 'tasks.move', { id: t[2].id, column: 'Doing', before_id: t[0].id });
    await ok(ws, 'tasks.move', { id: t[1].id, after_id: t[3].id });
    expect(await board(ws, project.id)).toEqual({ 'To do': ['OPS-4', 'OPS-2'], Doing: ['OPS-3', 'OPS-1'], Done: [] });
    // Refusals.
    expect(await svc.call('tasks.move', { id: t[0].id, column: 'Nope' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/column' });
    expect(await svc.call('tasks.move', { id: t[0].id, after_id: t[3].id }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/after_id' });
    expect(await svc.call('tasks.move', { id: t[0].id, after_id: t[2].id, before_id: t[2].id }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/before_id' });
    expect(await svc.call('tasks.move', { id: t[0].id, after_id: t[0].id }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/after_id' });
    expect(await svc.call('tasks.move', { id: t[0].id, column: 'Done' }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('keeps every task once and in a total order when ten moves race to one place', async () => {
    const ws = testPrincipal();
    const { project } = await ok(ws, 'projects.create', { name: 'Race', key: 'RACE' });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await ok(ws, 'tasks.create', { project_id: project.id, title: `t${i}` })).task.id);
    const results = await Promise.all(ids.slice(2).map((id) => svc.call('tasks.move', { id, column: 'Doing', after_id: null }, ws)));
    expect(results.every((r) => r.ok)).toBe(true);
    const b = await board(ws, project.id);
    expect(b['To do']).toEqual(['RACE-1', 'RACE-2']);
    expect([...b.Doing].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `RACE-${i + 3}`).sort());
  });
});

describe('checklist and the tasks lane', () => {
  it('lists open tasks by due date, overdue ones first, and leaves done ones out', async () => {
    const ws = testPrincipal();
    const { project } = await ok(ws, 'projects.create', { name: 'Cierre', key: 'CIE' });
    const a = (await ok(ws, 'tasks.create', { project_id: project.id, title: 'Conciliar', due_date: '2026-11-20', checklist: ['Banco', 'Caja'] })).task;
    const b = (await ok(ws, 'tasks.create', { project_id: project.id, title: 'Declarar IVA', due_date: '2026-12-09', assignee_email: 'ana@acme.co' })).task;
    await ok(ws, 'tasks.create', { project_id: project.id, title: 'Sin fecha' });
    const c = (await ok(ws, 'tasks.create', { project_id: project.id, title: 'Hecha', due_date: '2026-12-03' })).task;
    await ok(ws, 'tasks.move', { id: c.id, column: 'Done' });
    expect(a.checklist).toEqual([{ text: 'Banco', done: false }, { text: 'Caja', done: false }]);
    const checked = (await ok(ws, 'tasks.update', { id: a.id, checklist: [{ text: 'Banco', done: true }, { text: 'Caja', done: false }] })).task;
    expect(checked.checklist[0].done).toBe(true);
    expect((await lane(ws, '2026-12-01', '2026-12-31')).map((e) => [e.date, e.title, e.kind, e.overdue])).toEqual([
      ['2026-11-20', 'CIE-1 Conciliar', 'deadline', true],
      ['2026-12-09', 'CIE-2 Declarar IVA', 'deadline', false],
    ]);
    // A new due date moves it in the lane; clearing it takes it out.
    await ok(ws, 'tasks.update', { id: b.id, due_date: '2026-12-15' });
    await ok(ws, 'tasks.update', { id: a.id, due_date: null });
    expect((await lane(ws, '2026-12-01', '2026-12-31')).map((e) => [e.date, e.ref])).toEqual([['2026-12-15', 'CIE-2']]);
    expect(await svc.call('tasks.update', { id: b.id, due_date: '2026-02-30' }, ws)).toMatchObject({ ok: false, code: 'invalid_input', field: '/due_date' });
  });
});
