import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
const owner = testPrincipal();
let board: { id: string; key: string };

type Task = { id: string; ref: string; number: number; title: string; column: string; due_date: string | null; priority: string; project_id: string };
const taskOf = (r: unknown) => (r as { output: { task: Task } }).output.task;
const rowsOf = (r: unknown) => (r as { output: { rows: Task[]; total: number } }).output;

async function newProject(principal: Principal, key: string, columns?: string[]) {
  const r = await svc.call('projects.create', { name: `Proyecto ${key}`, key, ...(columns ? { columns } : {}) }, principal);
  return (r as { output: { project: { id: string; key: string } } }).output.project;
}

beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
  board = await newProject(owner, 'WEB');
});
afterAll(async () => {
  await svc?.close();
});

describe('tasks.create', () => {
  it('adds a task in the first column with the project’s next reference', async () => {
    const ws = testPrincipal();
    const project = await newProject(ws, 'OPS');
    const first = await svc.call('tasks.create', { project_id: project.id, title: 'Conciliar banco', due_date: '2026-12-01', assignee_email: 'ana@example.co', priority: 'high' }, ws);
    expect(first.ok).toBe(true);
    const task = taskOf(first);
    expect(task.id).toMatch(/^tsk_/);
    expect(task).toMatchObject({ ref: 'OPS-1', number: 1, project_id: project.id, column: 'To do', due_date: '2026-12-01', priority: 'high', description: null });
    const second = taskOf(await svc.call('tasks.create', { project_id: project.id, title: 'Pagar nómina', column: 'Doing' }, ws));
    expect(second).toMatchObject({ ref: 'OPS-2', column: 'Doing', priority: 'normal', due_date: null, assignee_email: null });
  });

  it('numbers concurrent tasks without gaps or repeats', async () => {
    const ws = testPrincipal();
    const project = await newProject(ws, 'RACE');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => svc.call('tasks.create', { project_id: project.id, title: `T${i}` }, ws)));
    const refs = results.map((r) => taskOf(r).ref).sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1]));
    expect(refs).toEqual(Array.from({ length: 8 }, (_, i) => `RACE-${i + 1}`));
  });

  it('refuses a column the project does not have, naming /column, and takes no number for it', async () => {
    const ws = testPrincipal();
    const project = await newProject(ws, 'COLS', ['Pendiente', 'Listo']);
    const refused = await svc.call('tasks.create', { project_id: project.id, title: 'X', column: 'To do' }, ws);
    expect(refused).toMatchObject({ ok: false, code: 'invalid_input', field: '/column' });
    expect((refused as { message: string }).message).toContain('"Pendiente", "Listo"');
    expect(taskOf(await svc.call('tasks.create', { project_id: project.id, title: 'Y' }, ws))).toMatchObject({ ref: 'COLS-1', column: 'Pendiente' });
  });

  it('answers not_found for an unknown project and for another workspace’s project', async () => {
    expect(await svc.call('tasks.create', { project_id: 'prj_nope', title: 'X' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const other = testPrincipal();
    const theirs = await newProject(other, 'THEIRS');
    expect(await svc.call('tasks.create', { project_id: theirs.id, title: 'Intrusa' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    // Not even the other workspace's column names leak through the column check.
    expect(await svc.call('tasks.create', { project_id: theirs.id, title: 'Intrusa', column: 'Sondeo' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(rowsOf(await svc.call('tasks.list', { project_id: theirs.id }, other)).rows).toEqual([]);
  });

  it('refuses input that does not fit the schema with a JSON Pointer', async () => {
    const call = (input: Record<string, unknown>) => svc.call('tasks.create', input, owner);
    expect(await call({ title: 'X' })).toMatchObject({ code: 'invalid_input', field: '/project_id' });
    expect(await call({ project_id: board.id })).toMatchObject({ code: 'invalid_input', field: '/title' });
    expect(await call({ project_id: board.id, title: '' })).toMatchObject({ code: 'invalid_input', field: '/title' });
    expect(await call({ project_id: board.id, title: 'X', due_date: '2026-13-01' })).toMatchObject({ code: 'invalid_input', field: '/due_date' });
    expect(await call({ project_id: board.id, title: 'X', due_date: '2026-12-01T10:00:00Z' })).toMatchObject({ code: 'invalid_input', field: '/due_date' });
    expect(await call({ project_id: board.id, title: 'X', assignee_email: 'ana' })).toMatchObject({ code: 'invalid_input', field: '/assignee_email' });
    expect(await call({ project_id: board.id, title: 'X', priority: 'critical' })).toMatchObject({ code: 'invalid_input', field: '/priority' });
    expect(await call({ project_id: board.id, title: 'X', column: 7 })).toMatchObject({ code: 'invalid_input', field: '/column' });
    expect(await call({ project_id: board.id, title: 'X', labels: ['a'] })).toMatchObject({ code: 'invalid_input', field: '/labels' });
  });

  it('is refused to a viewer (role), a key narrowed to projects (pattern) and a read-only token (scope); a member may', async () => {
    const input = { project_id: board.id, title: 'Permisos' };
    expect(await svc.call('tasks.create', input, { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('tasks.create', input, { ...owner, patterns: ['projects.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('tasks.create', input, { ...owner, scopes: ['tools:read'] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await svc.call('tasks.create', input, { ...owner, role: 'member' })).ok).toBe(true);
  });
});

describe('tasks.list', () => {
  it('filters by project, column and due date, newest first, and pages by cursor', async () => {
    const ws = testPrincipal();
    const a = await newProject(ws, 'AAA');
    const b = await newProject(ws, 'BBB');
    const add = (project_id: string, title: string, extra: Record<string, unknown> = {}) => svc.call('tasks.create', { project_id, title, ...extra }, ws);
    await add(a.id, 'late', { due_date: '2026-12-20' });
    await add(a.id, 'soon', { due_date: '2026-12-02', column: 'Doing' });
    await add(a.id, 'undated');
    await add(b.id, 'other project', { due_date: '2026-12-01' });

    const all = rowsOf(await svc.call('tasks.list', {}, ws));
    expect(all.rows.map((t) => t.title)).toEqual(['other project', 'undated', 'soon', 'late']);
    expect(rowsOf(await svc.call('tasks.list', { project_id: a.id }, ws)).rows.map((t) => t.title)).toEqual(['undated', 'soon', 'late']);
    expect(rowsOf(await svc.call('tasks.list', { project_id: a.id, column: 'Doing' }, ws)).rows.map((t) => t.title)).toEqual(['soon']);
    expect(rowsOf(await svc.call('tasks.list', { due_before: '2026-12-20' }, ws)).rows.map((t) => t.title)).toEqual(['other project', 'soon']);
    expect(rowsOf(await svc.call('tasks.list', { due_before: '2026-12-21', project_id: a.id }, ws)).rows.map((t) => t.title)).toEqual(['soon', 'late']);
    const first = rowsOf(await svc.call('tasks.list', { limit: 1 }, ws)) as { rows: Task[]; total: number; next_cursor: string };
    expect(first).toMatchObject({ total: 4, rows: [{ title: 'other project' }] });
    const page = rowsOf(await svc.call('tasks.list', { limit: 1, cursor: first.next_cursor }, ws));
    expect(page).toMatchObject({ total: 4, rows: [{ title: 'undated' }] });
    expect(rowsOf(await svc.call('tasks.list', { project_id: a.id }, ws)).total).toBeUndefined();
  });

  it('never shows another workspace’s tasks, and answers not_found for its project', async () => {
    const other = testPrincipal();
    const theirs = await newProject(other, 'HIDDEN');
    await svc.call('tasks.create', { project_id: theirs.id, title: 'Tarea ajena' }, other);
    expect(rowsOf(await svc.call('tasks.list', {}, owner)).rows.map((t) => t.title)).not.toContain('Tarea ajena');
    expect(await svc.call('tasks.list', { project_id: theirs.id }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await svc.call('tasks.list', { project_id: 'prj_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('refuses bad filters with a JSON Pointer, and callers it does not reach', async () => {
    expect(await svc.call('tasks.list', { limit: 101 }, owner)).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await svc.call('tasks.list', { offset: 1 }, owner)).toMatchObject({ code: 'invalid_input', field: '/offset' });
    expect(await svc.call('tasks.list', { cursor: 'x'.repeat(513) }, owner)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await svc.call('tasks.list', { cursor: 'garbage' }, owner)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await svc.call('tasks.list', { due_before: 'tomorrow' }, owner)).toMatchObject({ code: 'invalid_input', field: '/due_before' });
    expect(await svc.call('tasks.list', { project_id: '' }, owner)).toMatchObject({ code: 'invalid_input', field: '/project_id' });
    expect(await svc.call('tasks.list', { assignee: 'x' }, owner)).toMatchObject({ code: 'invalid_input', field: '/assignee' });
    expect(await svc.call('tasks.list', {}, { ...owner, patterns: ['projects.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('tasks.list', {}, { ...owner, scopes: [] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await svc.call('tasks.list', {}, { ...owner, role: 'viewer', patterns: ['tasks.%:read'] })).ok).toBe(true);
  });
});

describe('the Task graph', () => {
  it('links tasks and projects within the caller’s workspace only', async () => {
    const ws = testPrincipal();
    const project = await newProject(ws, 'GRAPH');
    const t1 = taskOf(await svc.call('tasks.create', { project_id: project.id, title: 'Uno', due_date: '2026-12-24' }, ws));
    const t2 = taskOf(await svc.call('tasks.create', { project_id: project.id, title: 'Dos', column: 'Done' }, ws));
    const foreign = taskOf(await svc.call('tasks.create', { project_id: board.id, title: 'Ajena' }, owner));

    const byProject = await svc.graphql(
      'query($id: ID!) { tasks(projectId: $id) { ref title dueDate priority project { key } } }',
      { id: project.id },
      ws,
    );
    expect(byProject.body.data.tasks).toEqual([
      { ref: 'GRAPH-2', title: 'Dos', dueDate: null, priority: 'normal', project: { key: 'GRAPH' } },
      { ref: 'GRAPH-1', title: 'Uno', dueDate: '2026-12-24', priority: 'normal', project: { key: 'GRAPH' } },
    ]);
    const done = await svc.graphql('query($id: ID!) { project(id: $id) { tasks(column: "Done") { id } } }', { id: project.id }, ws);
    expect(done.body.data.project.tasks).toEqual([{ id: t2.id }]);
    expect((await svc.graphql('query($id: ID!) { tasks(projectId: $id) { id } }', { id: board.id }, ws)).body.data.tasks).toEqual([]);

    const entities = await svc.graphql(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Task { id ref } } }',
      { r: [{ __typename: 'Task', id: t1.id }, { __typename: 'Task', id: foreign.id }] },
      ws,
    );
    expect(entities.body.data._entities).toEqual([{ id: t1.id, ref: 'GRAPH-1' }, null]);
  });
});
