import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { addDays, dateInZone } from '@cuadra/shared';
import { nextPeriod } from '../../src/modules/invoices/recurring.ts';
import { andina, configuredWorkspace, startInvoices } from '../setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const scheduleOf = (customer_id: string) => ({ customer_id, currency: 'COP', lines: [{ description: 'Arriendo oficina', quantity: 1, unit_price: 250000000, tax_rate_ppm: 190000 }], interval: 'month' });

describe('recurring invoices', () => {
  it('keeps the day of month across short months', () => {
    expect(nextPeriod('2026-01-31', 'month', 1, 31)).toBe('2026-02-28');
    expect(nextPeriod('2026-02-28', 'month', 1, 31)).toBe('2026-03-31');
    expect(nextPeriod('2026-11-30', 'week', 2)).toBe('2026-12-14');
  });

  it('issues each period once, posted, even when runs overlap, and ends on the end date', async () => {
    const owner = await configuredWorkspace(sg);
    const r = (await sg.call('invoices.recurring_create', { ...scheduleOf(await andina(owner)), start_date: '2026-01-31', end_date: '2026-04-30', post: true, due_days: 10 }, owner)).output.recurring;
    expect(r).toMatchObject({ status: 'active', next_date: '2026-01-31' });
    const runs = await Promise.all([sg.call('invoices.recurring_run', { as_of: '2026-04-30' }, owner), sg.call('invoices.recurring_run', { as_of: '2026-04-30' }, owner)]);
    expect(runs.every((x) => x.ok)).toBe(true);
    // Between them the two runs report each period once: a run reports only what it issued, not a
    // period the other run moved past while it was on it (both used to report it: issue 33's replicas test).
    expect(runs.flatMap((x) => x.output.issued.map((i: any) => i.date)).sort()).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']);
    const made = await sg.call('invoices.list', { limit: 100 }, owner);
    expect(made.output.rows.map((i: any) => i.issue_date).sort()).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']);
    expect(made.output.rows.every((i: any) => i.status === 'posted' && i.source.recurring_id === r.id)).toBe(true);
    expect(new Set(made.output.rows.map((i: any) => i.number)).size).toBe(4);
    expect((await sg.call('invoices.recurring_run', {}, owner)).output.issued).toEqual([]);
    // A run ahead of today would issue invoices dated in the future (CONTRACT §10).
    expect(await sg.call('invoices.recurring_run', { as_of: addDays(dateInZone(new Date(), 'America/Bogota'), 1) }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/as_of' });
    expect((await sg.call('invoices.recurring_list', {}, owner)).output.rows[0]).toMatchObject({ status: 'ended', issued: 4 });
  });

  it('leaves drafts when not posting, stops when cancelled, and refuses bad input', async () => {
    const owner = testPrincipal();
    const r = (await sg.call('invoices.recurring_create', { ...scheduleOf(await andina(owner)), interval: 'week', every: 2, start_date: '2026-11-02' }, owner)).output.recurring;
    const lane = await sg.graphql('query($w: JSON!) { invoicesAgenda(lane: "recurring", window: $w) }', { w: { from: '2026-11-01', to: '2026-11-30', limit: 100 } }, owner);
    expect(lane.body.data.invoicesAgenda).toEqual([expect.objectContaining({ date: '2026-11-02', source: 'recurring', ref: { recurring_id: r.id, customer_id: await andina(owner) } })]);
    const run = await sg.call('invoices.recurring_run', { as_of: '2026-11-20' }, owner);
    expect(run.output.issued.map((x: any) => x.date)).toEqual(['2026-11-02', '2026-11-16']);
    expect((await sg.call('invoices.list', { status: 'draft' }, owner)).output.rows.length).toBe(2);
    expect((await sg.call('invoices.recurring_cancel', { id: r.id }, owner)).output.recurring.status).toBe('cancelled');
    expect(await sg.call('invoices.recurring_cancel', { id: r.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await sg.call('invoices.recurring_run', {}, owner)).output.issued).toEqual([]);
    expect(await sg.call('invoices.recurring_cancel', { id: 'rec_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('invoices.recurring_create', { ...scheduleOf(await andina(owner)), start_date: '2026-11-02', end_date: '2026-11-01' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/end_date' });
    expect(await sg.call('invoices.recurring_create', { ...scheduleOf(await andina(owner)), interval: 'year' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/interval' });
  });

  it('pages schedules newest first by cursor, with the total only without filters', async () => {
    const owner = testPrincipal();
    const customer = await andina(owner);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await sg.call('invoices.recurring_create', { ...scheduleOf(customer), start_date: `2026-11-0${i + 1}` }, owner)).output.recurring.id);
    await sg.call('invoices.recurring_cancel', { id: made[1] }, owner);
    const first = (await sg.call('invoices.recurring_list', { limit: 2 }, owner)).output;
    expect(first).toMatchObject({ total: 5 });
    expect(first.rows.map((r: any) => r.id)).toEqual([made[4], made[3]]);
    const seen = [...first.rows.map((r: any) => r.id)];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = (await sg.call('invoices.recurring_list', { limit: 2, cursor }, owner)).output;
      expect(page.rows.length).toBeLessThanOrEqual(2);
      seen.push(...page.rows.map((r: any) => r.id));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual([...made].reverse());
    const cancelled = (await sg.call('invoices.recurring_list', { status: 'cancelled', limit: 100 }, owner)).output;
    expect(cancelled.rows.map((r: any) => r.id)).toEqual([made[1]]);
    expect(cancelled.total).toBeUndefined();
    expect(await sg.call('invoices.recurring_list', { limit: 101 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/limit' });
    expect(await sg.call('invoices.recurring_list', { cursor: 'nope' }, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
    // Another workspace sees none of them.
    expect((await sg.call('invoices.recurring_list', {}, testPrincipal())).output).toMatchObject({ rows: [], total: 0 });
  });
});
