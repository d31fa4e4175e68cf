import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { party } from './setup.ts';

/** A workspace of its own (bills need no e-invoicing set-up). */
export function workspace(): Principal {
  return testPrincipal();
}

/** A vendor party in the workspace's crm. */
export function vendor(owner: Principal, name = 'Suministros del Valle SAS', kind: 'vendor' | 'both' = 'vendor'): Promise<string> {
  return party(owner, { name, kind });
}

/** Creates a draft bill (one 19 % service line of 1,000.00 COP unless told otherwise); its output. */
export async function draftBill(sg: TestSubgraph, owner: Principal, vendorId: string, input: Record<string, unknown> = {}) {
  const r = await sg.call('bills.create', {
    vendor_id: vendorId, supplier_number: `FE-${Math.random().toString(36).slice(2, 8)}`, currency: 'COP', issue_date: '2026-11-02', due_date: '2026-12-02',
    lines: [{ description: 'Mantenimiento', account: '5135', quantity: 1, unit_price: 100000, tax_rate_ppm: 190000 }], ...input,
  }, owner);
  if (!r.ok) throw new Error(`bills.create failed: ${r.code} ${r.field} ${r.message}`);
  return r.output.bill;
}

/** Creates and posts a bill; its output. */
export async function postedBill(sg: TestSubgraph, owner: Principal, vendorId: string, input: Record<string, unknown> = {}) {
  const d = await draftBill(sg, owner, vendorId, input);
  const r = await sg.call('bills.post', { id: d.id }, owner);
  if (!r.ok) throw new Error(`bills.post failed: ${r.code} ${r.message}`);
  return r.output.bill;
}
