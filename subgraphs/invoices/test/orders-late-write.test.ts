import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@cuadra/shared';
import { approvedAndKilled, killedAndSettled, landBeforeRerun, type TestSubgraph } from '@cuadra/shared/testing';
import { vendor, workspace } from './bills-helpers.ts';
import { party, startInvoices } from './setup.ts';

// The double document after a kill (payments-late-write.test.ts, drafts-late-write.test.ts), for
// quotes, sales orders and purchase orders: a keyed (or approved) create whose process dies with its
// insert sent. The store applies that insert late — after recovery settled the dead attempt as having
// written nothing and handed its key back (or put its approval back to approved). Under a random id
// the rerun made a second quote, order or purchase order beside it (a customer quoted twice, a
// vendor sent two orders for one purchase). Under the call's repeatable id (repeatableId, runs.ts)
// the two inserts collide on `_id` and the rerun answers the document that exists.
//
// The order is forced, not hoped for: the dead attempt's insert is held in this process until the
// test lets it reach the store (holdNextInsert).

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

interface Create { tool: string; collection: string; key: string; input: (owner: Principal) => Promise<Record<string, unknown>> }

const salesInput = async (owner: Principal) => ({
  customer_id: await party(owner, { name: 'Eventos Caribe SAS', kind: 'customer' }), currency: 'COP',
  lines: [{ description: 'Implementación', quantity: 1, unit_price: 2000000, tax_rate_ppm: 190000 }],
});

const creates: Create[] = [
  { tool: 'quotes.create', collection: 'sales_documents', key: 'quote', input: salesInput },
  { tool: 'sales_orders.create', collection: 'sales_documents', key: 'sales_order', input: salesInput },
  {
    tool: 'purchase_orders.create', collection: 'purchase_orders', key: 'purchase_order',
    input: async (owner) => ({ vendor_id: await vendor(owner), currency: 'COP', lines: [{ description: 'Resmas de papel', account: '1435', quantity: 10, unit_price: 1250000, tax_rate_ppm: 190000 }] }),
  },
];

async function storedOf(owner: Principal, collection: string) {
  return (await sg.db.collection(collection).find({ workspace: owner.workspace }).toArray()).map((d) => d._id);
}

describe.each(creates)('a keyed $tool whose insert lands after its dead attempt was settled as having written nothing', ({ tool, collection, key, input }) => {
  it('lands before the retry: the retry answers that document, and no second one is made', async () => {
    const owner = workspace();
    const given = await input(owner);
    const held = await killedAndSettled(sg, owner, { tool, collection, input: given, key: `${key}-1` });
    expect(await held.land()).toBe('stored');
    const retry = await sg.call(tool, given, owner, { idempotencyKey: `${key}-1` });
    expect(retry).toMatchObject({ ok: true });
    expect(await storedOf(owner, collection)).toEqual([retry.output[key].id]);
  });

  it('lands after the retry made the document: refused as the same document, one stays', async () => {
    const owner = workspace();
    const given = await input(owner);
    const held = await killedAndSettled(sg, owner, { tool, collection, input: given, key: `${key}-2` });
    const retry = await sg.call(tool, given, owner, { idempotencyKey: `${key}-2` });
    expect(retry).toMatchObject({ ok: true });
    expect(await held.land()).toBe('duplicate');
    expect(await storedOf(owner, collection)).toEqual([retry.output[key].id]);
  });
});

describe.each(creates)('an approved $tool run again after its first attempt died inside its insert', ({ tool, collection, key, input }) => {
  it('the late insert lands between recovery and the rerun: the rerun answers that document, the approval executed with it', async () => {
    const owner = workspace();
    const { held, approvalId } = await approvedAndKilled(sg, owner, { tool, collection, input: await input(owner) });
    const landed = landBeforeRerun(sg, held);
    await sg.sweep();
    expect(landed()).toBe('stored');
    const approval = await sg.governance.approvals.get(owner.workspace, approvalId);
    expect(approval?.status).toBe('executed');
    const stored = await storedOf(owner, collection);
    expect(stored).toHaveLength(1);
    expect((approval?.result as { body?: { output?: Record<string, { id?: string }> } } | null)?.body?.output?.[key]?.id).toBe(stored[0]);
  });
});
