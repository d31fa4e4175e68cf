import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, draft, party, startInvoices } from '../setup.ts';

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

async function posted(owner: any, input: Record<string, unknown> = {}) {
  const d = await draft(sg, owner, input);
  const r = await sg.call('invoices.post', { id: d.id }, owner);
  if (!r.ok) throw new Error(r.message);
  return r.output.invoice;
}

describe('payments.register', () => {
  it('pays in part, then the rest plus an over-payment kept as customer credit, across two invoices', async () => {
    const owner = await configuredWorkspace(sg);
    const a = await posted(owner); // 35,700,000 due
    const b = await posted(owner, { lines: [{ description: 'x', quantity: 1, unit_price: 1000000, tax_rate_ppm: 0 }] }); // 1,000,000
    const part = await sg.call('payments.register', { customer_id: await andina(owner), amount: 10000000, currency: 'COP', date: '2026-11-10', invoices: [{ invoice_id: a.id, amount: 10000000 }] }, owner);
    expect(part.output.payment).toMatchObject({ status: 'completed', applied: 10000000, unapplied: 0 });
    expect((await sg.call('invoices.get', { id: a.id }, owner)).output.invoice).toMatchObject({ status: 'partially_paid', balance: 25700000, paid: 10000000 });
    const rest = await sg.call('payments.register', { customer_id: await andina(owner), amount: 27000000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: a.id }, { invoice_id: b.id }] }, owner);
    expect(rest.output.payment).toMatchObject({ applied: 26700000, unapplied: 300000 });
    expect(rest.output.payment.allocations.map((x: any) => x.applied)).toEqual([25700000, 1000000]);
    expect((await sg.call('invoices.get', { id: a.id }, owner)).output.invoice).toMatchObject({ status: 'paid', balance: 0 });
    const got = await sg.call('payments.get', { id: rest.output.payment.id }, owner);
    expect(got.output.journal_entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([
      ['111005', 27000000, 0], ['130505', 0, 26700000], ['280505', 0, 300000],
    ]);
    const credit = await sg.db.collection('customer_credits').findOne({ customer_id: await andina(owner), workspace: owner.workspace });
    expect(credit?.balance).toBe(300000);
    expect((await sg.call('payments.list', { customer_id: await andina(owner) }, owner)).output.rows.length).toBe(2);
  });

  it('ten payments of one invoice at once answer what ten in a row would: one applies, nine are refused', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await posted(owner, { lines: [{ description: 'x', quantity: 1, unit_price: 700000, tax_rate_ppm: 0 }] });
    const customer = await andina(owner);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => sg.call('payments.register', {
      customer_id: customer, amount: 700000, currency: 'COP', date: '2026-11-10', reference: `T${i}`, invoices: [{ invoice_id: inv.id }],
    }, owner)));
    expect(answers.filter((r) => r.ok).map((r) => r.output.payment)).toEqual([expect.objectContaining({ applied: 700000, unapplied: 0 })]);
    expect(answers.filter((r) => !r.ok).map((r) => r.code)).toEqual(Array(9).fill('conflict'));
    expect((await sg.call('invoices.get', { id: inv.id }, owner)).output.invoice).toMatchObject({ status: 'paid', balance: 0, paid: 700000 });
    expect(await sg.db.collection('payments').countDocuments({ workspace: owner.workspace })).toBe(1);
    expect(await sg.db.collection('customer_credits').findOne({ workspace: owner.workspace })).toBeNull();
    expect(await sg.db.collection('locks').countDocuments({})).toBe(0);
  });

  it('applies to the oldest open invoices when none is named', async () => {
    const owner = await configuredWorkspace(sg);
    const late = await posted(owner, { due_date: '2026-11-05', lines: [{ description: 'x', quantity: 1, unit_price: 500, tax_rate_ppm: 0 }] });
    const later = await posted(owner, { due_date: '2026-11-30', lines: [{ description: 'y', quantity: 1, unit_price: 500, tax_rate_ppm: 0 }] });
    const r = await sg.call('payments.register', { customer_id: await andina(owner), amount: 700, currency: 'COP' }, owner);
    expect(r.output.payment.allocations.map((x: any) => [x.invoice_id, x.applied])).toEqual([[late.id, 500], [later.id, 200]]);
  });

  it('refuses what does not add up, with the right codes', async () => {
    const owner = await configuredWorkspace(sg);
    const a = await posted(owner, { lines: [{ description: 'x', quantity: 1, unit_price: 1000, tax_rate_ppm: 0 }] });
    const d = await draft(sg, owner);
    const customer = await andina(owner);
    const pay = (input: Record<string, unknown>) => sg.call('payments.register', { customer_id: customer, amount: 1000, currency: 'COP', ...input }, owner);
    expect(await pay({ invoices: [{ invoice_id: a.id, amount: 1001 }], amount: 2000 })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await pay({ invoices: [{ invoice_id: a.id, amount: 900 }], amount: 800 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/invoices' });
    expect(await pay({ invoices: [{ invoice_id: d.id }] })).toMatchObject({ ok: false, code: 'conflict' });
    expect(await pay({ invoices: [{ invoice_id: 'inv_nope' }] })).toMatchObject({ ok: false, code: 'not_found' });
    expect(await pay({ customer_id: 'pty_other', invoices: [{ invoice_id: a.id }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/customer_id' });
    expect(await pay({ customer_id: await party(owner, { name: 'Otro Cliente', kind: 'customer' }), invoices: [{ invoice_id: a.id }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/invoices/0/invoice_id' });
    expect(await pay({ currency: 'USD', invoices: [{ invoice_id: a.id }] })).toMatchObject({ ok: false, code: 'invalid_input', field: '/invoices/0/invoice_id' });
    expect(await pay({ amount: 0 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await pay({ amount: 10.5 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/amount' });
    expect(await sg.call('payments.get', { id: 'pay_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('never pays an invoice beyond its balance under concurrent payments', async () => {
    const owner = await configuredWorkspace(sg);
    const a = await posted(owner, { lines: [{ description: 'x', quantity: 1, unit_price: 1000, tax_rate_ppm: 0 }] });
    const customer = await andina(owner);
    const results = await Promise.all(Array.from({ length: 5 }, () => sg.call('payments.register', { customer_id: customer, amount: 600, currency: 'COP', invoices: [{ invoice_id: a.id }] }, owner)));
    const applied = results.filter((r) => r.ok).reduce((s, r) => s + r.output.payment.applied, 0);
    const inv = (await sg.call('invoices.get', { id: a.id }, owner)).output.invoice;
    expect(inv.paid).toBeLessThanOrEqual(1000);
    expect(applied).toBe(inv.paid);
    expect(inv.balance).toBe(1000 - inv.paid);
    for (const r of results.filter((x) => !x.ok)) expect(r.code).toBe('conflict');
  });
});
