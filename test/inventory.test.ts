import { execFileSync } from 'node:child_process';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

/*
 * Inventory (issue 38): a year of a shop's stock in two warehouses, worked by hand movement by
 * movement — weighted average for coffee, FIFO for grinders —, a transfer, a count shortage, a
 * backdated receipt (dry run, then applied) that revalues what followed it in both warehouses, a
 * write-down to net realisable value; every journal entry balanced (summed here, not by the
 * product), and inventory_value and the sources equal to the hand figures. Amounts are minor
 * units; each unit cost is per unit.
 */

let sys: TestSystem;
let key: string;
const ok = (tool: string, input: unknown, k = key) => sys.output(tool, input, k);

/** Σ debits and Σ credits of an entry's lines, computed here. */
function sides(lines: { debit: number; credit: number }[]): [number, number] {
  return [lines.reduce((s, l) => s + l.debit, 0), lines.reduce((s, l) => s + l.credit, 0)];
}

/** Net debit (+) / credit (−) by account over a set of entries. */
function byAccount(entries: { lines: { account: string; debit: number; credit: number }[] }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of entries) for (const l of e.lines) out[l.account] = (out[l.account] ?? 0) + l.debit - l.credit;
  return out;
}

let coffee: string; let grinder: string; let bog: string; let med: string;

beforeAll(async () => {
  sys = await startTestSystem('inventory');
  key = (await sys.workspace('Tienda del Café SAS')).api_key;
  coffee = (await ok('items.create', { name: 'Café 500 g', kind: 'product', sku: 'CAF-500', price: { amount: 25_000, currency: 'COP' }, tax_rate_ppm: 50_000 })).item.id;
  grinder = (await ok('items.create', { name: 'Molino manual', kind: 'product', sku: 'MOL-1', price: { amount: 90_000, currency: 'COP' }, tax_rate_ppm: 190_000 })).item.id;
  bog = (await ok('warehouses.create', { code: 'BOG', name: 'Bodega Bogotá' })).warehouse.id;
  med = (await ok('warehouses.create', { code: 'MED', name: 'Bodega Medellín' })).warehouse.id;
});

afterAll(async () => {
  await sys?.stop();
});

describe('inventory: a year of a shop, valued by hand', () => {
  it('values by weighted average and FIFO, revalues after a backdated receipt, writes down to NRV, and every entry balances', async () => {
    const entries: { id: string; lines: { account: string; debit: number; credit: number }[] }[] = [];
    const keep = (o: any) => { if (o.movement.journal_entry) entries.push(o.movement.journal_entry); return o; };
    await ok('stock.configure_item', { item_id: grinder, valuation_method: 'fifo' });

    // ---- Coffee, weighted average ----
    // 1. 2026-01-10 BOG +10 @ 10,000 → BOG 10 units, 100,000.
    keep(await ok('stock.receive', { item_id: coffee, warehouse_id: bog, quantity: 10, unit_cost: 10_000, date: '2026-01-10', source: { kind: 'bill', id: 'bill_1' } }));
    // 2. 2026-02-05 BOG +5 @ 13,000 = 65,000 → 15 units, 165,000 (average 11,000).
    keep(await ok('stock.receive', { item_id: coffee, warehouse_id: bog, quantity: 5, unit_cost: 13_000, date: '2026-02-05', source: { kind: 'bill', id: 'bill_2' } }));
    // 3. 2026-03-01 MED +8 @ 12,000 → MED 8 units, 96,000.
    keep(await ok('stock.receive', { item_id: coffee, warehouse_id: med, quantity: 8, unit_cost: 12_000, date: '2026-03-01', source: { kind: 'purchase_order', id: 'po_1' } }));
    // 4. 2026-03-10 BOG −6 (invoice): cost 165,000 × 6 / 15 = 66,000 → BOG 9 units, 99,000.
    const sale1 = keep(await ok('stock.deliver', { item_id: coffee, warehouse_id: bog, quantity: 6, date: '2026-03-10', source: { kind: 'invoice', id: 'inv_1' } }));
    expect(sale1.movement).toMatchObject({ value: -66_000, on_hand_after: 9, value_after: 99_000 });
    expect(sale1.movement.journal_entry.lines).toEqual([
      expect.objectContaining({ account: '6135', debit: 66_000, credit: 0 }), expect.objectContaining({ account: '1435', debit: 0, credit: 66_000 }),
    ]);
    // 5. 2026-04-02 BOG → MED 3: cost 99,000 × 3 / 9 = 33,000 → BOG 6, 66,000; MED 11, 129,000.
    const moved = keep(await ok('stock.transfer', { item_id: coffee, from_warehouse_id: bog, to_warehouse_id: med, quantity: 3, date: '2026-04-02' }));
    expect(moved.movement).toMatchObject({ type: 'transfer_out', value: -33_000, journal_entry: null });
    // 6. 2026-05-15 MED −4: cost 129,000 × 4 / 11 = 46,909.09 → 46,909 → MED 7, 82,091.
    const sale2 = keep(await ok('stock.deliver', { item_id: coffee, warehouse_id: med, quantity: 4, date: '2026-05-15', source: { kind: 'invoice', id: 'inv_2' } }));
    expect(sale2.movement).toMatchObject({ value: -46_909, value_after: 82_091 });
    // 7. 2026-06-30 count of MED: the sheet expects 7; counted 6 → shortage 1 at 82,091 / 7 = 11,727.29 → 11,727 → MED 6, 70,364.
    const sheet = (await ok('inventory_counts.create', { warehouse_id: med, date: '2026-06-30' })).count;
    expect(sheet.lines).toEqual([expect.objectContaining({ item_id: coffee, expected: 7, counted: null })]);
    const exported = await ok('inventory_counts.export', { id: sheet.id });
    // Read back by Python's zipfile, not by exceljs: the sheet's cells hold the item id and the expected 7.
    const cells = execFileSync('python3', ['-c', 'import sys,zipfile,io; z=zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read())); print(z.read("xl/sharedStrings.xml").decode()); print(z.read("xl/worksheets/sheet1.xml").decode())'], { input: Buffer.from(exported.base64, 'base64') }).toString();
    expect(cells).toContain(coffee);
    expect(cells).toContain('<v>7</v>');
    // Filled in as a spreadsheet program would: Contado (column F) = 6.
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(Buffer.from(exported.base64, 'base64') as unknown as ArrayBuffer);
    wb.worksheets[0]!.getRow(2).getCell(6).value = 6;
    const filled = Buffer.from(await wb.xlsx.writeBuffer()).toString('base64');
    expect((await ok('inventory_counts.import', { id: sheet.id, content: filled })).count.lines[0]).toMatchObject({ counted: 6, difference: -1 });
    const posted = (await ok('inventory_counts.post', { id: sheet.id })).count;
    expect(posted.status).toBe('posted');
    const shortage = (await ok('records.list', { source: 'stock_movements', kind: 'count', limit: 10 })).rows[0];
    expect(shortage).toMatchObject({ id: posted.lines[0].movement_id, value: -11_727, value_after: 70_364 });
    expect(shortage.journal_entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['5295', 11_727, 0], ['1435', 0, 11_727]]);
    entries.push(shortage.journal_entry);
    const twice = await sys.invoke('inventory_counts.post', { id: sheet.id }, key);
    expect([twice.status, twice.body.code]).toEqual([409, 'conflict']);

    // The same bill line again: its first movement, nothing new.
    const again = await ok('stock.receive', { item_id: coffee, warehouse_id: bog, quantity: 10, unit_cost: 10_000, date: '2026-01-10', source: { kind: 'bill', id: 'bill_1' } });
    expect(again).toMatchObject({ replayed: true, movement: { value: 100_000 } });

    // 8. Backdated: 2026-03-05 BOG +3 @ 15,000 = 45,000 (a bill found late). Replayed by hand:
    //    BOG 15, 165,000 → +3: 18, 210,000 → sale 03-10: 210,000 × 6 / 18 = 70,000 (was 66,000) → 12, 140,000
    //    → transfer 04-02: 140,000 × 3 / 12 = 35,000 (was 33,000) → BOG 9, 105,000.
    //    MED: 8, 96,000 → transfer in 35,000 (was 33,000): 11, 131,000 → sale 05-15: 131,000 × 4 / 11 = 47,636.36 → 47,636
    //    (was 46,909) → 7, 83,364 → shortage 06-30: 83,364 / 7 = 11,909.14 → 11,909 (was 11,727) → 6, 71,455.
    //    Cost of sales: +4,000 (BOG) + 727 (MED) = +4,727.
    const late = { item_id: coffee, warehouse_id: bog, quantity: 3, unit_cost: 15_000, date: '2026-03-05', source: { kind: 'bill', id: 'bill_late' } };
    const dry = await ok('stock.receive', { ...late, dry_run: true });
    expect(dry.dry_run).toBe(true);
    expect(dry.cost_of_sales_change).toBe(4_727);
    expect(dry.affected.map((a: any) => [a.type, a.date, a.old_value, a.new_value])).toEqual([
      ['delivery', '2026-03-10', -66_000, -70_000], ['transfer_out', '2026-04-02', -33_000, -35_000],
      ['transfer_in', '2026-04-02', 33_000, 35_000], ['delivery', '2026-05-15', -46_909, -47_636], ['count', '2026-06-30', -11_727, -11_909],
    ]);
    // The dry run wrote nothing.
    const before = await ok('records.list', { source: 'stock_levels', limit: 100 });
    expect(before.rows.find((r: any) => r.item_id === coffee && r.warehouse_id === bog)).toMatchObject({ on_hand: 6, value: 66_000 });
    const applied = await ok('stock.receive', late);
    expect(applied).toMatchObject({ dry_run: false, cost_of_sales_change: 4_727 });

    // ---- Grinders, FIFO, in BOG ----
    // 1. 01-15 +4 @ 50,000 → layers [4: 200,000].  2. 02-20 +6 @ 56,000 → [4: 200,000, 6: 336,000].
    keep(await ok('stock.receive', { item_id: grinder, warehouse_id: bog, quantity: 4, unit_cost: 50_000, date: '2026-01-15' }));
    keep(await ok('stock.receive', { item_id: grinder, warehouse_id: bog, quantity: 6, unit_cost: 56_000, date: '2026-02-20' }));
    // 3. 03-20 −5: 200,000 (4 of the first layer) + 336,000 × 1 / 6 = 56,000 → 256,000; left [5: 280,000].
    const g1 = keep(await ok('stock.deliver', { item_id: grinder, warehouse_id: bog, quantity: 5, date: '2026-03-20', source: { kind: 'sales_order', id: 'so_1' } }));
    expect(g1.movement.value).toBe(-256_000);
    // 4. 04-10 +5 @ 60,000 → [5: 280,000, 5: 300,000], 10 units, 580,000.
    keep(await ok('stock.receive', { item_id: grinder, warehouse_id: bog, quantity: 5, unit_cost: 60_000, date: '2026-04-10' }));
    // 5. 06-30 NRV 55,000 a unit: 10 × 55,000 = 550,000 < 580,000 → write-down 30,000 (5199 / 1499).
    //    Off the layers in proportion: 30,000 × 280,000 / 580,000 = 14,482.76 → 14,483; the last takes 15,517
    //    → [5: 265,517, 5: 284,483].
    const wd = keep(await ok('stock.write_down', { item_id: grinder, warehouse_id: bog, net_realisable_value: 55_000, date: '2026-06-30', reason: 'Precio de lista bajó a 60.000; 5.000 de costos de venta' }));
    expect(wd.movement).toMatchObject({ value: -30_000, value_after: 550_000 });
    expect(wd.movement.journal_entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['5199', 30_000, 0], ['1499', 0, 30_000]]);
    // 6. 07-10 −6: 265,517 (5) + 284,483 × 1 / 5 = 56,896.6 → 56,897 → 322,414; the allowance 30,000 × 6 / 10 = 18,000
    //    released: 6135 322,414 + 1499 18,000 = 1435 340,414. Left [4: 227,586], allowance 12,000.
    const g2 = keep(await ok('stock.deliver', { item_id: grinder, warehouse_id: bog, quantity: 6, date: '2026-07-10', source: { kind: 'invoice', id: 'inv_3' } }));
    expect(g2.movement).toMatchObject({ value: -322_414, value_after: 227_586, on_hand_after: 4 });
    expect(g2.movement.journal_entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['6135', 322_414, 0], ['1499', 18_000, 0], ['1435', 0, 340_414]]);

    // ---- The books: every entry balanced; revaluations carry the differences ----
    const revaluations = (await ok('records.list', { source: 'stock_movements', kind: 'revaluation', limit: 100 })).rows;
    for (const r of revaluations) if (r.journal_entry) entries.push(r.journal_entry);
    for (const e of entries) {
      const [d, c] = sides(e.lines);
      expect(d, e.id).toBe(c);
    }
    // Revaluations, one per warehouse and month restated: BOG March +4,000 cost of sales (6135 / 1435); the April
    // transfer out and in restated (no entry: the goods stay in 1435); MED May +727 (6135 / 1435), June +182 shortage (5295 / 1435).
    expect(revaluations.map((r: any) => [r.warehouse_id, r.date, r.journal_entry?.lines.map((l: any) => [l.account, l.debit, l.credit])]).sort()).toEqual([
      [bog, '2026-03-10', [['6135', 4_000, 0], ['1435', 0, 4_000]]],
      [bog, '2026-04-02', undefined],
      [med, '2026-04-02', undefined],
      [med, '2026-05-15', [['6135', 727, 0], ['1435', 0, 727]]],
      [med, '2026-06-30', [['5295', 182, 0], ['1435', 0, 182]]],
    ].sort());
    // 1435 in the books = receipts (bills charge it in finance: 100,000 + 65,000 + 96,000 + 45,000 + 200,000 + 336,000 + 300,000 = 1,142,000)
    // less what inventory credited; 1499 = 12,000 left. Net = the carrying amount.
    const net = byAccount(entries);
    expect(1_142_000 + net['1435']! + net['1499']!).toBe(105_000 + 71_455 + 227_586);
    // Cost of sales: 70,000 + 47,636 + 256,000 + 322,414 = 696,050.
    expect(net['6135']).toBe(696_050);

    // ---- Sources and the metric equal the hand figures ----
    const levels = (await ok('records.list', { source: 'stock_levels', limit: 100 })).rows;
    const level = (item: string, wh: string) => levels.find((r: any) => r.item_id === item && r.warehouse_id === wh);
    expect(level(coffee, bog)).toMatchObject({ on_hand: 9, value: 105_000, unit_cost: 11_667 });
    expect(level(coffee, med)).toMatchObject({ on_hand: 6, value: 71_455 });
    expect(level(grinder, bog)).toMatchObject({ on_hand: 4, value: 227_586, valuation_method: 'fifo' });

    const value = await ok('metrics.query', { metric: 'inventory_value' });
    expect(value.summary.value).toBe(105_000 + 71_455 + 227_586);
    expect(value.rows).toEqual(expect.arrayContaining([
      { dimension: 'warehouse', warehouse_id: bog, warehouse: 'BOG', value: 332_586 }, { dimension: 'warehouse', warehouse_id: med, warehouse: 'MED', value: 71_455 },
      { dimension: 'item', item_id: coffee, item: 'Café 500 g', value: 176_455 }, { dimension: 'item', item_id: grinder, item: 'Molino manual', value: 227_586 },
    ]));
    // As of 2026-03-31: coffee BOG 140,000 (after the sale of 03-10, restated), MED 96,000; grinders 280,000 → 516,000.
    const march = await ok('metrics.query', { metric: 'inventory_value', as_of: '2026-03-31' });
    expect(march.summary.value).toBe(516_000);
    // Mid-month (end-of-day snapshots, restated by the backdated receipt and its cascade):
    // 2026-03-07: coffee BOG 165,000 + 45,000 (03-05) = 210,000; MED 96,000; grinders 200,000 + 336,000 = 536,000 → 842,000.
    // 2026-03-12: coffee BOG 140,000 (sale of 03-10 restated); MED 96,000; grinders 536,000 (their sale is 03-20) → 772,000.
    // 2026-05-20: coffee BOG 105,000 (04-02); MED 83,364 (sale of 05-15 restated down the transfer's cascade); grinders 580,000 → 768,364.
    for (const [asOf, expected] of [['2026-03-07', 842_000], ['2026-03-12', 772_000], ['2026-05-20', 768_364]] as const) {
      expect([asOf, (await ok('metrics.query', { metric: 'inventory_value', as_of: asOf })).summary.value]).toEqual([asOf, expected]);
    }
    // Compared a year back (nothing then): previous 0.
    expect((await ok('metrics.query', { metric: 'inventory_value', as_of: '2026-03-31', compare: 'previous_year' })).summary).toMatchObject({ value: 516_000, previous: 0 });
  });

  it('ten deliveries of the last unit at once over HTTP: one succeeds, nine are refused 409 and the level stays at zero', async () => {
    const last = (await ok('items.create', { name: 'Prensa francesa', kind: 'product', price: { amount: 80_000, currency: 'COP' }, tax_rate_ppm: 190_000 })).item.id;
    await ok('stock.receive', { item_id: last, warehouse_id: bog, quantity: 1, unit_cost: 40_000, date: '2026-08-01' });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => sys.invoke('stock.deliver', { item_id: last, warehouse_id: bog, quantity: 1, source: { kind: 'invoice', id: `inv_last_${i}` } }, key)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('conflict');
    const levels = (await ok('records.list', { source: 'stock_levels', search: 'prensa', limit: 10 })).rows;
    expect(levels).toEqual([expect.objectContaining({ on_hand: 0, value: 0 })]);
    const moves = (await ok('records.list', { source: 'stock_movements', kind: 'delivery', search: last, limit: 100 })).rows;
    expect(moves).toHaveLength(1);
  });

  it('reservations hold stock for a sales order; a level at or under its reorder point is low; refusals name the field', async () => {
    const beans = (await ok('items.create', { name: 'Grano verde', kind: 'product', price: { amount: 30_000, currency: 'COP' }, tax_rate_ppm: 0 })).item.id;
    await ok('stock.configure_item', { item_id: beans, reorder_point: 5 });
    await ok('stock.receive', { item_id: beans, warehouse_id: med, quantity: 10, unit_cost: 9_000 });
    expect((await ok('stock.reserve', { sales_order_id: 'so_9', item_id: beans, warehouse_id: med, quantity: 6 })).level).toMatchObject({ on_hand: 10, reserved: 6, available: 4, status: 'low' });
    // 4 free: 5 for another order is refused; the order that reserved takes its 6.
    const short = await sys.invoke('stock.deliver', { item_id: beans, warehouse_id: med, quantity: 5, source: { kind: 'invoice', id: 'inv_other' } }, key);
    expect([short.status, short.body.code]).toEqual([409, 'conflict']);
    await ok('stock.deliver', { item_id: beans, warehouse_id: med, quantity: 6, source: { kind: 'sales_order', id: 'so_9' } });
    const low = (await ok('records.list', { source: 'stock_levels', status: 'low', search: 'grano', limit: 10 })).rows;
    expect(low).toEqual([expect.objectContaining({ on_hand: 4, reserved: 0, available: 4, status: 'low' })]);

    const service = (await ok('items.create', { name: 'Asesoría', kind: 'service', price: { amount: 1, currency: 'COP' }, tax_rate_ppm: 0 })).item.id;
    const refusals = await Promise.all([
      sys.invoke('stock.receive', { item_id: service, warehouse_id: med, quantity: 1, unit_cost: 1 }, key),
      sys.invoke('stock.receive', { item_id: 'itm_nope', warehouse_id: med, quantity: 1, unit_cost: 1 }, key),
      sys.invoke('stock.receive', { item_id: beans, warehouse_id: 'wh_nope', quantity: 1, unit_cost: 1 }, key),
      sys.invoke('stock.receive', { item_id: beans, warehouse_id: med, quantity: 1, unit_cost: 1, date: '2099-01-01' }, key),
      sys.invoke('stock.receive', { item_id: beans, warehouse_id: med, quantity: 0.0000001, unit_cost: 1 }, key),
    ]);
    expect(refusals.map((r) => [r.status, r.body.code, r.body.field])).toEqual([
      [422, 'invalid_input', '/item_id'], [422, 'invalid_input', '/item_id'], [422, 'invalid_input', '/warehouse_id'], [422, 'invalid_input', '/date'], [422, 'invalid_input', '/quantity'],
    ]);
  });

  it('a closed month is never changed: a movement dated in it, or one that would revalue it, is refused 409 and nothing is written', async () => {
    const other = (await sys.workspace('Cierre SAS')).api_key;
    const tea = (await ok('items.create', { name: 'Té', kind: 'product', price: { amount: 10_000, currency: 'COP' }, tax_rate_ppm: 0 }, other)).item.id;
    const wh = (await ok('warehouses.create', { code: 'C1', name: 'Central' }, other)).warehouse.id;
    await ok('stock.receive', { item_id: tea, warehouse_id: wh, quantity: 10, unit_cost: 1_000, date: '2026-01-05' }, other);
    await ok('stock.deliver', { item_id: tea, warehouse_id: wh, quantity: 4, date: '2026-02-10' }, other);
    await ok('periods.close', { month: '2026-01' }, other);
    await ok('periods.close', { month: '2026-02' }, other);
    const inClosed = await sys.invoke('stock.receive', { item_id: tea, warehouse_id: wh, quantity: 1, unit_cost: 2_000, date: '2026-01-20' }, other);
    expect([inClosed.status, inClosed.body.code]).toEqual([409, 'conflict']);
    // Dated in open... no: a receipt dated 2026-01-31 would restate February's sale; both closed. A dry run is refused the same way.
    const dryClosed = await sys.invoke('stock.receive', { item_id: tea, warehouse_id: wh, quantity: 1, unit_cost: 2_000, date: '2026-01-31', dry_run: true }, other);
    expect([dryClosed.status, dryClosed.body.code]).toEqual([409, 'conflict']);
    const levels = (await ok('records.list', { source: 'stock_levels', limit: 10 }, other)).rows;
    expect(levels).toEqual([expect.objectContaining({ on_hand: 6, value: 6_000 })]);
  });
});
