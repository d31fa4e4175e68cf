import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';

let svc: TestSubgraph;
const owner = testPrincipal();

beforeAll(async () => {
  svc = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await svc?.close();
});

type Project = { id: string; key: string; name: string; description: string | null; columns: string[] };
const projectOf = (r: unknown) => (r as { output: { project: Project } }).output.project;
const rowsOf = (r: unknown) => (r as { output: { rows: Project[]; total?: number; next_cursor?: string } }).output;

describe('projects.create', () => {
  it('creates a board with the default columns and lists it', async () => {
    const ws = testPrincipal();
    const created = await svc.call('projects.create', { name: 'Sitio web', key: 'WEB' }, ws);
    expect(created.ok).toBe(true);
    const project = projectOf(created);
    expect(project.id).toMatch(/^prj_/);
    expect(project).toMatchObject({ key: 'WEB', name: 'Sitio web', description: null, columns: ['To do', 'Doing', 'Done'] });
    expect(Object.keys(project)).not.toContain('task_seq');
    expect(rowsOf(await svc.call('projects.list', {}, ws)).rows.map((p) => p.id)).toEqual([project.id]);
  });

  it('keeps the columns it is given, in order', async () => {
    const columns = ['Backlog', 'En curso', 'Revisión', 'Hecho'];
    const project = projectOf(await svc.call('projects.create', { name: 'Cierre contable', key: 'CIERRE26', description: 'Cierre de año', columns }, owner));
    expect(project.columns).toEqual(columns);
    expect(project.description).toBe('Cierre de año');
  });

  it('refuses input that does not fit the schema with a JSON Pointer', async () => {
    const call = (input: Record<string, unknown>) => svc.call('projects.create', input, owner);
    expect(await call({ key: 'ABC' })).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect(await call({ name: 'A' })).toMatchObject({ code: 'invalid_input', field: '/key' });
    for (const key of ['web', 'W', '1WEB', 'WEB-1', 'ABCDEFGHIJK']) {
      expect(await call({ name: 'A', key })).toMatchObject({ code: 'invalid_input', field: '/key' });
    }
    expect(await call({ name: 'A', key: 'AB', columns: [] })).toMatchObject({ code: 'invalid_input', field: '/columns' });
    expect(await call({ name: 'A', key: 'AB', columns: ['Done', 'Done'] })).toMatchObject({ code: 'invalid_input', field: '/columns' });
    expect(await call({ name: 'A', key: 'AB', columns: ['To do', ''] })).toMatchObject({ code: 'invalid_input', field: '/columns/1' });
    expect(await call({ name: 'A', key: 'AB', columns: ['To do', 'Done '] })).toMatchObject({ code: 'invalid_input', field: '/columns/1' });
    expect(await call({ name: 'A', key: 'AB', owner: 'me' })).toMatchObject({ code: 'invalid_input', field: '/owner' });
    // None of the refused inputs was written.
    expect(rowsOf(await svc.call('projects.list', { search: 'a' }, owner)).rows.map((p) => p.key)).not.toContain('AB');
  });

  it('refuses a second project with the same key in one workspace, but not in another', async () => {
    const ws = testPrincipal();
    expect((await svc.call('projects.create', { name: 'Operaciones', key: 'OPS' }, ws)).ok).toBe(true);
    const again = await svc.call('projects.create', { name: 'Otra', key: 'OPS' }, ws);
    expect(again).toMatchObject({ ok: false, code: 'conflict' });
    expect((again as { message: string }).message).toContain('OPS');
    expect(rowsOf(await svc.call('projects.list', {}, ws)).total).toBe(1);
    expect((await svc.call('projects.create', { name: 'Operaciones', key: 'OPS' }, testPrincipal())).ok).toBe(true);
  });

  it('is refused to a viewer (role), a read-only key (pattern) and a read-only token (scope); a member may', async () => {
    const input = { name: 'P', key: 'PERM' };
    expect(await svc.call('projects.create', input, { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('projects.create', input, { ...owner, patterns: ['%:read'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('projects.create', input, { ...owner, patterns: ['tasks.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('projects.create', input, { ...owner, scopes: ['tools:read'] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await svc.call('projects.create', input, { ...owner, role: 'member' })).ok).toBe(true);
  });
});

describe('projects.list', () => {
  it('lists newest first, searches case-insensitively and pages', async () => {
    const ws = testPrincipal();
    for (const [n, key] of [['Alfa', 'ALFA'], ['Beta Web', 'BETA'], ['Gamma Web', 'GAMMA']]) {
      expect((await svc.call('projects.create', { name: n, key }, ws)).ok).toBe(true);
    }
    const all = rowsOf(await svc.call('projects.list', {}, ws));
    expect(all.rows.map((p) => p.key)).toEqual(['GAMMA', 'BETA', 'ALFA']);
    expect(rowsOf(await svc.call('projects.list', { search: 'WEB' }, ws)).rows.map((p) => p.key)).toEqual(['GAMMA', 'BETA']);
    expect(rowsOf(await svc.call('projects.list', { search: '(' }, ws)).rows).toEqual([]);
    const first = rowsOf(await svc.call('projects.list', { limit: 2 }, ws));
    const page = rowsOf(await svc.call('projects.list', { limit: 2, cursor: first.next_cursor }, ws));
    expect(page).toEqual({ total: 3, rows: [expect.objectContaining({ key: 'ALFA' })] });
  });

  it('never shows another workspace’s projects', async () => {
    const other = testPrincipal();
    await svc.call('projects.create', { name: 'Proyecto Secreto', key: 'SECRET' }, other);
    expect(await svc.call('projects.list', { search: 'secreto' }, owner)).toMatchObject({ ok: true, output: { rows: [] } });
  });

  it('refuses bad filters with a JSON Pointer, and callers it does not reach', async () => {
    expect(await svc.call('projects.list', { limit: 101 }, owner)).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await svc.call('projects.list', { cursor: '' }, owner)).toMatchObject({ code: 'invalid_input', field: '/cursor' });
    expect(await svc.call('projects.list', { search: '' }, owner)).toMatchObject({ code: 'invalid_input', field: '/search' });
    expect(await svc.call('projects.list', { status: 'open' }, owner)).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await svc.call('projects.list', {}, { ...owner, patterns: ['tasks.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await svc.call('projects.list', {}, { ...owner, scopes: ['sites.edit'] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await svc.call('projects.list', {}, { ...owner, role: 'viewer', scopes: ['tools:read'] })).ok).toBe(true);
  });
});

describe('the Project graph', () => {
  it('resolves projects of the caller’s workspace only, by query and by entity reference', async () => {
    const ws = testPrincipal();
    const mine = projectOf(await svc.call('projects.create', { name: 'Mío', key: 'MINE', columns: ['Abierto', 'Cerrado'] }, ws));
    const theirs = projectOf(await svc.call('projects.create', { name: 'Ajeno', key: 'THEIRS' }, testPrincipal()));

    const one = await svc.graphql('query($id: ID!) { project(id: $id) { id key name columns tasks { id } } }', { id: mine.id }, ws);
    expect(one.body.data.project).toEqual({ id: mine.id, key: 'MINE', name: 'Mío', columns: ['Abierto', 'Cerrado'], tasks: [] });
    expect((await svc.graphql('query($id: ID!) { project(id: $id) { id } }', { id: theirs.id }, ws)).body.data.project).toBeNull();
    expect((await svc.graphql('{ projects(limit: 10) { key } }', {}, ws)).body.data.projects).toEqual([{ key: 'MINE' }]);

    const entities = await svc.graphql(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Project { id key } } }',
      { r: [{ __typename: 'Project', id: mine.id }, { __typename: 'Project', id: theirs.id }] },
      ws,
    );
    expect(entities.body.data._entities).toEqual([{ id: mine.id, key: 'MINE' }, null]);
  });
});

describe('the subgraph door', () => {
  it('refuses a call without a gateway assertion', async () => {
    const r = await svc.graphql('{ projects { id } }', {}, null);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
  });

  it('answers unknown tools, and tools of modules it does not own, with unknown_tool', async () => {
    expect(await svc.call('projects.archive', {}, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
    expect(await svc.call('employees.list', {}, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
  });
});
