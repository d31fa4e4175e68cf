import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../src/server.ts';

let svc: TestSubgraph;
beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

async function project(p: Principal, key: string, extra: Record<string, unknown> = {}) {
  const r = await svc.call('projects.create', { name: `Proyecto ${key}`, key, ...extra }, p);
  expect(r.ok).toBe(true);
  return r.output.project as { id: string; key: string };
}
async function task(p: Principal, projectId: string, title: string, extra: Record<string, unknown> = {}) {
  const r = await svc.call('tasks.create', { project_id: projectId, title, ...extra }, p);
  expect(r.ok).toBe(true);
  return r.output.task as { id: string; ref: string };
}
const records = (p: Principal, q: unknown) => svc.graphql('query($q: JSON!) { projectsRecords(query: $q) }', { q }, p);
const ok = async (p: Principal, q: unknown) => {
  const r = await records(p, q);
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data.projectsRecords;
};

describe('projectsRecords (records.list for projects, project_tasks, project_columns)', () => {
  it('lists projects, tasks by project key and column, and the columns with their task counts', async () => {
    const owner = testPrincipal();
    const web = await project(owner, 'WEB', { description: 'Sitio público' });
    const ops = await project(owner, 'OPS', { columns: ['Backlog', 'Hecho'] });
    await task(owner, web.id, 'Diseñar portada', { assignee_email: 'ana@acme.co' });
    await task(owner, web.id, 'Publicar', { column: 'Doing', priority: 'high', due_date: '2026-12-01' });
    await task(owner, ops.id, 'Cerrar mes', { column: 'Hecho' });

    const ps = await ok(owner, { source: 'projects' });
    expect(ps).toMatchObject({ source: 'projects', total: 2 });
    expect(ps.rows.map((r: any) => r.key)).toEqual(['OPS', 'WEB']);
    expect((await ok(owner, { source: 'projects', search: 'PÚBLICO' })).rows.map((r: any) => r.key)).toEqual(['WEB']);

    const all = await ok(owner, { source: 'project_tasks' });
    expect(all.total).toBe(3);
    expect(all.rows.map((r: any) => r.ref)).toEqual(['OPS-1', 'WEB-2', 'WEB-1']);
    expect(all.rows[1]).toMatchObject({ ref: 'WEB-2', project_key: 'WEB', title: 'Publicar', column: 'Doing', priority: 'high', due_date: '2026-12-01' });
    expect((await ok(owner, { source: 'project_tasks', ref: 'WEB' })).rows.map((r: any) => r.ref)).toEqual(['WEB-2', 'WEB-1']);
    expect((await ok(owner, { source: 'project_tasks', ref: 'WEB', status: 'To do' })).rows.map((r: any) => r.ref)).toEqual(['WEB-1']);
    expect((await ok(owner, { source: 'project_tasks', search: 'ANA@' })).rows.map((r: any) => r.ref)).toEqual(['WEB-1']);
    expect((await ok(owner, { source: 'project_tasks', search: 'ops-1' })).rows.map((r: any) => r.title)).toEqual(['Cerrar mes']);
    const one = await ok(owner, { source: 'project_tasks', limit: 1 });
    expect(one.rows).toHaveLength(1);
    expect(one.total).toBe(3);
    const rest = await ok(owner, { source: 'project_tasks', limit: 5, cursor: one.next_cursor });
    expect(rest.rows.map((r: any) => r.ref)).toEqual(['WEB-2', 'WEB-1']);
    expect(rest.next_cursor).toBeUndefined();

    const cols = await ok(owner, { source: 'project_columns', ref: 'WEB' });
    expect(cols).toEqual({
      source: 'project_columns', total: 3, rows: [
        { id: 'WEB:To do', project_id: web.id, project_key: 'WEB', column: 'To do', position: 0, tasks: 1 },
        { id: 'WEB:Doing', project_id: web.id, project_key: 'WEB', column: 'Doing', position: 1, tasks: 1 },
        { id: 'WEB:Done', project_id: web.id, project_key: 'WEB', column: 'Done', position: 2, tasks: 0 },
      ],
    });
    const every = await ok(owner, { source: 'project_columns', limit: 100 });
    expect(every.rows.map((r: any) => r.id)).toEqual(['OPS:Backlog', 'OPS:Hecho', 'WEB:To do', 'WEB:Doing', 'WEB:Done']);
    expect((await ok(owner, { source: 'project_columns', search: 'HECHO' })).rows).toMatchObject([{ id: 'OPS:Hecho', tasks: 1 }]);
  });

  it('pages project_columns by cursor, across projects and within one, in board order', async () => {
    const owner = testPrincipal();
    await project(owner, 'WEB');
    await project(owner, 'OPS', { columns: ['Backlog', 'Hecho'] });
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await ok(owner, { source: 'project_columns', limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.rows.length).toBeLessThanOrEqual(2);
      ids.push(...page.rows.map((r: any) => r.id));
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    expect(ids).toEqual(['OPS:Backlog', 'OPS:Hecho', 'WEB:To do', 'WEB:Doing', 'WEB:Done']);
    // One page holding every column carries the total; a partial one does not count what it did not read.
    expect(await ok(owner, { source: 'project_columns', limit: 5 })).toMatchObject({ total: 5 });
    expect((await ok(owner, { source: 'project_columns', limit: 3 })).total).toBeUndefined();

    const first = await ok(owner, { source: 'project_columns', ref: 'WEB', limit: 2 });
    expect(first).toMatchObject({ total: 3, rows: [{ id: 'WEB:To do' }, { id: 'WEB:Doing' }] });
    const second = await ok(owner, { source: 'project_columns', ref: 'WEB', limit: 2, cursor: first.next_cursor });
    expect(second.rows.map((r: any) => r.id)).toEqual(['WEB:Done']);
    expect(second.next_cursor).toBeUndefined();
    // A cursor is good only for the list that gave it: another project's, a projects one, a forged one are refused.
    const bad = [
      { source: 'project_columns', ref: 'OPS', cursor: first.next_cursor },
      { source: 'project_columns', cursor: (await ok(owner, { source: 'projects', limit: 1 })).next_cursor },
      { source: 'project_columns', cursor: 'forged.AAAAAAAAAAAAAAAAAAAAAA' },
    ];
    for (const q of bad) expect((await records(owner, q)).body.errors[0].extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    // Another workspace's cursor is not this one's.
    expect((await records(testPrincipal(), { source: 'project_columns', cursor: first.next_cursor })).body.errors[0].extensions).toMatchObject({ code: 'invalid_input', field: '/cursor' });
  });

  it('refuses what does not fit with the contract code and a JSON Pointer', async () => {
    const owner = testPrincipal();
    const cases: [unknown, string][] = [
      [{ source: 'project_tasks', kind: 'bug' }, '/kind'],
      [{ source: 'projects', ref: 'WEB' }, '/ref'],
      [{ source: 'projects', status: 'open' }, '/status'],
      [{ source: 'project_tasks', limit: 0 }, '/limit'],
      [{ source: 'constructor' }, '/source'],
      [{ source: 'invoices' }, '/source'],
    ];
    for (const [q, field] of cases) {
      const r = await records(owner, q);
      expect(r.body.errors[0].extensions, JSON.stringify(q)).toMatchObject({ code: 'invalid_input', field });
    }
    expect((await records(owner, { source: 'project_tasks', ref: 'NOPE' })).body.errors[0].extensions.code).toBe('not_found');
  });

  it('answers only the caller\'s workspace, and each source only to callers who reach its module', async () => {
    const a = testPrincipal();
    const b = testPrincipal();
    const p = await project(a, 'SEC');
    await task(a, p.id, 'Privado');
    expect(await ok(b, { source: 'project_tasks' })).toEqual({ source: 'project_tasks', rows: [], total: 0 });
    expect(await ok(b, { source: 'project_columns' })).toEqual({ source: 'project_columns', rows: [], total: 0 });
    expect((await records(b, { source: 'project_tasks', ref: 'SEC' })).body.errors[0].extensions.code).toBe('not_found');
    // A key narrowed to the projects module reads projects but not tasks.
    const projectsOnly = { ...a, patterns: ['projects.%'] };
    expect((await ok(projectsOnly, { source: 'projects' })).total).toBe(1);
    expect((await records(projectsOnly, { source: 'project_tasks' })).body.errors[0].extensions.code).toBe('policy_denied');
    const tasksOnly = { ...a, patterns: ['tasks.%'] };
    expect((await ok(tasksOnly, { source: 'project_tasks' })).total).toBe(1);
    expect((await records(tasksOnly, { source: 'project_columns' })).body.errors[0].extensions.code).toBe('policy_denied');
  });
});
