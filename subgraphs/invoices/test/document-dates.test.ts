import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, dateInZone, type Principal } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { andina, configuredWorkspace, startInvoices } from './setup.ts';

/**
 * CONTRACT §10: dates are Bogotá's calendar for Colombian workspaces (the workspace's time zone in
 * general); a document dated after today is refused at its date field — every document.
 */
describe('a document dated after today is refused at /issue_date', () => {
  let sg: TestSubgraph;
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  const today = (zone: string) => dateInZone(new Date(), zone);
  const line = { description: 'Consultoría', quantity: 1, unit_price: 10_000_000, tax_rate_ppm: 190000 };
  const count = (owner: Principal) => sg.db.collection('invoices').countDocuments({ workspace: owner.workspace });

  it('invoices.create and invoices.update: tomorrow in Bogotá is refused, today is taken (and is the default)', async () => {
    const owner = await configuredWorkspace(sg);
    const tomorrow = addDays(today('America/Bogota'), 1);
    const input = { customer_id: await andina(owner), currency: 'COP', lines: [line] };
    expect(await sg.call('invoices.create', { ...input, issue_date: tomorrow, due_date: addDays(tomorrow, 30) }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await count(owner)).toBe(0);
    const made = await sg.call('invoices.create', input, owner);
    expect(made.ok, made.message).toBe(true);
    expect(made.output.invoice.issue_date).toBe(today('America/Bogota'));
    expect(await sg.call('invoices.update', { id: made.output.invoice.id, issue_date: tomorrow, due_date: addDays(tomorrow, 30) }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect((await sg.call('invoices.get', { id: made.output.invoice.id }, owner)).output.invoice.issue_date).toBe(today('America/Bogota'));
  });

  it('credit and debit notes: dated tomorrow they are refused and nothing is numbered or applied', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = (await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', lines: [line] }, owner)).output.invoice;
    expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
    const tomorrow = addDays(today('America/Bogota'), 1);
    expect(await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 2, reason: 'Anulación', issue_date: tomorrow }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await sg.call('invoices.debit_note', { invoice_id: inv.id, concept: 1, reason: 'Mora', issue_date: tomorrow, lines: [{ description: 'Intereses', quantity: 1, unit_price: 100_000 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await count(owner)).toBe(1);
    expect((await sg.call('invoices.get', { id: inv.id }, owner)).output.invoice).toMatchObject({ status: 'posted', credited: 0, credit_notes: [] });
  });

  it('quotes and sales orders dated tomorrow are refused', async () => {
    const owner = await configuredWorkspace(sg);
    const tomorrow = addDays(today('America/Bogota'), 1);
    const input = { customer_id: await andina(owner), currency: 'COP', issue_date: tomorrow, lines: [line] };
    expect(await sg.call('quotes.create', input, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await sg.call('sales_orders.create', input, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    expect(await sg.db.collection('sales_documents').countDocuments({ workspace: owner.workspace })).toBe(0);
  });

  it('the calendar is the workspace\'s: Auckland\'s today is taken in New Zealand and, while Bogotá is still on the day before, refused in Colombia', async () => {
    const kiwi = testPrincipal({ country: 'NZ' });
    const colombian = await configuredWorkspace(sg);
    const nz = today('Pacific/Auckland');
    const co = today('America/Bogota');
    const made = await sg.call('invoices.create', { customer_id: await andina(kiwi), currency: 'NZD', lines: [{ ...line, tax_rate_ppm: 0, tax_category: 'Z' }] }, kiwi);
    expect(made.ok, made.message).toBe(true);
    expect(made.output.invoice.issue_date).toBe(nz);
    const dated = await sg.call('invoices.create', { customer_id: await andina(kiwi), currency: 'NZD', issue_date: nz, lines: [{ ...line, tax_rate_ppm: 0, tax_category: 'Z' }] }, kiwi);
    expect(dated.ok, dated.message).toBe(true);
    const inColombia = await sg.call('invoices.create', { customer_id: await andina(colombian), currency: 'COP', issue_date: nz, lines: [line] }, colombian);
    if (nz > co) expect(inColombia).toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
    else expect(inColombia.ok, inColombia.message).toBe(true);
    expect(await sg.call('invoices.create', { customer_id: await andina(kiwi), currency: 'NZD', issue_date: addDays(nz, 1), lines: [{ ...line, tax_rate_ppm: 0, tax_category: 'Z' }] }, kiwi))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/issue_date' });
  });
});
