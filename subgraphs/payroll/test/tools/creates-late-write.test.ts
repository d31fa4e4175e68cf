import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ageDeadAttempt, holdNextInsert, killedAndSettled, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
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

// computeAndStore's catch path (payroll.run): the run's insert refused or failed after the call
// checked the period. Each write is the one document of the run (payslips inside), so a failure
// leaves a whole run or none; what is checked is the answer the call then gives, and the next one.
describe('a payroll.run whose insert fails after its checks passed', () => {
  /** Lets `land` reach the store just before the next insert into payroll_runs goes: between the call's checks and its insert. */
  function landBeforeNextRunInsert(land: () => Promise<'stored' | 'duplicate'>): () => 'stored' | 'duplicate' | undefined {
    const coll = payroll.db.collection('payroll_runs') as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const insertOne = coll.insertOne;
    let landed: 'stored' | 'duplicate' | undefined;
    coll.insertOne = async function (this: unknown, ...args: unknown[]) {
      delete (coll as Record<string, unknown>).insertOne;
      landed = await land();
      return insertOne.apply(this, args);
    };
    return () => landed;
  }
  const runsListed = async (owner: Principal) => (await payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q: { source: 'payroll_runs' } }, owner)).body.data.payrollRecords;

  it('the dead attempt\'s run lands between the retry\'s check and its insert: the retry answers that run (200); one run, counted once', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    const held = await killed(owner, 'payroll.run', 'payroll_runs', { month: '2026-04' }, 'run-4');
    const landed = landBeforeNextRunInsert(() => held.land());
    const retry = await payroll.call('payroll.run', { month: '2026-04' }, owner, { idempotencyKey: 'run-4' });
    expect(landed()).toBe('stored');
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    const runs = await storedIn('payroll_runs', owner);
    expect(runs.map((r) => [r._id, r.status])).toEqual([[retry.output.run.id, 'computed']]);
    expect(retry.output.payslips.map((p: { employee_id: string }) => p.employee_id)).toEqual([e.id]);
    expect(retry.output.run.totals).toEqual(runs[0].totals);
    // The retry's refused insert gave its position back: the list counts the one run.
    const listed = await runsListed(owner);
    expect(listed.rows.map((r: { id: string }) => r.id)).toEqual([retry.output.run.id]);
    expect(listed.total).toBe(1);
    // Its key now replays that answer.
    expect(await payroll.call('payroll.run', { month: '2026-04' }, owner, { idempotencyKey: 'run-4' })).toMatchObject({ ok: true, replayed: true, output: { run: { id: retry.output.run.id } } });
  });

  it('another call\'s run lands between this call\'s check and its insert: answered conflict (the period has that run), which that call\'s key answers', async () => {
    const owner = testPrincipal();
    await hire(owner);
    const held = await killed(owner, 'payroll.run', 'payroll_runs', { month: '2026-05' }, 'run-5');
    const landed = landBeforeNextRunInsert(() => held.land());
    const other = await payroll.call('payroll.run', { month: '2026-05' }, owner, { idempotencyKey: 'run-6' });
    expect(landed()).toBe('stored');
    expect(other).toMatchObject({ ok: false, code: 'conflict' });
    const runs = await storedIn('payroll_runs', owner);
    expect(runs).toHaveLength(1);
    const retry = await payroll.call('payroll.run', { month: '2026-05' }, owner, { idempotencyKey: 'run-5' });
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    expect(retry.output.run.id).toBe(runs[0]._id);
    expect((await runsListed(owner)).rows.map((r: { id: string }) => r.id)).toEqual([runs[0]._id]);
  });

  it('the retry itself dies inside its insert: no run is stored, nothing half-kept; the next retry computes the period, one true run', async () => {
    const owner = testPrincipal();
    const e = await hire(owner);
    const first = await killed(owner, 'payroll.run', 'payroll_runs', { month: '2026-06' }, 'run-7');
    const second = holdNextInsert(payroll, 'payroll_runs', owner.workspace);
    expect(await payroll.call('payroll.run', { month: '2026-06' }, owner, { idempotencyKey: 'run-7' })).toMatchObject({ ok: false, code: 'outcome_unknown' });
    await second.reached;
    expect(await storedIn('payroll_runs', owner)).toEqual([]);
    expect((await runsListed(owner)).rows).toEqual([]);
    await ageDeadAttempt(payroll, owner.workspace, 'payroll.run');
    await payroll.sweep();
    const retry = await payroll.call('payroll.run', { month: '2026-06' }, owner, { idempotencyKey: 'run-7' });
    expect(retry, JSON.stringify(retry)).toMatchObject({ ok: true });
    expect(retry.output.payslips.map((p: { employee_id: string }) => p.employee_id)).toEqual([e.id]);
    const runs = await storedIn('payroll_runs', owner);
    expect(runs.map((r) => [r._id, r.status])).toEqual([[retry.output.run.id, 'computed']]);
    expect(runs[0].payslips).toHaveLength(1);
    expect(retry.output.run.totals).toEqual(runs[0].totals);
    // Both dead attempts' inserts carry the call's one id: landing late, each is refused.
    expect(await first.land()).toBe('duplicate');
    expect(await second.land()).toBe('duplicate');
    expect(await storedIn('payroll_runs', owner)).toHaveLength(1);
  });
});
