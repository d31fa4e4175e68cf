import { testPrincipal } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import type { TestSubgraph } from '@cuadra/shared/testing';

/** A technical key and PIN for the test environment (habilitación). */
export const TECH_KEY = 'fc8eac422eba16e22ffd8c6f94b3f40a6e38162c';
export const PIN = '12345';

/** A buyer snapshot with a valid NIT (DIAN's own). */
export const BUYER = { name: 'Tienda Andina SAS', tax_id: { type: 'NIT', number: '800197268', check_digit: 4 } };

/** Opens a workspace with e-invoicing configured; returns its principal. */
export async function configuredWorkspace(sg: TestSubgraph, overrides: Record<string, unknown> = {}): Promise<Principal> {
  const owner = testPrincipal();
  const r = await sg.call('einvoicing.configure', {
    issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS' }, technical_key: TECH_KEY, software_pin: PIN, software_id: `sw-${owner.workspace.slice(3, 15)}`.replace(/_/g, '-'),
    numbering: { invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001' }, credit_note: { prefix: 'NC', from: 1, to: 1000 } },
    ...overrides,
  }, owner);
  if (!r.ok) throw new Error(`configure failed: ${r.code} ${r.message}`);
  return owner;
}

/** Creates a draft invoice and returns its output. */
export async function draft(sg: TestSubgraph, owner: Principal, input: Record<string, unknown> = {}) {
  const r = await sg.call('invoices.create', {
    customer_id: 'pty_andina', customer: BUYER, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02',
    lines: [{ description: 'Consultoría', quantity: 2, unit_price: 15000000, tax_rate_ppm: 190000 }], ...input,
  }, owner);
  if (!r.ok) throw new Error(`create failed: ${r.code} ${r.field} ${r.message}`);
  return r.output.invoice;
}
