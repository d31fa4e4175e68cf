import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, testServiceKeys, writesDuring, type TestSubgraph } from '@cuadra/shared/testing';
import { peerGraph, pullFeed, type Principal } from '@cuadra/shared';
import { configuredWorkspace, party, startInvoices } from '../../invoices/test/setup.ts';
import { postedBill, vendor } from '../../invoices/test/bills-helpers.ts';
import { FINANCE_DOCUMENTS } from '../src/modules/stock/finance_documents.ts';
import { createServer, name } from '../src/server.ts';
import { stockBalances, stockItems, stockMovements } from '../src/modules/stock/model.ts';
import { inventoryCounts } from '../src/modules/inventory_counts/model.ts';

// X-Dry-Run of the stock movements (issue 39): the tool's own path with `dry_run: true`, so the
// header and the input flag answer alike; not one write command on either of inventory's
// connections (the MongoDB driver's command monitoring), however new the item and the warehouse.
// Finance (with crm) runs beside it: inventory reads its items and closed periods through the graph,
// finance holds a vendor credit note's goods and previews them in inventory. No background work runs
// here: inventory takes finance's posted documents in only when a test pulls them (or a hold does).
let finance: TestSubgraph;
let inventory: TestSubgraph;
beforeAll(async () => {
  finance = await startInvoices({ peers: { inventory: { get url() { return inventory.url; } } } });
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

  it('bills.credit_note right after its bill: the note goes through (its hold pulls the bill\'s receipt first); its dry run shows the purchase return — item, warehouse, quantity, the receipt\'s cost, the 6135 difference — and writes nothing in inventory', async () => {
    const owner = testPrincipal();
    const item = (await output(finance, 'items.create', { name: 'Aceite 1 L', kind: 'product', sku: 'ACE-1', price: { amount: 20_000, currency: 'COP' }, tax_rate_ppm: 0 }, owner)).item.id;
    const bog = (await output(inventory, 'warehouses.create', { code: 'BOG', name: 'Bodega Bogotá' }, owner)).warehouse.id;
    const vendorId = await vendor(owner);
    const billOf = (n: string, quantity: number, unitPrice: number) => postedBill(finance, owner, vendorId, { supplier_number: n, lines: [{ description: 'Aceite', account: '1435', item_id: item, warehouse_id: bog, quantity, unit_price: unitPrice, tax_rate_ppm: 0 }] });
    const credit = (n: string, billId: string, quantity: number, dryRun = false) => finance.call('bills.credit_note', { bill_id: billId, supplier_number: n, reason: 'Mercancía defectuosa', lines: [{ line: 0, quantity }] }, owner, { dryRun });
    const pull = () => pullFeed(FINANCE_DOCUMENTS, inventory.db, owner.workspace, peerGraph('inventory', { ...testServiceKeys(), urls: { invoices: finance.url } }, owner.workspace), new Date());
    const movements = async (type: 'receipt' | 'purchase_return') => (await stockMovements(inventory.db).find({ workspace: owner.workspace, type }).sort({ seq: 1 }).lean()) as any[];
    const balance = async () => { const b = await stockBalances(inventory.db).findOne({ workspace: owner.workspace }).lean(); return [b!.qty / 1e6, b!.value, b!.reserved]; };

    // Bill A: 10 @ 10,000 = 100,000 into BOG, posted; inventory has not pulled it (no receipt yet).
    const a = await billOf('FV-A', 10, 10_000);
    expect(await movements('receipt')).toEqual([]);
    // NC-1 at once: 4 back. Before: 409 (the goods were not in stock yet). Now its hold pulls the bill's receipt first.
    const nc1 = await credit('NC-1', a.id, 4);
    expect(nc1, JSON.stringify(nc1)).toMatchObject({ ok: true, output: { credit_note: { status: 'posted' }, bill: { balance: 60_000 } } });
    expect((await movements('receipt')).map((m) => [m.qty, m.value, m.warehouse_id])).toEqual([[10_000_000, 100_000, bog]]);
    await pull();
    // 4 × 10,000 = 40,000 back at the receipt's cost: no difference, no entry; 6 left worth 60,000, nothing reserved.
    expect((await movements('purchase_return')).map((m) => [m.qty, m.value, m.price, m.journal])).toEqual([[-4_000_000, -40_000, 40_000, null]]);
    expect(await balance()).toEqual([6, 60_000, 0]);

    // Bill B: 4 @ 16,000 = 64,000, posted, not pulled. NC-2's dry run before the pull: its receipt is pending,
    // so the goods leave at that receipt's own cost, 64,000 (no difference); not one write in inventory.
    const b = await billOf('FV-B', 4, 16_000);
    let dry: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    expect(await writesDuring(inventory, async () => { dry = await credit('NC-2', b.id, 4, true); })).toEqual([]);
    const stockOf = (d: typeof dry) => (d!.output.would.changes as { source: string; after: any }[]).filter((c) => c.source === 'stock_movements');
    expect(stockOf(dry).map((c) => c.after)).toEqual([{ line: 0, source: { kind: 'bill_credit_note', id: expect.any(String), line: 0 }, type: 'purchase_return', item_id: item, warehouse_id: bog, quantity: 4, value: -64_000, price: 64_000, cost_of_sales_change: 0, journal_lines: [], receipt_pending: true }]);

    // Pulled: 10 on hand worth 124,000 (average 12,400). 6 delivered at 12,400 = 74,400: 4 left worth 49,600.
    await pull();
    await output(inventory, 'stock.deliver', { item_id: item, warehouse_id: bog, quantity: 6 }, owner);
    expect(await balance()).toEqual([4, 49_600, 0]);
    // NC-2 now: the 4 left go back, all that is on hand, carrying 49,600; the vendor gives back 64,000:
    // 64,000 − 49,600 = 14,400 more than the goods carried → Dr 1435 14,400 / Cr 6135 14,400 (cost of sales −14,400).
    expect(await writesDuring(inventory, async () => { dry = await credit('NC-2', b.id, 4, true); })).toEqual([]);
    const [would] = stockOf(dry);
    expect(would.after).toMatchObject({ type: 'purchase_return', item_id: item, warehouse_id: bog, quantity: 4, value: -49_600, price: 64_000, cost_of_sales_change: -14_400 });
    expect(would.after.journal_lines).toEqual([{ account: '1435', debit: 14_400, credit: 0 }, { account: '6135', debit: 0, credit: 14_400 }]);
    expect(would.after.receipt_pending).toBeUndefined();
    // More than is there: the dry run answers the hold's refusal, at the line.
    expect(await credit('NC-3', b.id, 5, true)).toMatchObject({ ok: false, code: 'conflict' });

    // The note itself, then the pull: the movement stored is the one the dry run showed.
    expect(await credit('NC-2', b.id, 4)).toMatchObject({ ok: true });
    await pull();
    const [stored] = (await movements('purchase_return')).slice(-1);
    expect([stored.qty, stored.value, stored.price, stored.warehouse_id, JSON.parse(JSON.stringify(stored.journal.lines)).map(({ account, debit, credit: c }: any) => ({ account, debit, credit: c }))])
      .toEqual([-4_000_000, would.after.value, would.after.price, would.after.warehouse_id, would.after.journal_lines]);
    expect(await balance()).toEqual([0, 0, 0]);
  });

  it('invoices.post: its dry run shows the delivery the post would make — item, warehouse, quantity, cost, the movement\'s journal lines — writes nothing in inventory, and the post then stores exactly that', async () => {
    const owner = await configuredWorkspace(finance);
    const item = (await output(finance, 'items.create', { name: 'Miel 500 g', kind: 'product', sku: 'MIE-500', price: { amount: 30_000, currency: 'COP' }, tax_rate_ppm: 0 }, owner)).item.id;
    const bog = (await output(inventory, 'warehouses.create', { code: 'BOG', name: 'Bodega Bogotá' }, owner)).warehouse.id;
    // 10 received at 12,000 and 5 at 15,000: 15 on hand worth 120,000 + 75,000 = 195,000, an average of 195,000 / 15 = 13,000.
    await output(inventory, 'stock.receive', { item_id: item, warehouse_id: bog, quantity: 10, unit_cost: 12_000 }, owner);
    await output(inventory, 'stock.receive', { item_id: item, warehouse_id: bog, quantity: 5, unit_cost: 15_000 }, owner);
    const customer = await party(owner, { name: 'Tienda Miel SAS', kind: 'customer' });
    const draft = async (quantity: number) => (await output(finance, 'invoices.create', { customer_id: customer, currency: 'COP', lines: [{ item_id: item, quantity, warehouse_id: bog }] }, owner)).invoice.id as string;
    const id = await draft(4);
    let dry: Awaited<ReturnType<TestSubgraph['call']>> | undefined;
    expect(await writesDuring(inventory, async () => { dry = await finance.call('invoices.post', { id }, owner, { dryRun: true }); })).toEqual([]);
    expect(dry, JSON.stringify(dry)).toMatchObject({ ok: true });
    const stock = (dry!.output.would.changes as { source: string; id: string; op: string; after: any }[]).filter((c) => c.source === 'stock_movements');
    // 4 leave at the average 13,000: 4 × 13,000 = 52,000 out of 1435 into the cost of sales (Dr 6135 52,000 / Cr 1435 52,000). Before: no stock change shown.
    expect(stock).toEqual([{
      source: 'stock_movements', id: `${id}:0`, op: 'insert',
      after: { line: 0, source: { kind: 'invoice', id, line: 0 }, type: 'delivery', item_id: item, warehouse_id: bog, quantity: 4, value: -52_000, cost_of_sales_change: 52_000, journal_lines: expect.any(Array) },
    }]);
    const lines = stock[0].after.journal_lines as { account: string; debit: number; credit: number }[];
    expect([...lines].sort((a, b) => a.account.localeCompare(b.account))).toEqual([{ account: '1435', debit: 0, credit: 52_000 }, { account: '6135', debit: 52_000, credit: 0 }]);
    // 16 where 15 are on hand: the dry run answers the hold's refusal (409), nothing written.
    const tooMany = await draft(16);
    expect(await writesDuring(inventory, async () => { dry = await finance.call('invoices.post', { id: tooMany }, owner, { dryRun: true }); })).toEqual([]);
    expect(dry).toMatchObject({ ok: false, code: 'conflict' });

    // Posted and pulled: the delivery stored is the one the dry run showed.
    await output(finance, 'invoices.post', { id }, owner);
    await pullFeed(FINANCE_DOCUMENTS, inventory.db, owner.workspace, peerGraph('inventory', { ...testServiceKeys(), urls: { invoices: finance.url } }, owner.workspace), new Date());
    const stored = (await stockMovements(inventory.db).findOne({ workspace: owner.workspace, type: 'delivery' }).lean()) as any;
    expect([stored.qty, stored.value, stored.warehouse_id, JSON.parse(JSON.stringify(stored.journal.lines)).map(({ account, debit, credit }: any) => ({ account, debit, credit }))])
      .toEqual([-4_000_000, -52_000, bog, lines]);
  });

  it('previewStockForDocument (@inaccessible) answers finance\'s service assertion only: a person\'s and another service\'s are refused, nothing read for them', async () => {
    const owner = testPrincipal();
    const query = 'query($d: ID!, $k: String!, $t: String!, $l: JSON!) { previewStockForDocument(document: $d, kind: $k, date: $t, lines: $l) }';
    const vars = { d: 'bil_nota_ajena', k: 'bill_credit_note', t: '2026-11-20', l: [] };
    const asPerson = await inventory.graphql(query, vars, owner);
    expect(asPerson.body.errors?.[0]?.extensions?.code).toBe('policy_denied');
    expect(asPerson.body.data?.previewStockForDocument ?? null).toBeNull();
    await expect(peerGraph('payroll', { ...testServiceKeys(), urls: { inventory: inventory.url } }, owner.workspace)('inventory', query, vars)).rejects.toMatchObject({ code: 'policy_denied' });
  });
});
