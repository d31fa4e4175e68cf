import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, writesDuring, type TestSubgraph } from '@cuadra/shared/testing';
import type { Principal } from '@cuadra/shared';
import { startInvoices } from '../../invoices/test/setup.ts';
import { createServer, name } from '../src/server.ts';
import { stockBalances, stockItems, stockMovements } from '../src/modules/stock/model.ts';
import { inventoryCounts } from '../src/modules/inventory_counts/model.ts';

// X-Dry-Run of the stock movements (issue 39): the tool's own path with `dry_run: true`, so the
// header and the input flag answer alike; not one write command on either of inventory's
// connections (the MongoDB driver's command monitoring), however new the item and the warehouse.
// Finance (with crm) runs beside it: inventory reads its items and closed periods through the graph.
let finance: TestSubgraph;
let inventory: TestSubgraph;
beforeAll(async () => {
  finance = await startInvoices();
  inventory = await startTestSubgraph(name, createServer, { peers: { invoices: finance }, monitorCommands: true });
});
afterAll(async () => {
  await inventory?.close();
  await finance?.close();
});

async function output(sg: TestSubgraph, tool: string, input: Record<string, unknown>, owner: Principal) {
  const r = await sg.call(tool, input, owner);
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return r.output;
}

/** A movement as both a dry run and the real call answer it, less the id each draws. */
function movementFacts(m: Record<string, any>) {
  const { id: _id, journal_entry: je, counterpart: _c, ...rest } = m;
  return { ...rest, journal_lines: je?.lines ?? null };
}

describe('stock movements with X-Dry-Run', () => {
  it('receive, deliver and transfer: the dry run writes nothing (not even a first balance or item), answers as the dry_run flag does, and the real call then does exactly that', async () => {
    const owner = testPrincipal();
    const item = (await output(finance, 'items.create', { name: 'Café 500 g', kind: 'product', sku: 'CAF-500', price: { amount: 25_000, currency: 'COP' }, tax_rate_ppm: 50_000 }, owner)).item.id;
    const bog = (await output(inventory, 'warehouses.create', { code: 'BOG', name: 'Bodega Bogotá' }, owner)).warehouse.id;
    const med = (await output(inventory, 'warehouses.create', { code: 'MED', name: 'Bodega Medellín' }, owner)).warehouse.id;
    const receipt = { item_id: item, warehouse_id: bog, quantity: 10, unit_cost: 12_000 };
    let dry: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    let flagged: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    const writes = await writesDuring(inventory, async () => {
      dry = await inventory.call('stock.receive', receipt, owner, { dryRun: true });
      flagged = await inventory.call('stock.receive', { ...receipt, dry_run: true }, owner, { dryRun: true });
    });
    expect(writes).toEqual([]);
    expect(dry, JSON.stringify(dry)).toMatchObject({ ok: true, output: { decision: { effect: 'allow' }, would: { dry_run: true } } });
    // By hand: 10 × 12,000 = 120,000 in; on hand 10 worth 120,000 after.
    expect(dry!.output.would.movement).toMatchObject({ type: 'receipt', quantity: 10, value: 120_000, on_hand_after: 10, value_after: 120_000 });
    expect(movementFacts(flagged!.output.would.movement)).toEqual(movementFacts(dry!.output.would.movement));
    expect(await stockItems(inventory.db).countDocuments({ workspace: owner.workspace })).toBe(0);
    expect(await stockBalances(inventory.db).countDocuments({ workspace: owner.workspace })).toBe(0);
    const received = await output(inventory, 'stock.receive', receipt, owner);
    expect(movementFacts(received.movement)).toEqual(movementFacts(dry!.output.would.movement));

    // A delivery of 4 at the average 12,000: cost of sales 48,000 (Dr 6135 / Cr 1435), 6 worth 72,000 left.
    const delivery = { item_id: item, warehouse_id: bog, quantity: 4 };
    const deliverWrites = await writesDuring(inventory, async () => { dry = await inventory.call('stock.deliver', delivery, owner, { dryRun: true }); });
    expect(deliverWrites).toEqual([]);
    const would = dry!.output.would.movement;
    expect(would).toMatchObject({ type: 'delivery', quantity: -4, value: -48_000, on_hand_after: 6, value_after: 72_000 });
    const lines = would.journal_entry.lines as { account: string; debit: number; credit: number }[];
    expect(lines.reduce((s, l) => s + l.debit, 0)).toBe(48_000);
    expect(lines.filter((l) => l.account === '1435').reduce((s, l) => s + l.credit, 0)).toBe(48_000);
    const delivered = await output(inventory, 'stock.deliver', delivery, owner);
    expect(movementFacts(delivered.movement)).toEqual(movementFacts(would));

    // More than is on hand: the dry run answers the refusal the call would get.
    expect(await inventory.call('stock.deliver', { ...delivery, quantity: 7 }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
    const transfer = { item_id: item, from_warehouse_id: bog, to_warehouse_id: med, quantity: 2 };
    const before = await stockMovements(inventory.db).countDocuments({ workspace: owner.workspace });
    const transferWrites = await writesDuring(inventory, async () => { dry = await inventory.call('stock.transfer', transfer, owner, { dryRun: true }); });
    expect(transferWrites).toEqual([]);
    expect(dry!.output.would.movement).toMatchObject({ type: 'transfer_out', quantity: -2, value: -24_000, on_hand_after: 4 });
    expect(await stockMovements(inventory.db).countDocuments({ workspace: owner.workspace })).toBe(before);
    expect(await stockBalances(inventory.db).countDocuments({ workspace: owner.workspace })).toBe(1);
  });

  it('inventory_counts.post: the dry run shows each difference\'s movement and journal lines, writes nothing, and the post then stores exactly those', async () => {
    const owner = testPrincipal();
    const item = (await output(finance, 'items.create', { name: 'Té 250 g', kind: 'product', sku: 'TE-250', price: { amount: 18_000, currency: 'COP' }, tax_rate_ppm: 190_000 }, owner)).item.id;
    const wh = (await output(inventory, 'warehouses.create', { code: 'CLO', name: 'Bodega Cali' }, owner)).warehouse.id;
    await output(inventory, 'stock.receive', { item_id: item, warehouse_id: wh, quantity: 10, unit_cost: 12_000 }, owner);
    const sheet = (await output(inventory, 'inventory_counts.create', { warehouse_id: wh }, owner)).count;
    // 7 counted where the books expect 10 (quantities in millionths, as the sheet keeps them; the import's parsing is not under test here).
    await inventoryCounts(inventory.db).updateOne({ _id: sheet.id }, { $set: { 'lines.0.counted': 7_000_000 } });
    let dry: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    expect(await writesDuring(inventory, async () => { dry = await inventory.call('inventory_counts.post', { id: sheet.id }, owner, { dryRun: true }); })).toEqual([]);
    expect(dry, JSON.stringify(dry)).toMatchObject({ ok: true, output: { decision: { effect: 'allow' } } });
    const would = dry!.output.would as { changes: { source: string; id: string; after: any }[]; journal_lines: { account: string; debit: number; credit: number }[] };
    // By hand: 3 short at the average 12,000 = 36,000 (Dr 5295 diversos, Cr 1435 inventory).
    expect(would.journal_lines.filter((l) => l.account.startsWith('5295')).reduce((s, l) => s + l.debit, 0)).toBe(36_000);
    expect(would.journal_lines.filter((l) => l.account === '1435').reduce((s, l) => s + l.credit, 0)).toBe(36_000);
    expect(would.changes[0]).toEqual({ source: 'inventory_counts', id: sheet.id, op: 'update', before: { status: 'open' }, after: { status: 'posted' } });
    expect(would.changes[1]).toMatchObject({ source: 'stock_movements', op: 'insert', after: { type: 'count', value: -36_000 } });
    expect(await stockMovements(inventory.db).countDocuments({ workspace: owner.workspace, type: 'count' })).toBe(0);
    expect(await inventoryCounts(inventory.db).countDocuments({ _id: sheet.id, status: 'open' })).toBe(1);
    await output(inventory, 'inventory_counts.post', { id: sheet.id }, owner);
    const stored = await stockMovements(inventory.db).findById(would.changes[1].id).lean() as unknown as { journal: { lines: unknown[] } };
    expect(JSON.parse(JSON.stringify(stored.journal.lines))).toEqual(would.journal_lines);
    expect(await inventory.call('inventory_counts.post', { id: sheet.id }, owner, { dryRun: true })).toMatchObject({ ok: false, code: 'conflict' });
  });
});
