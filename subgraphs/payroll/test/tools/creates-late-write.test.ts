import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killedAndSettled, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { createServer, name } from '../../src/server.ts';
import { hirer } from '../support.ts';

// The late write after a kill (subgraphs/crm/test/tools/parties-late-write.test.ts), for payroll's
// creates: a keyed payroll.novelties.create or employees.create whose process dies with its insert
// already sent. The store applies that insert late — after recovery settled the dead attempt as
// having written nothing (no record carried its run yet) and handed its key back. The retry then
// made a second novelty under a new random id (a bonus paid twice in the period's run), or — for an
// employee, whose document number is unique — was refused `conflict` by its own employee. Under the
// call's repeatable id (repeatableId, runs.ts) the two inserts collide on `_id` and the retry
// answers the record that exists.
//
// The order is forced, not hoped for: the dead attempt's insert is held in this process until the
// test lets it reach the store (holdNextInsert).

let payroll: TestSubgraph;
const hire = hirer(() => payroll);

beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

async function storedIn(collection: string, owner: Principal) {
  return payroll.db.collection(collection).find({ workspace: owner.workspace }).toArray();
}

/** A keyed `tool` call killed inside its insert into `collection`, settled by recovery as having written nothing (its key handed back). */
const killed = (owner: Principal, tool: string, collection: string, input: Record<string, unknown>, key: string) => killedAndSettled(payroll, owner, { tool, collection, input, key });

describe('a keyed payroll.novelties.create whose insert lands after its dead attempt was settled as having written nothing', () => {
  const bonus = (employeeId: string) => ({ employee_id: employeeId, type: 'bonus', date: '2026-03-10', amount: 50_000_000, salary_type: false, label: 'Bonificación de marzo' });

  it('lands before the retry: the retry answers that novelty, and no second bonus is recorded', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    const held = await killed(owner, 'payroll.novelties.create', 'payroll_novelties', bonus(e.id), 'nov-1');
    expect(await held.land()).toBe('stored');

    const retry = await payroll.call('payroll.novelties.create', bonus(e.id), owner, { idempotencyKey: 'nov-1' });
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    expect((await storedIn('payroll_novelties', owner)).map((n) => n._id)).toEqual([retry.output.novelty.id]);
    const listed = (await payroll.output('payroll.novelties.list', {}, owner)).rows.map((n: { id: string }) => n.id);
    expect(listed).toEqual([retry.output.novelty.id]);
  });

  it('lands after the retry recorded the novelty: refused as the same novelty, one bonus stays', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    const held = await killed(owner, 'payroll.novelties.create', 'payroll_novelties', bonus(e.id), 'nov-2');
    const retry = await payroll.call('payroll.novelties.create', bonus(e.id), owner, { idempotencyKey: 'nov-2' });
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    expect(await held.land()).toBe('duplicate');
    expect((await storedIn('payroll_novelties', owner)).map((n) => n._id)).toEqual([retry.output.novelty.id]);
  });

  it('another call (another key) with the same input still records a second novelty', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    const a = await payroll.call('payroll.novelties.create', bonus(e.id), owner, { idempotencyKey: 'nov-3' });
    const b = await payroll.call('payroll.novelties.create', bonus(e.id), owner, { idempotencyKey: 'nov-4' });
    expect(a.ok && b.ok).toBe(true);
    expect(a.output.novelty.id).not.toBe(b.output.novelty.id);
    expect(await storedIn('payroll_novelties', owner)).toHaveLength(2);
  });
});

describe('a keyed employees.create whose insert lands after its dead attempt was settled as having written nothing', () => {
  const person = { name: 'Marta Ríos', document: { type: 'CC', number: '52123456' }, position: 'Auxiliar contable', hire_date: '2026-02-02', salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1 };

  it('lands before the retry: the retry answers its own employee instead of refusing a duplicate document number', async () => {
    const owner = testPrincipal();
    const held = await killed(owner, 'employees.create', 'employees', person, 'emp-1');
    expect(await held.land()).toBe('stored');
    const retry = await payroll.call('employees.create', person, owner, { idempotencyKey: 'emp-1' });
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    expect((await storedIn('employees', owner)).map((e) => e._id)).toEqual([retry.output.employee.id]);
    // Another call (another key) hiring the same document number is still refused.
    expect(await payroll.call('employees.create', person, owner, { idempotencyKey: 'emp-2' })).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('lands after the retry hired: refused as the same employee, one employee stays', async () => {
    const owner = testPrincipal();
    const held = await killed(owner, 'employees.create', 'employees', person, 'emp-3');
    const retry = await payroll.call('employees.create', person, owner, { idempotencyKey: 'emp-3' });
    expect(retry.ok, JSON.stringify(retry)).toBe(true);
    expect(await held.land()).toBe('duplicate');
    expect((await storedIn('employees', owner)).map((e) => e._id)).toEqual([retry.output.employee.id]);
  });
});

describe('a keyed payroll.run whose insert lands after its dead attempt was settled as having written nothing', () => {
  it('lands before the retry: the retry answers that run (200), not conflict with its own run', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    const held = await killed(owner, 'payroll.run', 'payroll_runs', { month: '2026-03' }, 'run-1');
    expect(await held.land()).toBe('stored');
    const retry = await payroll.call('payroll.run', { month: '2026-03' }, owner, { idempotencyKey: 'run-1' });
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    const runs = await storedIn('payroll_runs', owner);
    expect(runs.map((r) => [r._id, r.status])).toEqual([[retry.output.run.id, 'computed']]);
    expect(retry.output.payslips.map((p: { employee_id: string }) => p.employee_id)).toEqual([e.id]);
    // Another call (another key) running the same month is still refused: the period has its run.
    expect(await payroll.call('payroll.run', { month: '2026-03' }, owner, { idempotencyKey: 'run-2' })).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('lands after the retry ran the period: refused as the same run, one run stays', async () => {
    const owner = testPrincipal();
    await hire(owner);
    const held = await killed(owner, 'payroll.run', 'payroll_runs', { month: '2026-03' }, 'run-3');
    const retry = await payroll.call('payroll.run', { month: '2026-03' }, owner, { idempotencyKey: 'run-3' });
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    expect(await held.land()).toBe('duplicate');
    expect((await storedIn('payroll_runs', owner)).map((r) => r._id)).toEqual([retry.output.run.id]);
  });
});
