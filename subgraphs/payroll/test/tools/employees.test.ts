import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { MONEY_LIMIT } from '@cuadra/shared';
import { createServer, name, tools } from '../../src/server.ts';
import { MINIMUM_WAGES, minimumWageFor } from '../../src/parameters.ts';

let payroll: TestSubgraph;
const owner = testPrincipal();

beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

let hires = 0;
/** A valid hire with a fresh document number; each test overrides what it is about. */
function hire(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  hires += 1;
  return {
    name: 'Laura Gómez',
    document: { type: 'CC', number: String(1_000_000_000 + hires) },
    email: 'laura@example.co',
    position: 'Contadora',
    hire_date: '2026-03-02',
    salary: { amount: 350_000_000, currency: 'COP' },
    contract_type: 'indefinite',
    arl_class: 1,
    ...overrides,
  };
}

type Employee = { id: string; name: string; status: string; document: { type: string; number: string } };
const employeeOf = (r: unknown) => (r as { output: { employee: Employee } }).output.employee;
const rowsOf = (r: unknown) => (r as { output: { rows: Employee[]; total: number } }).output;

describe('minimum wage table', () => {
  it('picks the wage of the hire year, and the latest one for a year it does not hold', () => {
    expect(minimumWageFor('2025-12-31').amount).toBe(142_350_000);
    expect(minimumWageFor('2026-01-01').amount).toBe(175_090_500);
    expect(minimumWageFor('2031-06-15').year).toBe(2026);
    expect(minimumWageFor('2019-06-15').year).toBe(2026);
    for (const wage of MINIMUM_WAGES) {
      expect(wage.effective_from).toBe(`${wage.year}-01-01`);
      expect(wage.source).toMatch(/^Decreto \d+ de \d{4}/);
    }
  });
});

describe('employees.create', () => {
  it('hires an employee and reads it back, with the document number normalised', async () => {
    const created = await payroll.call('employees.create', hire({ document: { type: 'CC', number: '1.020.304.050' } }), owner);
    expect(created.ok).toBe(true);
    const employee = employeeOf(created);
    expect(employee.id).toMatch(/^emp_/);
    expect(employee).toMatchObject({
      name: 'Laura Gómez', document: { type: 'CC', number: '1020304050' }, hire_date: '2026-03-02',
      salary: { amount: 350_000_000, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1, status: 'active',
    });
    expect(Object.keys(employee)).not.toContain('_id');
    const got = await payroll.call('employees.get', { id: employee.id }, owner);
    expect(got).toMatchObject({ ok: true, output: { employee: { id: employee.id, position: 'Contadora', email: 'laura@example.co' } } });
    expect((got as any).output.employee.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('refuses a COP salary under the minimum wage of the hire year, naming /salary/amount', async () => {
    const ws = testPrincipal();
    const below2026 = await payroll.call('employees.create', hire({ salary: { amount: 175_090_499, currency: 'COP' } }), ws);
    expect(below2026).toMatchObject({ ok: false, code: 'invalid_input', field: '/salary/amount' });
    expect((below2026 as { message: string }).message).toContain('1,750,905');
    expect((await payroll.call('employees.create', hire({ salary: { amount: 175_090_500, currency: 'COP' } }), ws)).ok).toBe(true);
    // A 2025 hire is held to the 2025 wage, and a year the table lacks to the latest one.
    expect((await payroll.call('employees.create', hire({ hire_date: '2025-07-01', salary: { amount: 142_350_000, currency: 'COP' } }), ws)).ok).toBe(true);
    expect(await payroll.call('employees.create', hire({ hire_date: '2025-07-01', salary: { amount: 142_349_999, currency: 'COP' } }), ws))
      .toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
    expect(await payroll.call('employees.create', hire({ hire_date: '2027-01-04', salary: { amount: 150_000_000, currency: 'COP' } }), ws))
      .toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
    // Apprentices are under a labour contract here; only `service` contracts are exempt.
    expect(await payroll.call('employees.create', hire({ contract_type: 'apprenticeship', salary: { amount: 100_000_000, currency: 'COP' } }), ws))
      .toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
  });

  it('does not apply the Colombian minimum to service contracts or to other currencies', async () => {
    const ws = testPrincipal();
    expect((await payroll.call('employees.create', hire({ contract_type: 'service', salary: { amount: 80_000_000, currency: 'COP' } }), ws)).ok).toBe(true);
    expect((await payroll.call('employees.create', hire({ salary: { amount: 150_000, currency: 'USD' } }), ws)).ok).toBe(true);
  });

  it('refuses input that does not fit the schema with a JSON Pointer', async () => {
    const { name: _omit, ...nameless } = hire();
    expect(await payroll.call('employees.create', nameless, owner)).toMatchObject({ code: 'invalid_input', field: '/name' });
    expect(await payroll.call('employees.create', hire({ document: { type: 'DNI', number: '123456' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/document/type' });
    expect(await payroll.call('employees.create', hire({ document: { type: 'CC' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/document/number' });
    expect(await payroll.call('employees.create', hire({ email: 'laura-at-example' }), owner)).toMatchObject({ code: 'invalid_input', field: '/email' });
    expect(await payroll.call('employees.create', hire({ hire_date: '2026-02-30' }), owner)).toMatchObject({ code: 'invalid_input', field: '/hire_date' });
    expect(await payroll.call('employees.create', hire({ hire_date: '02/03/2026' }), owner)).toMatchObject({ code: 'invalid_input', field: '/hire_date' });
    expect(await payroll.call('employees.create', hire({ salary: { amount: 0, currency: 'COP' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
    expect(await payroll.call('employees.create', hire({ salary: { amount: 2_000_000.5, currency: 'COP' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
    expect(await payroll.call('employees.create', hire({ salary: { amount: '2000000', currency: 'COP' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
    expect(await payroll.call('employees.create', hire({ salary: { amount: 200_000_000, currency: 'cop' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/salary/currency' });
    expect(await payroll.call('employees.create', hire({ salary: { amount: 200_000_000, currency: 'COP', period: 'month' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/salary/period' });
    expect(await payroll.call('employees.create', hire({ contract_type: 'freelance' }), owner)).toMatchObject({ code: 'invalid_input', field: '/contract_type' });
    expect(await payroll.call('employees.create', hire({ arl_class: 6 }), owner)).toMatchObject({ code: 'invalid_input', field: '/arl_class' });
    expect(await payroll.call('employees.create', hire({ arl_class: 0 }), owner)).toMatchObject({ code: 'invalid_input', field: '/arl_class' });
    expect(await payroll.call('employees.create', hire({ status: 'terminated' }), owner)).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await payroll.call('employees.create', [hire()], owner)).toMatchObject({ code: 'invalid_input', field: '' });
  });

  it('refuses a document number that is not one of its type', async () => {
    expect(await payroll.call('employees.create', hire({ document: { type: 'CC', number: 'AB-12345' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/document/number' });
    expect(await payroll.call('employees.create', hire({ document: { type: 'CE', number: '12' } }), owner)).toMatchObject({ code: 'invalid_input', field: '/document/number' });
    const passport = await payroll.call('employees.create', hire({ document: { type: 'PASSPORT', number: 'ax 123 456' } }), owner);
    expect(employeeOf(passport).document).toEqual({ type: 'PASSPORT', number: 'AX123456' });
  });

  it('refuses a second employee with the same document number in one workspace, but not in another', async () => {
    const ws = testPrincipal();
    expect((await payroll.call('employees.create', hire({ document: { type: 'CC', number: '52.123.456' } }), ws)).ok).toBe(true);
    const again = await payroll.call('employees.create', hire({ name: 'Otra Persona', document: { type: 'CC', number: '52123456' } }), ws);
    expect(again).toMatchObject({ ok: false, code: 'conflict' });
    expect((again as { message: string }).message).toContain('52123456');
    const listed = rowsOf(await payroll.call('employees.list', {}, ws));
    expect(listed.total).toBe(1);
    expect((await payroll.call('employees.create', hire({ document: { type: 'CC', number: '52123456' } }), testPrincipal())).ok).toBe(true);
  });

  it('is refused to a viewer and a member (role), a read-only key (pattern) and a read-only token (scope)', async () => {
    expect(await payroll.call('employees.create', hire(), { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    expect(await payroll.call('employees.create', hire(), { ...owner, role: 'member' })).toMatchObject({ code: 'policy_denied' });
    expect(await payroll.call('employees.create', hire(), { ...owner, patterns: ['%:read'] })).toMatchObject({ code: 'policy_denied' });
    expect(await payroll.call('employees.create', hire(), { ...owner, scopes: ['tools:read'] })).toMatchObject({ code: 'insufficient_scope' });
    // The accountant role and a key narrowed to employees.% do reach it.
    expect((await payroll.call('employees.create', hire(), { ...owner, role: 'accountant' })).ok).toBe(true);
    expect((await payroll.call('employees.create', hire(), { ...owner, patterns: ['employees.%'] })).ok).toBe(true);
  });
});

describe('money bounds (CONTRACT §9: every amount within ±10^15 minor units)', () => {
  /** Every number a schema accepts, with the pointer to it: [pointer, minimum, maximum]. */
  function numbersOf(schema: any, pointer: string, out: [string, number, number][]): [string, number, number][] {
    if (!schema || typeof schema !== 'object') return out;
    const types = [schema.type].flat();
    if (types.includes('integer') || types.includes('number')) {
      const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum : -Infinity);
      const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum : Infinity);
      out.push([pointer, lo, hi]);
    }
    for (const [key, sub] of Object.entries(schema.properties ?? {})) numbersOf(sub, `${pointer}/${key}`, out);
    if (schema.items) numbersOf(schema.items, `${pointer}/0`, out);
    for (const k of ['oneOf', 'anyOf', 'allOf'] as const) for (const sub of schema[k] ?? []) numbersOf(sub, pointer, out);
    return out;
  }

  it('bounds every number of every payroll tool\'s input within ±10^15', () => {
    const unbounded: string[] = [];
    let amounts = 0;
    for (const tool of tools) {
      for (const [pointer, lo, hi] of numbersOf(tool.input, '', [])) {
        if (!(lo >= -MONEY_LIMIT && hi <= MONEY_LIMIT)) unbounded.push(`${tool.name} ${pointer} [${lo}, ${hi}]`);
        if (/amount/.test(pointer)) amounts += 1;
      }
    }
    expect(unbounded).toEqual([]);
    // The money inputs are there to be checked: salary, salary changes, novelties, the approved net pay.
    expect(amounts).toBeGreaterThanOrEqual(4);
  });

  it('refuses a salary above 10^15 minor units (2^53 − 1 included) at /salary/amount, and takes 10^15', async () => {
    const ws = testPrincipal();
    for (const amount of [Number.MAX_SAFE_INTEGER, MONEY_LIMIT + 1]) {
      expect(await payroll.call('employees.create', hire({ salary: { amount, currency: 'COP' } }), ws)).toMatchObject({ code: 'invalid_input', field: '/salary/amount' });
    }
    const top = await payroll.call('employees.create', hire({ salary: { amount: MONEY_LIMIT, currency: 'COP' } }), ws);
    expect(employeeOf(top).status).toBe('active');
    expect(await payroll.call('employees.change_salary', { id: employeeOf(top).id, amount: MONEY_LIMIT + 1, effective_from: '2026-04-01' }, ws)).toMatchObject({ code: 'invalid_input', field: '/amount' });
    expect(await payroll.call('payroll.novelties.create', { employee_id: employeeOf(top).id, type: 'commission', date: '2026-03-10', amount: MONEY_LIMIT + 1 }, ws)).toMatchObject({ code: 'invalid_input', field: '/amount' });
  });

  it('refuses a run whose computed amounts would leave ±10^15, naming the employee, and stores nothing', async () => {
    const ws = testPrincipal();
    // One employee on 10^15 a month: the salary alone fits, but the entry's debits are the earnings
    // (10^15) plus the employer's contributions and provisions, beyond the bound.
    const rich = employeeOf(await payroll.call('employees.create', hire({ name: 'Fortunato Rico', salary: { amount: MONEY_LIMIT, currency: 'COP' } }), ws));
    const refused = await payroll.call('payroll.run', { month: '2026-04' }, ws);
    expect(refused).toMatchObject({ code: 'invalid_input', field: '/month' });
    expect(refused.message).toContain('Fortunato Rico');
    expect(await payroll.db.collection('payroll_runs').countDocuments({ workspace: ws.workspace })).toBe(0);
    // A salary the run can carry is computed as usual.
    expect((await payroll.call('employees.change_salary', { id: rich.id, amount: 1_000_000_000_000, effective_from: '2026-04-01' }, ws)).ok).toBe(true);
    expect((await payroll.call('payroll.run', { month: '2026-04' }, ws)).ok).toBe(true);
  });
});

describe('employees.get', () => {
  it('answers not_found for an unknown id and for another workspace’s employee', async () => {
    expect(await payroll.call('employees.get', { id: 'emp_doesnotexist' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const other = testPrincipal();
    const theirs = employeeOf(await payroll.call('employees.create', hire({ name: 'Secreta Salazar' }), other));
    expect((await payroll.call('employees.get', { id: theirs.id }, other)).ok).toBe(true);
    expect(await payroll.call('employees.get', { id: theirs.id }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('validates its input and its reach', async () => {
    expect(await payroll.call('employees.get', {}, owner)).toMatchObject({ code: 'invalid_input', field: '/id' });
    expect(await payroll.call('employees.get', { id: 42 }, owner)).toMatchObject({ code: 'invalid_input', field: '/id' });
    expect(await payroll.call('employees.get', { id: 'emp_x', expand: true }, owner)).toMatchObject({ code: 'invalid_input', field: '/expand' });
    expect(await payroll.call('employees.get', { id: 'emp_x' }, { ...owner, patterns: ['parties.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await payroll.call('employees.get', { id: 'emp_x' }, { ...owner, scopes: ['sites.edit'] })).toMatchObject({ code: 'insufficient_scope' });
    // A read-only token and a viewer reach reads.
    expect(await payroll.call('employees.get', { id: 'emp_x' }, { ...owner, scopes: ['tools:read'], role: 'viewer' })).toMatchObject({ code: 'not_found' });
  });
});

describe('employees.list', () => {
  it('lists newest first, filters by status, searches name and document, pages by cursor', async () => {
    const ws = testPrincipal();
    const names = ['Carlos Ruiz', 'andrea Pérez', 'Beatriz Mora'];
    const ids: string[] = [];
    for (const [i, n] of names.entries()) {
      ids.push(employeeOf(await payroll.call('employees.create', hire({ name: n, document: { type: 'CC', number: `7900000${i}` } }), ws)).id);
    }
    const all = rowsOf(await payroll.call('employees.list', {}, ws));
    expect(all.rows.map((e) => e.name)).toEqual(['Beatriz Mora', 'andrea Pérez', 'Carlos Ruiz']);
    expect(all.total).toBe(3);

    // Nothing terminates an employee yet (that is a payroll novelty); mark one in the database.
    await payroll.db.collection<{ _id: string }>('employees').updateOne({ _id: ids[0] }, { $set: { status: 'terminated' } });
    expect(rowsOf(await payroll.call('employees.list', { status: 'terminated' }, ws)).rows.map((e) => e.name)).toEqual(['Carlos Ruiz']);
    expect(rowsOf(await payroll.call('employees.list', { status: 'active' }, ws)).rows).toHaveLength(2);

    expect(rowsOf(await payroll.call('employees.list', { search: 'MORA' }, ws)).rows.map((e) => e.name)).toEqual(['Beatriz Mora']);
    expect(rowsOf(await payroll.call('employees.list', { search: '79.000.001' }, ws)).rows.map((e) => e.name)).toEqual(['andrea Pérez']);
    expect(rowsOf(await payroll.call('employees.list', { search: '.*' }, ws)).rows).toEqual([]);

    const first = rowsOf(await payroll.call('employees.list', { limit: 1 }, ws)) as { next_cursor?: string };
    const page = rowsOf(await payroll.call('employees.list', { limit: 1, cursor: first.next_cursor }, ws));
    expect(page.rows.map((e) => e.name)).toEqual(['andrea Pérez']);
    expect(page.total).toBe(3);
  });

  it('never shows another workspace’s employees', async () => {
    const other = testPrincipal();
    await payroll.call('employees.create', hire({ name: 'Ajena Ortiz' }), other);
    expect(await payroll.call('employees.list', { search: 'ajena' }, owner)).toMatchObject({ ok: true, output: { rows: [] } });
    expect(rowsOf(await payroll.call('employees.list', { search: 'ajena' }, other)).rows).toHaveLength(1);
  });

  it('refuses bad filters with a JSON Pointer, and callers it does not reach', async () => {
    expect(await payroll.call('employees.list', { limit: 101 }, owner)).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await payroll.call('employees.list', { limit: 0 }, owner)).toMatchObject({ code: 'invalid_input', field: '/limit' });
    expect(await payroll.call('employees.list', { offset: -1 }, owner)).toMatchObject({ code: 'invalid_input', field: '/offset' });
    expect(await payroll.call('employees.list', { status: 'on_leave' }, owner)).toMatchObject({ code: 'invalid_input', field: '/status' });
    expect(await payroll.call('employees.list', { search: '' }, owner)).toMatchObject({ code: 'invalid_input', field: '/search' });
    expect(await payroll.call('employees.list', {}, { ...owner, patterns: ['invoices.%'] })).toMatchObject({ code: 'policy_denied' });
    expect(await payroll.call('employees.list', {}, { ...owner, role: 'no_such_role' })).toMatchObject({ code: 'policy_denied' });
    expect(await payroll.call('employees.list', {}, { ...owner, scopes: [] })).toMatchObject({ code: 'insufficient_scope' });
    expect((await payroll.call('employees.list', {}, { ...owner, scopes: ['tools:read'] })).ok).toBe(true);
  });
});

describe('the Employee graph', () => {
  it('resolves employees of the caller’s workspace only, by query and by entity reference', async () => {
    const ws = testPrincipal();
    const mine = employeeOf(await payroll.call('employees.create', hire({ name: 'Diana Vélez', position: 'Diseñadora', hire_date: '2025-11-03' }), ws));
    const theirs = employeeOf(await payroll.call('employees.create', hire({ name: 'Externo' }), testPrincipal()));

    const one = await payroll.graphql('query($id: ID!) { employee(id: $id) { id name position status hireDate } }', { id: mine.id }, ws);
    expect(one.body.data.employee).toEqual({ id: mine.id, name: 'Diana Vélez', position: 'Diseñadora', status: 'active', hireDate: '2025-11-03' });
    const foreign = await payroll.graphql('query($id: ID!) { employee(id: $id) { id name } }', { id: theirs.id }, ws);
    expect(foreign.body.data.employee).toBeNull();

    const listed = await payroll.graphql('{ employees(status: "active") { id } }', {}, ws);
    expect(listed.body.data.employees).toEqual([{ id: mine.id }]);
    expect((await payroll.graphql('{ employees(status: "terminated") { id } }', {}, ws)).body.data.employees).toEqual([]);

    const entities = await payroll.graphql(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Employee { id name } } }',
      { r: [{ __typename: 'Employee', id: mine.id }, { __typename: 'Employee', id: theirs.id }] },
      ws,
    );
    expect(entities.body.data._entities).toEqual([{ id: mine.id, name: 'Diana Vélez' }, null]);
  });

  it('does not expose salary or identity document on the graph', async () => {
    const r = await payroll.graphql('{ employees { id salary } }', {}, owner);
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});

describe('the subgraph door', () => {
  it('refuses a call without a gateway assertion', async () => {
    const r = await payroll.graphql('{ employees { id } }', {}, null);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
  });

  it('answers unknown tools, and tools of modules it does not own, with unknown_tool', async () => {
    expect(await payroll.call('employees.fire', {}, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
    expect(await payroll.call('parties.create', { name: 'X', kind: 'customer' }, owner)).toMatchObject({ ok: false, code: 'unknown_tool' });
  });
});
