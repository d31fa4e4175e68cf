import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peopleOf } from './helpers/oauth.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// records.list answers `members` and `roles` from the gateway's own data (no subgraph holds it),
// with the rows of members.list and roles.list, bounded pages, and the reach of their module.
let sys: TestSystem;
let owner: string;
let workspace: string;
let other: string;
// People are shared by every file of the system: addresses no other test uses.
const mail = {
  ana: uniqueAddress('ana@fuentes.example'),
  beto: uniqueAddress('beto@fuentes.example'),
  carla: uniqueAddress('carla@fuentes.example'),
  dario: uniqueAddress('dario@fuentes.example'),
  elena: uniqueAddress('elena@fuentes.example'),
  zoe: uniqueAddress('zoe@otra.example'),
};

async function ok(tool: string, input: unknown, as = owner): Promise<any> {
  const r = await sys.invoke(tool, input, as);
  if (r.status !== 200) throw new Error(`${tool} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.output;
}

/** Every row of a source, page by page. */
async function all(input: Record<string, unknown>, as = owner): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await ok('records.list', { ...input, ...(cursor ? { cursor } : {}) }, as);
    rows.push(...page.rows);
    cursor = page.next_cursor;
    if (!cursor) return rows;
  }
  throw new Error('the pages never ended');
}

beforeAll(async () => {
  sys = await startTestSystem('gateway_sources');
  const ws = await sys.workspace('Fuentes SAS');
  owner = ws.api_key;
  workspace = ws.workspace_id;
  const elsewhere = await sys.workspace('Otra SAS');
  other = elsewhere.api_key;
  // Members as an operator would seed them (joining through the claim pages is members.test.ts's).
  const { people, db } = await peopleOf(sys);
  for (const [name, email] of [['Ana', mail.ana], ['Beto', mail.beto], ['Carla', mail.carla]]) {
    const user = await people.createUser({ email, name, password: 'una contraseña larga 2026' });
    await people.setMembership(workspace, user._id, name === 'Ana' ? 'owner' : 'member');
  }
  const stranger = await people.createUser({ email: mail.zoe, name: 'Zoe', password: 'una contraseña larga 2026' });
  await people.setMembership(elsewhere.workspace_id, stranger._id, 'owner');
  await db.close();
  await ok('members.invite', { email: mail.dario, role: 'viewer', name: 'Darío' });
  await ok('members.invite', { email: mail.elena, role: 'member', name: 'Elena' });
  await ok('roles.create', { key: 'billing_clerk', name: 'Billing clerk', patterns: ['invoices.%'] });
  await ok('roles.create', { key: 'sales_rep', name: 'Sales rep', patterns: ['parties.%'] });
});
afterAll(async () => {
  await sys?.stop();
});

describe('records.list over the gateway\'s own sources', () => {
  it('answers members with the rows of members.list: members newest first, then pending invitations, page by page', async () => {
    const listed = (await ok('members.list', {})).rows;
    const first = await ok('records.list', { source: 'members', limit: 2 });
    expect(first).toMatchObject({ source: 'members', next_cursor: expect.any(String) });
    expect(first.total).toBeUndefined();
    expect(first.rows.map((r: any) => r.name)).toEqual(['Carla', 'Beto']);
    const rows = await all({ source: 'members', limit: 2 });
    expect(rows.map((r: any) => [r.email, r.status])).toEqual([
      [mail.carla, 'active'], [mail.beto, 'active'], [mail.ana, 'active'],
      [mail.elena, 'invited'], [mail.dario, 'invited'],
    ]);
    // The same rows as members.list (plus the id the canvas selects by).
    expect(rows.map(({ id: _id, ...r }: any) => r)).toEqual(expect.arrayContaining(listed));
    expect(rows).toHaveLength(listed.length);
    expect(rows[0]).toMatchObject({ id: rows[0].user_id, role: 'member', joined_at: expect.any(String) });
    expect(rows[3]).toMatchObject({ id: expect.stringMatching(/^ivt_/), user_id: null, role: 'member', name: 'Elena' });
    // Every page size walks the same rows exactly once.
    for (const limit of [1, 3, 5, 8]) expect((await all({ source: 'members', limit })).map((r: any) => r.id)).toEqual(rows.map((r: any) => r.id));

    expect((await all({ source: 'members', status: 'invited', limit: 1 })).map((r: any) => r.name)).toEqual(['Elena', 'Darío']);
    expect((await ok('records.list', { source: 'members', status: 'active' })).rows.map((r: any) => r.name)).toEqual(['Carla', 'Beto', 'Ana']);
    expect((await ok('records.list', { source: 'members', search: 'BETO' })).rows.map((r: any) => r.email)).toEqual([mail.beto]);
  });

  it('answers roles with the rows of roles.list: custom roles newest first, then the built-in ones, page by page', async () => {
    const listed = (await ok('roles.list', {})).rows;
    const first = await ok('records.list', { source: 'roles', limit: 3 });
    expect(first).toMatchObject({ source: 'roles', total: 8, next_cursor: expect.any(String) });
    expect(first.rows.map((r: any) => r.key)).toEqual(['sales_rep', 'billing_clerk', 'owner']);
    const rows = await all({ source: 'roles', limit: 3 });
    expect(rows.map((r: any) => r.key)).toEqual(['sales_rep', 'billing_clerk', 'owner', 'admin', 'accountant', 'member', 'viewer', 'agent']);
    expect(rows.map(({ id: _id, ...r }: any) => r)).toEqual(expect.arrayContaining(listed));
    expect(rows[0]).toMatchObject({ id: 'sales_rep', name: 'Sales rep', patterns: ['parties.%'], built_in: false });
    expect(rows[2]).toMatchObject({ id: 'owner', built_in: true });
    for (const limit of [1, 2, 6, 8]) expect((await all({ source: 'roles', limit })).map((r: any) => r.id)).toEqual(rows.map((r: any) => r.id));
    const found = await ok('records.list', { source: 'roles', search: 'clerk' });
    expect(found.rows.map((r: any) => r.key)).toEqual(['billing_clerk']);
    expect(found.total).toBeUndefined();
  });

  it('refuses what the sources do not have: an unknown status, a kind, a ref, a forged cursor', async () => {
    expect((await sys.invoke('records.list', { source: 'members', status: 'fired' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect((await sys.invoke('records.list', { source: 'members', kind: 'person' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/kind' });
    expect((await sys.invoke('records.list', { source: 'roles', ref: 'x' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/ref' });
    const roles = await ok('records.list', { source: 'roles', limit: 1 });
    // A cursor of one source is no cursor of another.
    expect((await sys.invoke('records.list', { source: 'members', cursor: roles.next_cursor }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/cursor' });
  });

  it('needs the reach of members.list and roles.list', async () => {
    const invoicesOnly = (await sys.key(workspace, 'owner', ['invoices.%'])).api_key;
    expect((await sys.invoke('records.list', { source: 'members' }, invoicesOnly)).body).toMatchObject({ code: 'policy_denied' });
    // records.list itself is reached, the members data is not.
    const recordsOnly = (await sys.key(workspace, 'owner', ['records.%', 'roles.%'])).api_key;
    expect((await sys.invoke('records.list', { source: 'members' }, recordsOnly)).body).toMatchObject({ code: 'policy_denied' });
    expect((await ok('records.list', { source: 'roles' }, recordsOnly)).total).toBe(8);
    // A viewer reaches members.list: it reads the source too.
    const viewer = (await sys.key(workspace, 'viewer')).api_key;
    expect((await ok('records.list', { source: 'members', status: 'active' }, viewer)).rows).toHaveLength(3);
  });

  it('never shows another workspace\'s members or roles', async () => {
    const theirs = await all({ source: 'members' }, other);
    expect(theirs.map((r: any) => r.email)).toEqual([mail.zoe]);
    const ours = await all({ source: 'members' });
    expect(ours.map((r: any) => r.email)).not.toContain(mail.zoe);
    expect((await all({ source: 'roles' }, other)).map((r: any) => r.key)).not.toContain('billing_clerk');
    // A cursor given to one workspace is refused in another.
    const page = await ok('records.list', { source: 'members', limit: 1 });
    expect((await sys.invoke('records.list', { source: 'members', cursor: page.next_cursor }, other)).body).toMatchObject({ code: 'invalid_input', field: '/cursor' });
  });

  it('names members and roles among the sources records.list answers in GET /v1/tools', async () => {
    const tools = (await sys.fetch('/v1/tools', { key: owner })).body.tools as { name: string; description: string }[];
    const description = tools.find((t) => t.name === 'records.list')!.description;
    const answered = /answered today: ([^)]*)\)/.exec(description)![1].split(', ');
    expect(answered).toEqual(expect.arrayContaining(['members', 'roles']));
  });
});
