import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetLegacyAdoption, type TestSubgraph } from '@cuadra/shared/testing';
import { beginOperation, createLogger, createPositioned, mailDailyQuota, REPAIR_AFTER_MS, systemEventsFor, type OperationKind, type Principal } from '@cuadra/shared';
import { assetsMaintenance } from '../src/modules/assets/maintenance.ts';
import { assets, type AssetDoc } from '../src/modules/assets/model.ts';
import { acquisitionEntryId, acquisitionOperation, disposalOf, disposalOperation } from '../src/modules/assets/ops.ts';
import { dunSubscriptions } from '../src/modules/plans/dunning.ts';
import { rentalsMaintenance } from '../src/modules/rentals/maintenance.ts';
import { claimHold } from '../src/modules/rentals/ops.ts';
import { readMaildir } from '../../../scripts/smtp.ts';
import { postedBill, vendor, workspace } from './bills-helpers.ts';
import { configuredWorkspace, party, startInvoices } from './setup.ts';
import { EVENT_WAIT_MS } from '../../../test/helpers/until.ts';

/*
 * Fixed assets in two books and rentals (issue 38), against the invoices subgraph and a real crm
 * on the MongoDB-protocol server. Every figure is worked by hand in the comments.
 */

let sg: TestSubgraph;
beforeAll(async () => {
  // Command monitoring: the dunning pass is shown to read invoices by `_id` only.
  sg = await startInvoices({ monitorCommands: true });
});
afterAll(async () => {
  await sg?.close();
});

/** The tool's output (sg.output), thrown when refused. */
const out = (tool: string, input: unknown, owner: Principal) => sg.output(tool, input, owner);

/** The journal entries an asset caused, read straight from the collection (not through the module). */
async function entriesOf(owner: Principal, assetId: string) {
  const docs = await sg.db.collection('journal_entries').find({ workspace: owner.workspace, 'source.id': assetId }).sort({ date: 1, _id: 1 }).toArray();
  return docs as unknown as { date: string; source: { kind: string; id: string }; lines: { account: string; debit: number; credit: number }[] }[];
}

/** Σ debits and Σ credits of an entry, summed here. */
function sides(e: { lines: { debit: number; credit: number }[] }) {
  return [e.lines.reduce((s, l) => s + l.debit, 0), e.lines.reduce((s, l) => s + l.credit, 0)];
}

const sweep = () => ({ db: sg.db, now: new Date(Date.now() + REPAIR_AFTER_MS + 1000), log: createLogger('test', 'silent'), events: systemEventsFor(sg.governance.ledger, 'invoices', 'assets') });

describe('fixed assets: both books, every method, once per month', () => {
  it('a computer capitalized from a bill line, declining balance; the fiscal book capped at 20 % a year (ET art. 137)', async () => {
    const owner = workspace();
    const v = await vendor(owner);
    const bill = await postedBill(sg, owner, v, {
      issue_date: '2026-06-15', due_date: '2026-07-15',
      lines: [{ description: 'Servidor Dell', account: '1528', quantity: 1, unit_price: 480000000, tax_rate_ppm: 190000 }, { description: 'Instalación', account: '5135', quantity: 1, unit_price: 100000 }],
    });
    // Line 1 is a service: not an asset account.
    expect(await sg.call('assets.capitalize', { bill_id: bill.id, line: 1, useful_life_months: 60 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/line' });
    expect(await sg.call('assets.capitalize', { bill_id: 'bil_nothing', line: 0, useful_life_months: 60 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/bill_id' });
    const asset = (await out('assets.capitalize', { bill_id: bill.id, line: 0, useful_life_months: 60, method: 'declining_balance' }, owner)).asset;
    // Cost = the line before VAT (the VAT went to 240810). Default rate: twice straight line = 2 × 12/60 = 40 % = 4000 bps.
    expect(asset).toMatchObject({ class: 'computers', cost: 480000000, declining_rate_bps: 4000, next_month: '2026-07', origin: { kind: 'bill', bill_id: bill.id, line: 0 } });
    expect(await sg.call('assets.capitalize', { bill_id: bill.id, line: 0, useful_life_months: 60 }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    // Not yet ended months are refused: the entries would be dated in the future.
    expect(await sg.call('assets.depreciate', { month: '2999-01' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/month' });
    const run = await out('assets.depreciate', { month: '2026-10' }, owner);
    // NIIF, declining balance at 40 %/12 a month on the book value, rounded half up:
    //   Jul 480,000,000 / 30 = 16,000,000                                  acc 16,000,000
    //   Aug 464,000,000 / 30 = 15,466,666.67 → 15,466,667                 acc 31,466,667
    //   Sep 448,533,333 / 30 = 14,951,111.10 → 14,951,111                 acc 46,417,778
    //   Oct 433,582,222 / 30 = 14,452,740.73 → 14,452,741                 acc 60,870,519
    // Fiscal: straight line at min(12/60 = 20 %, cap 20 %) = 480,000,000 × 20 % / 12 = 8,000,000 a month → 32,000,000.
    expect(run).toMatchObject({ assets: 1, niif_total: 60870519, fiscal_total: 32000000, complete: true });
    const after = (await out('assets.get', { id: asset.id }, owner)).asset;
    expect(after.schedule.map((m: any) => [m.month, m.niif, m.fiscal])).toEqual([
      ['2026-07', 16000000, 8000000], ['2026-08', 15466667, 8000000], ['2026-09', 14951111, 8000000], ['2026-10', 14452741, 8000000],
    ]);
    // Carrying amounts: NIIF 480,000,000 − 60,870,519 = 419,129,481; fiscal 480,000,000 − 32,000,000 = 448,000,000;
    // deferred-tax basis = 448,000,000 − 419,129,481 = 28,870,519 (a deductible difference).
    expect(after).toMatchObject({ niif_net: 419129481, fiscal_net: 448000000, deferred_tax_basis: 28870519 });
    const entries = await entriesOf(owner, asset.id);
    expect(entries.map((e) => [e.date, ...sides(e)])).toEqual([
      ['2026-07-31', 16000000, 16000000], ['2026-08-31', 15466667, 15466667], ['2026-09-30', 14951111, 14951111], ['2026-10-31', 14452741, 14452741],
    ]);
    expect(entries[0].lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['516020', 16000000, 0], ['159220', 0, 16000000]]);
    // Run again: nothing new.
    expect(await out('assets.depreciate', { month: '2026-10' }, owner)).toMatchObject({ assets: 0, entries: [], niif_total: 0 });
  });

  it('units of production: a month without usage posts nothing; a depreciated month\'s usage cannot change; a disposal left half done is finished by the sweep, once', async () => {
    const owner = workspace();
    expect(await sg.call('assets.create', { name: 'Torno', class: 'machinery', cost: 100000000, acquisition_date: '2026-08-01', useful_life_months: 120, credit_account: '1592', method: 'units_of_production', total_units: 9000 }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/credit_account' });
    expect(await sg.call('assets.create', { name: 'Torno', class: 'machinery', cost: 100000000, acquisition_date: '2026-08-01', useful_life_months: 120, credit_account: '111005', method: 'units_of_production' }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/total_units' });
    const asset = (await out('assets.create', {
      name: 'Torno CNC', class: 'machinery', cost: 100000000, residual_value: 10000000, acquisition_date: '2026-08-01', useful_life_months: 120, credit_account: '111005',
      method: 'units_of_production', total_units: 9000,
    }, owner)).asset;
    expect(asset).toMatchObject({ status: 'active', next_month: '2026-08', accounts: { cost: '1520', accumulated_depreciation: '159210', depreciation_expense: '516010' } });
    await out('assets.record_usage', { id: asset.id, month: '2026-08', units: 1000 }, owner);
    await out('assets.record_usage', { id: asset.id, month: '2026-10', units: 2500 }, owner);
    // Base 100,000,000 − 10,000,000 = 90,000,000. Aug: 90,000,000 × 1,000 / 9,000 = 10,000,000. Sep: no usage → 0.
    // Oct: 90,000,000 × 3,500 / 9,000 = 35,000,000 to date → 25,000,000. Fiscal: 90,000,000 / 120 = 750,000 a month → 2,250,000.
    expect(await out('assets.depreciate', { month: '2026-10' }, owner)).toMatchObject({ niif_total: 35000000, fiscal_total: 2250000 });
    expect(await sg.call('assets.record_usage', { id: asset.id, month: '2026-09', units: 10 }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const entries = await entriesOf(owner, asset.id);
    // The acquisition (debit 1520, credit 111005) and two months: September had no usage, so no entry.
    expect(entries.map((e) => [e.source.kind, e.date, ...sides(e)])).toEqual([
      ['asset_acquisition', '2026-08-01', 100000000, 100000000], ['depreciation', '2026-08-31', 10000000, 10000000], ['depreciation', '2026-10-31', 25000000, 25000000],
    ]);

    // As if a sale died after its intent was written: the sweep posts it, once.
    // Sale for 70,000,000: carrying 100,000,000 − 35,000,000 = 65,000,000 → gain 5,000,000 (4245);
    // fiscal carrying 100,000,000 − 2,250,000 = 97,750,000 → fiscal result −27,750,000.
    const doc = (await sg.db.collection('fixed_assets').findOne({ _id: asset.id as never }))!;
    const disposal = disposalOf(doc as never, { date: '2026-11-02', proceeds: 70000000, proceeds_account: '111005', party_id: null, reason: null });
    await sg.db.collection('fixed_assets').updateOne({ _id: asset.id as never }, { $set: { status: 'disposing', disposal, updated_at: new Date(Date.now() - 1000) } });
    expect(await assetsMaintenance(sweep())).toBeGreaterThanOrEqual(1);
    expect(await assetsMaintenance(sweep())).toBe(0);
    const sold = (await out('assets.get', { id: asset.id }, owner)).asset;
    expect(sold).toMatchObject({ status: 'sold', disposal: { gain: 5000000, fiscal_gain: -27750000 } });
    const sale = (await entriesOf(owner, asset.id)).filter((e) => e.source.kind === 'asset_disposal');
    expect(sale).toHaveLength(1);
    expect(sale[0].lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['159210', 35000000, 0], ['111005', 70000000, 0], ['1520', 0, 100000000], ['4245', 0, 5000000]]);
    expect(await sg.call('assets.dispose', { id: asset.id, date: '2026-11-03', proceeds: 0 }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('five runs at once, and a run that died after its entry: each asset-month is posted exactly once', async () => {
    const owner = workspace();
    const asset = (await out('assets.create', { name: 'Escritorios', class: 'office_equipment', cost: 1200000, acquisition_date: '2026-01-01', useful_life_months: 12, credit_account: '220505' }, owner)).asset;
    const runs = await Promise.all(Array.from({ length: 5 }, () => sg.call('assets.depreciate', { month: '2026-10' }, owner)));
    expect(runs.every((r) => r.ok || r.code === 'conflict')).toBe(true);
    await out('assets.depreciate', { month: '2026-10' }, owner);
    // Jan–Oct: 10 months × 1,200,000 / 12 = 100,000 → 1,000,000. Fiscal: min(12/12 = 100 %, cap 10 %) → 1,200,000 × 10 % / 12 = 10,000 a month → 100,000.
    let a = (await out('assets.get', { id: asset.id }, owner)).asset;
    expect(a).toMatchObject({ months_depreciated: 10, niif_accumulated: 1000000, fiscal_accumulated: 100000, deferred_tax_basis: 900000, next_month: '2026-11' });
    expect((await entriesOf(owner, asset.id)).filter((e) => e.source.kind === 'depreciation')).toHaveLength(10);
    // As if the October run died after posting its entry and before moving the asset on.
    await sg.db.collection('fixed_assets').updateOne({ _id: asset.id as never }, {
      $set: { next_month: '2026-10', months: 9, niif_accumulated: 900000, fiscal_accumulated: 90000 }, $pop: { schedule: 1 },
    });
    await out('assets.depreciate', { month: '2026-10' }, owner);
    a = (await out('assets.get', { id: asset.id }, owner)).asset;
    expect(a).toMatchObject({ months_depreciated: 10, niif_accumulated: 1000000, fiscal_accumulated: 100000 });
    expect((await entriesOf(owner, asset.id)).filter((e) => e.source.kind === 'depreciation')).toHaveLength(10);
    // Retired in November (proceeds 0): carrying 1,200,000 − 1,000,000 = 200,000 is a loss (5310).
    const retired = (await out('assets.dispose', { id: asset.id, date: '2026-11-05', proceeds: 0, reason: 'Dañados' }, owner)).asset;
    expect(retired).toMatchObject({ status: 'retired', disposal: { gain: -200000, fiscal_gain: -1100000 } });
    const entry = (await entriesOf(owner, asset.id)).find((e) => e.source.kind === 'asset_disposal')!;
    expect(entry.lines.map((l: any) => [l.account, l.debit, l.credit])).toEqual([['159215', 1000000, 0], ['1524', 0, 1200000], ['5310', 200000, 0]]);
  });
});

describe('fixed assets whose acquisition or disposal died mid-way: finished by the sweep, with no call', () => {
  it('stopped after a step under the runner, or left by the older version: each entry once, state and book values right, no marker left running', async () => {
    const owner = workspace();
    const old = new Date(Date.now() - 5 * 60_000);
    const dead = { db: sg.db, workspace: owner.workspace, now: old };
    /** What a process killed after step `k` of an operation leaves: its marker (begun `old`), the record, the first k steps done. */
    const stopAfter = async (kind: OperationKind<AssetDoc>, a: AssetDoc, k: number) => {
      for (const step of kind.steps.slice(0, k)) a = await step(dead, a);
    };
    const made = (await out('assets.create', { name: 'Escritorio', class: 'office_equipment', cost: 3000000, acquisition_date: '2026-09-01', useful_life_months: 60, credit_account: '220505' }, owner)).asset;
    const { pos: _pos, pos_key: _key, ...template } = (await assets(sg.db).findById(made.id).lean()) as AssetDoc & { pos?: number; pos_key?: string };
    const recording = (name: string, cost: number): AssetDoc => {
      const id = `ast_${randomBytes(6).toString('hex')}`;
      return { ...template, _id: id, name, cost, status: 'recording', origin: { kind: 'manual', credit_account: '220505', entry_id: acquisitionEntryId(id) }, rev: 0, created_at: old, updated_at: old };
    };
    // R: recorded under the runner, killed after its entry was posted (step 1 of 2).
    const r = recording('Archivador', 2000000);
    await beginOperation(dead, acquisitionOperation, r._id);
    await createPositioned(assets(sg.db), r);
    await stopAfter(acquisitionOperation, r, 1);
    // L: left `recording` by the older version (its intent on the asset alone, no marker), nothing posted.
    const l = recording('Sillas', 1500000);
    await createPositioned(assets(sg.db), l);
    // Data an older version left is adopted at the upgrade, once (operations.ts adoptLegacyStore): this is that upgrade.
    await forgetLegacyAdoption(sg.db);
    // D: the Escritorio sold for 2,500,000 into 111005 under the runner, killed after its entry (step 2 of 3).
    const disposal = disposalOf(template, { date: '2026-10-15', proceeds: 2500000, proceeds_account: '111005', party_id: null, reason: null });
    await beginOperation(dead, disposalOperation, made.id);
    const d = (await assets(sg.db).findOneAndUpdate({ _id: made.id, status: 'active' }, { $set: { status: 'disposing', disposal, updated_at: old }, $inc: { rev: 1 } }, { returnDocument: 'after' }).lean())!;
    await stopAfter(disposalOperation, d, 2);

    expect(await assetsMaintenance(sweep())).toBeGreaterThanOrEqual(3);
    const [ar, al, ad] = await Promise.all([r._id, l._id, made.id].map(async (id) => (await out('assets.get', { id }, owner)).asset));
    // Nothing depreciated yet: each carried at cost in both books.
    expect(ar).toMatchObject({ status: 'active', niif_net: 2000000, fiscal_net: 2000000, months_depreciated: 0 });
    expect(al).toMatchObject({ status: 'active', niif_net: 1500000, fiscal_net: 1500000 });
    // Sold for 2,500,000 at a carrying amount of 3,000,000 (no month depreciated): a loss of 500,000 in both books.
    expect(ad).toMatchObject({ status: 'sold', disposal: { proceeds: 2500000, gain: -500000, fiscal_gain: -500000, niif_net: 3000000 } });
    const lines = (e: { lines: { account: string; debit: number; credit: number }[] }) => e.lines.map((x) => [x.account, x.debit, x.credit]);
    // Each entry once: Dr 1524 / Cr 220505 at cost; the sale Dr 111005 2,500,000 + Dr 5310 500,000 = Cr 1524 3,000,000.
    expect((await entriesOf(owner, r._id)).map(lines)).toEqual([[['1524', 2000000, 0], ['220505', 0, 2000000]]]);
    expect((await entriesOf(owner, l._id)).map(lines)).toEqual([[['1524', 1500000, 0], ['220505', 0, 1500000]]]);
    expect((await entriesOf(owner, made.id)).map(lines)).toEqual([[['1524', 3000000, 0], ['220505', 0, 3000000]], [['111005', 2500000, 0], ['1524', 0, 3000000], ['5310', 500000, 0]]]);
    // One marker store: the runner's, every operation done (the older version's adopted into it).
    const markers = await sg.db.collection('operations').find({ workspace: owner.workspace, kind: { $in: ['asset_acquisition', 'asset_disposal'] } }).sort({ _id: 1 }).toArray();
    expect(markers.map((m) => [m._id, m.status]).sort()).toEqual([[`asset_acquisition:${l._id}`, 'done'], [`asset_acquisition:${made.id}`, 'done'], [`asset_acquisition:${r._id}`, 'done'], [`asset_disposal:${made.id}`, 'done']].sort());
    // A second pass changes nothing.
    const journal = await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace });
    expect(await assetsMaintenance(sweep())).toBe(0);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace })).toBe(journal);
  });

  it('a month is not closed under a disposal in flight (it would cut it in two); closed once the sweep finished it', async () => {
    const owner = workspace();
    const made = (await out('assets.create', { name: 'Nevera', class: 'office_equipment', cost: 1000000, acquisition_date: '2026-09-01', useful_life_months: 60, credit_account: '111005' }, owner)).asset;
    const doc = (await assets(sg.db).findById(made.id).lean())!;
    // Retired on 2026-10-20 by a call still running (its marker fresh): nothing posted yet.
    await beginOperation({ db: sg.db, workspace: owner.workspace, now: new Date() }, disposalOperation, made.id);
    const disposal = disposalOf(doc, { date: '2026-10-20', proceeds: 0, proceeds_account: null, party_id: null, reason: null });
    await assets(sg.db).updateOne({ _id: made.id }, { $set: { status: 'disposing', disposal }, $inc: { rev: 1 } });
    expect(await sg.call('periods.close', { month: '2026-10' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await assetsMaintenance(sweep())).toBeGreaterThanOrEqual(1);
    // Retired at its carrying amount, 1,000,000 (no month depreciated): Dr 5310 / Cr 1524, dated in the month; then the month closes.
    expect((await entriesOf(owner, made.id)).filter((e) => e.source.kind === 'asset_disposal').map((e) => [e.date, ...sides(e)])).toEqual([['2026-10-20', 1000000, 1000000]]);
    await out('periods.close', { month: '2026-10' }, owner);
    expect((await out('assets.get', { id: made.id }, owner)).asset).toMatchObject({ status: 'retired', disposal: { gain: -1000000 } });
  });
});

describe('fixed assets sold to a customer: invoiced once, income booked once', () => {
  /** An entry's lines as [account, debit, credit]. */
  const linesOf = (e: { lines: { account: string; debit: number; credit: number }[] } | null | undefined) => e?.lines.map((l) => [l.account, l.debit, l.credit]);

  it('the sale is a posted invoice without IVA (ET art. 420 par. 1) crediting 4245, the disposal nets it: a gain, a loss, and a sale a dead call left is finished by the sweep once', async () => {
    const owner = await configuredWorkspace(sg);
    const buyer = await party(owner, { name: 'Reciclajes Bogotá SAS', kind: 'customer' });
    // Three identical laptops: 120,000.00 each, 24 months straight line, in service 2025-09-01.
    const terms = { name: 'Portátil', class: 'computers', cost: 12000000, acquisition_date: '2025-09-01', useful_life_months: 24, credit_account: '111005' };
    const [a, b, c] = [(await out('assets.create', terms, owner)).asset, (await out('assets.create', terms, owner)).asset, (await out('assets.create', terms, owner)).asset];
    await out('assets.depreciate', { month: '2026-10' }, owner);
    // Sep 2025–Oct 2026 = 14 months. NIIF 12,000,000 / 24 = 500,000 a month → 7,000,000; carrying 12,000,000 − 7,000,000 = 5,000,000.
    // Fiscal: 12/24 = 50 % a year exceeds the 20 % cap for computers (ET art. 137) → 12,000,000 × 20 % / 12 = 200,000 a month → 2,800,000;
    // fiscal carrying 12,000,000 − 2,800,000 = 9,200,000. Deferred-tax basis 9,200,000 − 5,000,000 = 4,200,000.

    // Neither a buyer nor an account the proceeds came into: refused, nothing done.
    expect(await sg.call('assets.dispose', { id: a.id, date: '2026-11-10', proceeds: 6000000 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/party_id' });
    // IVA in Colombia is 19, 5 or 0 %.
    expect(await sg.call('assets.dispose', { id: a.id, date: '2026-11-10', proceeds: 6000000, party_id: buyer, tax_rate_ppm: 160000 }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/tax_rate_ppm' });
    expect((await out('assets.get', { id: a.id }, owner)).asset.status).toBe('active');

    // A sold for 60,000.00: gain 6,000,000 − 5,000,000 = 1,000,000; fiscal 6,000,000 − 9,200,000 = −3,200,000 (= 1,000,000 − 4,200,000).
    const soldA = (await out('assets.dispose', { id: a.id, date: '2026-11-10', proceeds: 6000000, party_id: buyer }, owner)).asset;
    expect(soldA).toMatchObject({
      status: 'sold', disposal: { gain: 1000000, fiscal_gain: -3200000, niif_net: 5000000, fiscal_net: 9200000, deferred_tax_basis: 4200000, invoice_id: `inv_a${a.id.slice(4)}_sale`, proceeds_account: null },
    });
    const invoiceA = (await out('invoices.get', { id: soldA.disposal.invoice_id }, owner)).invoice;
    // No IVA: 6,000,000 + 0 = 6,000,000, posted and numbered from the DIAN range, owed by the buyer.
    expect(invoiceA).toMatchObject({ status: 'posted', customer_id: buyer, issue_date: '2026-11-10', subtotal: 6000000, tax_total: 0, total: 6000000, source: { asset_id: a.id } });
    expect(invoiceA.number).toMatch(/^SETP99\d+$/);
    const journal = sg.db.collection('journal_entries');
    // The invoice: Dr 130505 6,000,000 / Cr 4245 6,000,000 (the price, not a sale: nothing to 413595).
    expect(linesOf(await journal.findOne({ workspace: owner.workspace, _id: `je_${invoiceA.id}` as never }) as never)).toEqual([['130505', 6000000, 0], ['4245', 0, 6000000]]);
    // The disposal: Dr 159220 7,000,000 + Dr 4245 5,000,000 (the carrying amount, taken back from the price) = Cr 1528 12,000,000.
    // 4245 over both: 6,000,000 − 5,000,000 = 1,000,000 credit = the gain, booked once.
    const disposalA = (await entriesOf(owner, a.id)).find((e) => e.source.kind === 'asset_disposal');
    expect(linesOf(disposalA)).toEqual([['159220', 7000000, 0], ['4245', 5000000, 0], ['1528', 0, 12000000]]);
    // A credit note of the sale would take its price back from 4245 while the disposal keeps the asset out of the books
    // (a return) or its gain as it was (a price change): refused (409, saying why), nothing written, the invoice as it was.
    for (const concept of [2, 3]) {
      expect(await sg.call('invoices.credit_note', { invoice_id: invoiceA.id, concept, reason: 'Devolución del portátil' }, owner)).toMatchObject({ ok: false, code: 'conflict', message: expect.stringContaining(`sale of fixed asset ${a.id}`) });
    }
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace, kind: 'credit_note' })).toBe(0);
    expect((await out('invoices.get', { id: invoiceA.id }, owner)).invoice).toMatchObject({ status: 'posted', balance: 6000000 });

    // B sold for 40,000.00: loss 4,000,000 − 5,000,000 = −1,000,000; fiscal 4,000,000 − 9,200,000 = −5,200,000.
    // Disposal: Dr 159220 7,000,000 + Dr 4245 4,000,000 (the whole price) + Dr 5310 1,000,000 = Cr 1528 12,000,000; 4245 ends at 0.
    const soldB = (await out('assets.dispose', { id: b.id, date: '2026-11-12', proceeds: 4000000, party_id: buyer, due_date: '2026-12-12' }, owner)).asset;
    expect(soldB).toMatchObject({ status: 'sold', disposal: { gain: -1000000, fiscal_gain: -5200000, deferred_tax_basis: 4200000 } });
    expect((await out('invoices.get', { id: soldB.disposal.invoice_id }, owner)).invoice).toMatchObject({ status: 'posted', total: 4000000, due_date: '2026-12-12' });
    expect(linesOf((await entriesOf(owner, b.id)).find((e) => e.source.kind === 'asset_disposal'))).toEqual([['159220', 7000000, 0], ['4245', 4000000, 0], ['5310', 1000000, 0], ['1528', 0, 12000000]]);
    // Sold: a second sale is refused, nothing invoiced again.
    expect(await sg.call('assets.dispose', { id: b.id, date: '2026-11-13', proceeds: 4000000, party_id: buyer }, owner)).toMatchObject({ ok: false, code: 'conflict' });

    // C: as if the call selling it for 40,000.00 died right after writing its intent (the same intent B's call wrote, with C's ids).
    const stored = (await sg.db.collection('fixed_assets').findOne({ _id: b.id as never }))!;
    const intent = { ...stored.disposal, entry_id: `je_disp_${c.id}`, invoice: { ...stored.disposal.invoice, id: `inv_a${c.id.slice(4)}_sale` } };
    await sg.db.collection('fixed_assets').updateOne({ _id: c.id as never }, { $set: { status: 'disposing', disposal: intent, updated_at: new Date(Date.now() - 1000) }, $inc: { rev: 1 } });
    // No marker: the intent as an older version kept it (dispose begins its marker first), adopted at the upgrade (operations.ts adoptLegacyStore).
    await forgetLegacyAdoption(sg.db);
    expect(await assetsMaintenance(sweep())).toBeGreaterThanOrEqual(1);
    expect(await assetsMaintenance(sweep())).toBe(0);
    expect((await out('assets.get', { id: c.id }, owner)).asset).toMatchObject({ status: 'sold', disposal: { gain: -1000000, invoice_id: `inv_a${c.id.slice(4)}_sale` } });
    const invoicesOfC = await sg.db.collection('invoices').find({ workspace: owner.workspace, 'source.asset_id': c.id }).toArray();
    expect(invoicesOfC.map((i) => [i.status, i.total])).toEqual([['posted', 4000000]]);
    expect(await journal.countDocuments({ workspace: owner.workspace, _id: `je_${invoicesOfC[0]._id}` as never })).toBe(1);
    expect((await entriesOf(owner, c.id)).filter((e) => e.source.kind === 'asset_disposal')).toHaveLength(1);
    // Three invoices in all, numbered consecutively; 413595 (sales) never touched by any of them.
    const numbers = (await sg.db.collection('invoices').find({ workspace: owner.workspace }).toArray()).map((i) => Number(String(i.number).slice(4))).sort();
    expect(numbers).toEqual([numbers[0], numbers[0] + 1, numbers[0] + 2]);
    expect(await journal.countDocuments({ workspace: owner.workspace, 'lines.account': '413595' })).toBe(0);
  });

  it('a Colombian workspace without its e-invoicing set-up cannot invoice the sale: refused before anything is written', async () => {
    const owner = workspace();
    const buyer = await party(owner, { name: 'Chatarrería El Sol', kind: 'customer' });
    const asset = (await out('assets.create', { name: 'Silla', class: 'office_equipment', cost: 500000, acquisition_date: '2026-10-01', useful_life_months: 60, credit_account: '111005' }, owner)).asset;
    expect(await sg.call('assets.dispose', { id: asset.id, date: '2026-10-20', proceeds: 100000, party_id: buyer }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await out('assets.get', { id: asset.id }, owner)).asset).toMatchObject({ status: 'active', disposal: null });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(0);
  });
});

describe('rentals: availability under concurrency, deposit, damages, invoices', () => {
  it('ten overlapping bookings at once: one wins, nine are refused 409; the resource frees on cancel; an orphaned hold is released by the sweep', async () => {
    const owner = workspace();
    const customer = await party(owner, { name: 'Eventos Caribe SAS', kind: 'customer' });
    const item = (await out('items.create', { name: 'Carpa 10×10', kind: 'product', price: { amount: 20000000, currency: 'COP' } }, owner)).item;
    // Ten bookings over the same weekend, some shifted by hours: every pair overlaps.
    const tries = await Promise.all(Array.from({ length: 10 }, (_, i) => sg.call('rentals.create', {
      item_id: item.id, customer_id: customer, unit: 'day', rate: 20000000, start: `2026-12-05T${String(10 + i).padStart(2, '0')}:00:00Z`, end: '2026-12-07T10:00:00Z',
    }, owner)));
    expect(tries.filter((r) => r.ok)).toHaveLength(1);
    expect(tries.filter((r) => !r.ok).map((r) => r.code)).toEqual(Array(9).fill('conflict'));
    expect(await sg.db.collection('rentals').countDocuments({ workspace: owner.workspace })).toBe(1);
    const winner = tries.find((r) => r.ok)!.output.rental;
    // Half-open: a booking that starts when the winner ends is free.
    expect((await out('rentals.availability', { item_id: item.id, start: winner.end, end: '2026-12-08T10:00:00Z' }, owner)).available).toBe(true);
    expect((await out('rentals.availability', { item_id: item.id, start: '2026-12-06T00:00:00Z', end: '2026-12-06T01:00:00Z' }, owner)).held_by.map((h: any) => h.rental_id)).toEqual([winner.id]);
    await out('rentals.cancel', { id: winner.id }, owner);
    expect((await out('rentals.availability', { item_id: item.id, start: '2026-12-06T00:00:00Z', end: '2026-12-06T01:00:00Z' }, owner)).available).toBe(true);
    // A hold whose booking died before its rental was written blocks nothing once the sweep has run.
    await claimHold({ db: sg.db, workspace: owner.workspace, now: new Date(Date.now() - 1000) }, { kind: 'item', id: item.id, name: item.name }, 'rnt_ghost', '2026-12-20T00:00:00.000Z', '2026-12-21T00:00:00.000Z');
    expect(await sg.call('rentals.create', { item_id: item.id, customer_id: customer, unit: 'hour', rate: 1000000, start: '2026-12-20T10:00:00Z', end: '2026-12-20T12:00:00Z' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await rentalsMaintenance(sweep())).toBeGreaterThanOrEqual(1);
    // 2 hours × 10,000.00 = 20,000.00.
    expect((await out('rentals.create', { item_id: item.id, customer_id: customer, unit: 'hour', rate: 1000000, start: '2026-12-20T10:00:00Z', end: '2026-12-20T12:00:00Z' }, owner)).rental).toMatchObject({ total: 2000000 });
    expect(await sg.call('rentals.create', { customer_id: customer, unit: 'hour', rate: 1, start: '2026-12-20T10:00:00Z', end: '2026-12-20T12:00:00Z' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/item_id' });
    expect(await sg.call('rentals.create', { item_id: item.id, customer_id: customer, unit: 'month', rate: 1, start: '2027-01-01T05:00:00Z', end: '2027-02-15T05:00:00Z' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/end' });
  });

  it('a day rental delivered with a deposit and returned damaged: deposit in and out through 2810, the rental invoiced with its VAT, the damages without (4255), once', async () => {
    const owner = await configuredWorkspace(sg);
    const customer = await party(owner, { name: 'Constructora Andes SAS', kind: 'customer' });
    const item = (await out('items.create', { name: 'Andamio', kind: 'product', price: { amount: 5000000, currency: 'COP' } }, owner)).item;
    // 2026-11-02 08:00 → 2026-11-04 20:00 = 60 h → 3 days (rounded up) × 50,000.00 = 150,000.00.
    const rental = (await out('rentals.create', { item_id: item.id, customer_id: customer, unit: 'day', rate: 5000000, deposit: 30000000, start: '2026-11-02T13:00:00Z', end: '2026-11-05T01:00:00Z', post: true }, owner)).rental;
    expect(rental.periods).toEqual([expect.objectContaining({ units: 3, amount: 15000000 })]);
    expect(await sg.call('rentals.return', { id: rental.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    await out('rentals.deliver', { id: rental.id, condition: 'Nuevo' }, owner);
    const returned = (await out('rentals.return', { id: rental.id, condition: 'Un tubo doblado', damages: 8000000, damages_description: 'Tubo de 2 m' }, owner)).rental;
    expect(returned).toMatchObject({ status: 'returned', return: { damages: 8000000, damages_invoice_id: `inv_${rental.id.slice(4)}_dmg` } });
    // A second return call finishes nothing new.
    await out('rentals.return', { id: rental.id }, owner);
    const invoiced = await out('rentals.invoice', { id: rental.id }, owner);
    expect(invoiced.invoiced).toHaveLength(1);
    expect((await out('rentals.invoice', { id: rental.id }, owner)).invoiced).toEqual([]);
    // Rental: 3 DAY × 50,000.00 + 19 % = 178,500.00 — a service (ET art. 420 lit. c). Damages 80,000.00 + 0 = 80,000.00:
    // compensation is no sale of goods or services (ET art. 420), the same rule as damages settled from a deposit.
    const rentInvoice = (await out('invoices.get', { id: invoiced.invoiced[0] }, owner)).invoice;
    expect(rentInvoice).toMatchObject({ status: 'posted', issue_date: '2026-11-02', subtotal: 15000000, tax_total: 2850000, total: 17850000, source: { rental_id: rental.id } });
    expect((await out('invoices.get', { id: returned.return.damages_invoice_id }, owner)).invoice).toMatchObject({ status: 'posted', subtotal: 8000000, tax_total: 0, total: 8000000 });
    // Journalled: the rental is a sale (413595 + 240805 IVA); the damages are indemnizaciones (4255), never sales.
    const invoiceEntry = async (id: string) => (await sg.db.collection('journal_entries').findOne({ workspace: owner.workspace, _id: `je_${id}` as never }))!.lines.map((l: any) => [l.account, l.debit, l.credit]);
    expect(await invoiceEntry(rentInvoice.id)).toEqual([['130505', 17850000, 0], ['413595', 0, 15000000], ['240805', 0, 2850000]]);
    expect(await invoiceEntry(returned.return.damages_invoice_id)).toEqual([['130505', 8000000, 0], ['4255', 0, 8000000]]);
    // Half the damages waived (a credit note of 0.5 of the line): 0.5 × 80,000.00 = 40,000.00, no VAT. The mirror of the
    // line's own entry — Dr 4255 40,000.00 / Cr 130505 40,000.00 —, not a return of sales (417505: PUC class 41 only).
    const waived = (await out('invoices.credit_note', { invoice_id: returned.return.damages_invoice_id, concept: 3, reason: 'Medio tubo recuperado', lines: [{ line: 0, quantity: 0.5 }] }, owner)).credit_note;
    expect(waived).toMatchObject({ subtotal: 4000000, tax_total: 0, total: 4000000 });
    expect(await invoiceEntry(waived.id)).toEqual([['4255', 4000000, 0], ['130505', 0, 4000000]]);
    // 4255 over both entries: 8,000,000 − 4,000,000 = 4,000,000 credit; the damages owed 8,000,000 − 4,000,000 = 4,000,000.
    expect((await out('invoices.get', { id: returned.return.damages_invoice_id }, owner)).invoice).toMatchObject({ balance: 4000000 });
    // The rental's own invoice credited whole is a return of a sale: Dr 417505 150,000.00 + Dr 240805 28,500.00 / Cr 130505 178,500.00.
    const rentCredit = (await out('invoices.credit_note', { invoice_id: rentInvoice.id, concept: 2, reason: 'Servicio no prestado' }, owner)).credit_note;
    expect(await invoiceEntry(rentCredit.id)).toEqual([['417505', 15000000, 0], ['240805', 2850000, 0], ['130505', 0, 17850000]]);
    const deposits = await sg.db.collection('journal_entries').find({ workspace: owner.workspace, 'source.id': rental.id }).sort({ 'source.kind': 1 }).toArray();
    expect(deposits.map((e) => [e.source.kind, e.lines.map((l: any) => [l.account, l.debit, l.credit])])).toEqual([
      ['rental_deposit', [['111005', 30000000, 0], ['2810', 0, 30000000]]],
      ['rental_deposit_refund', [['111005', 0, 30000000], ['2810', 30000000, 0]]],
    ]);
    // The item is free again after the return.
    expect((await out('rentals.availability', { item_id: item.id, start: '2026-11-03T00:00:00Z', end: '2026-11-04T00:00:00Z' }, owner)).available).toBe(true);
  });

  it('damages settled from the deposit: 2810 → 4255 for what it covers, the rest of the deposit refunded, or the rest of the damages invoiced without VAT', async () => {
    const owner = workspace();
    const customer = await party(owner, { name: 'Eventos del Caribe SAS', kind: 'customer' });
    const item = (await out('items.create', { name: 'Carpa 6×6', kind: 'product', price: { amount: 5000000, currency: 'COP' } }, owner)).item;
    const rentAndReturn = async (start: string, end: string, damages: number) => {
      const rental = (await out('rentals.create', { item_id: item.id, customer_id: customer, unit: 'day', rate: 5000000, deposit: 30000000, start, end }, owner)).rental;
      await out('rentals.deliver', { id: rental.id }, owner);
      const returned = (await out('rentals.return', { id: rental.id, condition: 'Lona rasgada', damages, damages_description: 'Lona', settle_from_deposit: true }, owner)).rental;
      const entries = await sg.db.collection('journal_entries').find({ workspace: owner.workspace, 'source.id': rental.id }).toArray();
      const byKind = Object.fromEntries(entries.map((e) => [e.source.kind, e.lines.map((l: any) => [l.account, l.debit, l.credit])]));
      for (const e of entries) expect(sides(e as never)[0]).toBe(sides(e as never)[1]);
      return { rental, returned, byKind };
    };
    // Damages 80,000.00 against a deposit of 300,000.00: the deposit covers all 80,000.00
    // (Dr 2810 / Cr 4255), 300,000.00 − 80,000.00 = 220,000.00 goes back; nothing is invoiced.
    const small = await rentAndReturn('2026-11-02T13:00:00Z', '2026-11-03T13:00:00Z', 8000000);
    expect(small.returned.return).toMatchObject({ settled_from_deposit: true, deposit_applied: 8000000, refunded: 22000000, invoiced: 0, damages_invoice_id: null });
    expect(small.byKind).toEqual({
      rental_deposit: [['111005', 30000000, 0], ['2810', 0, 30000000]],
      rental_damages_settlement: [['2810', 8000000, 0], ['4255', 0, 8000000]],
      rental_deposit_refund: [['111005', 0, 22000000], ['2810', 22000000, 0]],
    });
    // 2810 for this rental: +300,000.00 − 80,000.00 − 220,000.00 = 0.
    // Damages 450,000.00 against the same deposit: it covers 300,000.00, nothing is refunded, and
    // 450,000.00 − 300,000.00 = 150,000.00 is invoiced at 0 % (compensation is not a sale: ET art. 420).
    const big = await rentAndReturn('2026-11-10T13:00:00Z', '2026-11-11T13:00:00Z', 45000000);
    expect(big.returned.return).toMatchObject({ deposit_applied: 30000000, refunded: 0, invoiced: 15000000, refund_entry_id: null, damages_invoice_id: `inv_${big.rental.id.slice(4)}_dmg` });
    expect(big.byKind).toEqual({
      rental_deposit: [['111005', 30000000, 0], ['2810', 0, 30000000]],
      rental_damages_settlement: [['2810', 30000000, 0], ['4255', 0, 30000000]],
    });
    expect((await out('invoices.get', { id: big.returned.return.damages_invoice_id }, owner)).invoice).toMatchObject({
      subtotal: 15000000, tax_total: 0, total: 15000000, lines: [expect.objectContaining({ tax_rate_ppm: 0, account: '4255' })],
    });
    // Again: nothing posted or invoiced twice.
    await out('rentals.return', { id: big.rental.id }, owner);
    expect(await sg.db.collection('journal_entries').countDocuments({ workspace: owner.workspace, 'source.id': big.rental.id })).toBe(2);
    // Nothing to settle, or no deposit to settle from: refused at the field, nothing done.
    const plain = (await out('rentals.create', { item_id: item.id, customer_id: customer, unit: 'day', rate: 5000000, start: '2026-11-20T13:00:00Z', end: '2026-11-21T13:00:00Z' }, owner)).rental;
    await out('rentals.deliver', { id: plain.id }, owner);
    expect(await sg.call('rentals.return', { id: plain.id, damages: 100, damages_description: 'x', settle_from_deposit: true }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/settle_from_deposit' });
    expect(await sg.call('rentals.return', { id: plain.id, settle_from_deposit: true }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/settle_from_deposit' });
    expect((await out('rentals.get', { id: plain.id }, owner)).rental.status).toBe('delivered');
  });
});

describe('plans: trial, downgrade and cancellation (the proration rule\'s other branches)', () => {
  it('a trial bills nothing until it ends; a change in the trial is not prorated; a cancellation in the trial issues nothing at all', async () => {
    const owner = workspace();
    const customer = await party(owner, { name: 'Diseño Sur SAS', kind: 'customer' });
    const basic = (await out('plans.create', { name: 'Básico', price: 10000000, interval: 'month', trial_days: 14 }, owner)).plan;
    const pro = (await out('plans.create', { name: 'Pro', price: 25000000, interval: 'month' }, owner)).plan;
    const yearly = (await out('plans.create', { name: 'Anual', price: 99000000, interval: 'year' }, owner)).plan;
    const sub = (await out('plans.subscribe', { plan_id: basic.id, customer_id: customer, start_date: '2026-10-01' }, owner)).subscription;
    // 2026-10-01 + 14 days = 2026-10-15; no setup fee, so no setup invoice.
    expect(sub).toMatchObject({ billing_start: '2026-10-15', setup_invoice_id: null });
    expect((await out('invoices.recurring_run', { as_of: '2026-10-14' }, owner)).issued).toEqual([]);
    expect(await sg.call('plans.change', { subscription_id: sub.id, plan_id: yearly.id, date: '2026-10-05' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/plan_id' });
    expect(await sg.call('plans.change', { subscription_id: sub.id, plan_id: 'pln_none', date: '2026-10-05' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/plan_id' });
    expect(await sg.call('plans.change', { subscription_id: 'sub_none', plan_id: pro.id }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const changed = (await out('plans.change', { subscription_id: sub.id, plan_id: pro.id, date: '2026-10-05' }, owner)).subscription;
    expect(changed.changes).toEqual([expect.objectContaining({ charge: 0, credit: 0, invoice_id: null })]);
    // Cancelled before the first billed day; that day (2026-10-15) is past, so it reads as cancelled already.
    expect((await out('plans.cancel', { subscription_id: sub.id }, owner)).subscription).toMatchObject({ status: 'cancelled', cancel_at: '2026-10-15' });
    expect((await out('invoices.recurring_run', { as_of: '2026-11-20' }, owner)).issued).toEqual([]);
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(0);
  });

  it('a downgrade takes effect with the next period: nothing charged or refunded now, the next period at the cheaper plan', async () => {
    const owner = workspace();
    const customer = await party(owner, { name: 'Taller Oeste SAS', kind: 'customer' });
    const basic = (await out('plans.create', { name: 'Básico', price: 10000000, interval: 'month' }, owner)).plan;
    const pro = (await out('plans.create', { name: 'Pro', price: 25000000, interval: 'month' }, owner)).plan;
    const sub = (await out('plans.subscribe', { plan_id: pro.id, customer_id: customer, start_date: '2026-09-01' }, owner)).subscription;
    expect((await out('invoices.recurring_run', { as_of: '2026-09-30' }, owner)).issued).toHaveLength(1);
    const down = (await out('plans.change', { subscription_id: sub.id, plan_id: basic.id, date: '2026-09-10' }, owner)).subscription;
    expect(down.changes).toEqual([expect.objectContaining({ effective_date: '2026-10-01', days_remaining: 21, days_in_period: 30, charge: 0, credit: 0, invoice_id: null })]);
    const october = (await out('invoices.recurring_run', { as_of: '2026-10-01' }, owner)).issued;
    // 100,000.00 + 19 % = 119,000.00.
    expect((await out('invoices.get', { id: october[0].invoice_id }, owner)).invoice).toMatchObject({ issue_date: '2026-10-01', subtotal: 10000000, total: 11900000 });
    // A change dated after the billed period is refused until that period is invoiced.
    expect(await sg.call('plans.change', { subscription_id: sub.id, plan_id: pro.id, date: '2026-11-02' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('plans: dunning through the sweep', () => {
  /** One pass of the plans module's dunning, as the service's sweep runs it, at noon UTC of `day` (or now). */
  const dun = (day?: string) => dunSubscriptions({
    db: sg.db, now: day ? new Date(`${day}T12:00:00Z`) : new Date(), log: createLogger('test', 'silent'), events: systemEventsFor(sg.governance.ledger, 'invoices', 'plans'),
    mailQuota: sg.governance.mailQuota,
  });
  /** The Message-IDs of the messages delivered to `to`, read from the Maildir (the header may be folded: RFC 5322 §2.2.3). */
  const messageIdsTo = (to: string) => readMaildir(process.env.CUADRA_MAILDIR!).filter((m) => m.raw.includes(`Envelope-to: ${to}`)).map((m) => /^Message-ID:\s*(<[^>]+>)/mi.exec(m.raw)?.[1]);
  /** The filters of the reads `work` sent to the invoices collection, seen by the driver's command monitoring. */
  async function invoiceReads(work: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
    const filters: Record<string, unknown>[] = [];
    const listen = (e: { commandName: string; command: Record<string, any> }) => {
      if ((e.commandName === 'find' || e.commandName === 'aggregate' || e.commandName === 'count') && e.command[e.commandName] === 'invoices') filters.push(e.command.filter ?? e.command.query ?? { pipeline: e.command.pipeline });
    };
    const client = sg.db.getClient();
    client.on('commandStarted', listen);
    try {
      await work();
    } finally {
      client.off('commandStarted', listen);
    }
    return filters;
  }
  /** Messages the real SMTP server delivered to `to` (its Maildir), waiting for `n` (up to EVENT_WAIT_MS). */
  async function mailsTo(to: string, n: number): Promise<number> {
    const count = () => readMaildir(process.env.CUADRA_MAILDIR!).filter((m) => m.raw.includes(`Envelope-to: ${to}`)).length;
    for (const deadline = Date.now() + EVENT_WAIT_MS; count() < n && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
    return count();
  }

  it('an unpaid invoice: reminded at due + 3 and + 10, suspended at + 21 (each step e-mailed and ledgered once; nothing invoiced while suspended); paid, it is active again from the next period', async () => {
    const owner = await configuredWorkspace(sg);
    const email = `pagos.${randomBytes(4).toString('hex')}@disenonorte.example.co`;
    const customer = await party(owner, { name: 'Diseño Norte SAS', kind: 'customer', email });
    expect(await sg.call('plans.create', { name: 'Mal', price: 100, interval: 'month', dunning: { reminder_days: 5, second_reminder_days: 5, suspend_days: 9 } }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/dunning/second_reminder_days' });
    const plan = (await out('plans.create', { name: 'Estudio', price: 10000000, interval: 'month', due_days: 5 }, owner)).plan;
    expect(plan.dunning).toEqual({ reminder_days: 3, second_reminder_days: 10, suspend_days: 21 });
    const sub = (await out('plans.subscribe', { plan_id: plan.id, customer_id: customer, start_date: '2026-10-01', post: true }, owner)).subscription;
    const [october] = (await out('invoices.recurring_run', { as_of: '2026-10-01' }, owner)).issued;
    // 100,000.00 + 19 % = 119,000.00, issued 2026-10-01, due 2026-10-01 + 5 = 2026-10-06.
    expect((await out('invoices.get', { id: october.invoice_id }, owner)).invoice).toMatchObject({ status: 'posted', total: 11900000, due_date: '2026-10-06' });

    // Posted, it is in the due-day index kept over every workspace (`*|<due date>`), which the pass reads instead of the invoices.
    const dueDay = () => sg.db.collection('subscription_invoice_due_index').findOne({ _id: '*|2026-10-06' as never });
    expect((await dueDay())?.ids).toContain(october.invoice_id);

    // 2026-10-08: 2 days late, within the grace (3). 2026-10-09: 3 days → the reminder; again the same day: nothing more.
    await dun('2026-10-08');
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription.dunning).toBeNull();
    // The pass reads invoices by `_id` only — never a query over every workspace's invoices (before: by subscription, status and due date, a scan).
    const reads = await invoiceReads(() => dun('2026-10-09'));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((f) => !('_id' in f))).toEqual([]);
    await dun('2026-10-09');
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription).toMatchObject({
      status: 'active', dunning: { invoice_id: october.invoice_id, due_date: '2026-10-06', level: 1, stage: 'reminder', notices: [{ level: 1, to: email, status: 'sent' }] },
    });
    expect(await mailsTo(email, 1)).toBe(1);
    // As if the sweep that handed the reminder over died before storing `sent`: past the repair wait the next pass takes it over,
    // finds its copy in the bounce mailbox (the same SMTP transaction delivered it) and marks it sent — nothing sent again
    // (before: sent a second time); the ledger keeps one entry.
    const [reminderId] = messageIdsTo(email);
    expect(reminderId).toMatch(/^<dunning\..+\.1@/);
    await sg.db.collection('plan_subscriptions').updateOne({ _id: sub.id as never }, { $set: { 'dunning.notices.0.status': 'sending', 'dunning.notices.0.at': new Date('2026-10-09T11:00:00Z') } });
    await dun('2026-10-09');
    await dun('2026-10-09');
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription.dunning.notices).toMatchObject([{ level: 1, status: 'sent' }]);
    // 2026-10-16: 10 days → the second reminder, as if the sweep that claimed it died before the SMTP server had it (its claim
    // written as takeStep writes it, an hour old): no copy in the mailbox, so the next pass sends it, with the claimed Message-ID.
    const secondId = reminderId!.replace(/\.1@/, '.2@');
    const claimed = (await sg.db.collection('plan_subscriptions').findOne({ _id: sub.id as never }))!;
    await sg.db.collection('plan_subscriptions').updateOne({ _id: sub.id as never, rev: claimed.rev }, {
      $set: { 'dunning.level': 2 }, $push: { 'dunning.notices': { level: 2, to: email, message_id: secondId, status: 'sending', error: null, at: new Date('2026-10-16T11:00:00Z') } } as never, $inc: { rev: 1 },
    });
    await dun('2026-10-16');
    await dun('2026-10-16');
    expect(await mailsTo(email, 2)).toBe(2);
    expect(messageIdsTo(email).sort()).toEqual([reminderId, secondId].sort());
    // 2026-10-27: 21 days → suspension, but the workspace's mail quota for the day is spent: the step waits (no notice, no
    // suspension) until the quota renews; then suspended, its notice counted once; its schedule issues nothing.
    const quota = sg.governance.db.collection('mail_counts');
    await quota.insertOne({ _id: `${owner.workspace}|2026-10-27` as never, workspace: owner.workspace, day: '2026-10-27', sent: mailDailyQuota() });
    await dun('2026-10-27');
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription).toMatchObject({ status: 'active', dunning: { level: 2 } });
    await quota.deleteOne({ _id: `${owner.workspace}|2026-10-27` as never });
    await dun('2026-10-27');
    await dun('2026-10-27');
    expect(await quota.findOne({ _id: `${owner.workspace}|2026-10-27` as never })).toMatchObject({ sent: 1 });
    const suspended = (await out('plans.get_subscription', { id: sub.id }, owner)).subscription;
    expect(suspended).toMatchObject({ status: 'suspended', dunning: { level: 3, stage: 'suspended' } });
    expect(suspended.dunning.notices.map((n: any) => [n.level, n.status])).toEqual([[1, 'sent'], [2, 'sent'], [3, 'sent']]);
    expect(await mailsTo(email, 3)).toBe(3);
    expect((await out('invoices.recurring_run', {}, owner)).issued).toEqual([]);
    const listed = await sg.graphql(`query($q: JSON!) { ${sg.name}Records(query: $q) }`, { q: { source: 'subscriptions', status: 'suspended' } }, owner);
    expect(listed.body.data[`${sg.name}Records`].rows).toEqual([
      expect.objectContaining({ id: sub.id, dunning_stage: 'suspended', dunning_invoice_id: october.invoice_id, dunning_due_date: '2026-10-06' }),
    ]);

    // Paid in full on 2026-11-20: the next pass reactivates it; the schedule resumes at the first period starting on or after today
    // (the November period began while suspended and is not billed).
    await out('payments.register', { customer_id: customer, amount: 11900000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: october.invoice_id }] }, owner);
    await dun();
    await dun();
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription).toMatchObject({ status: 'active', dunning: null });
    // Paid, it left the due-day index (pulled after it closed).
    expect((await dueDay())?.ids ?? []).not.toContain(october.invoice_id);
    const schedule = (await sg.db.collection('recurring_invoices').findOne({ _id: sub.schedule_id as never }))!;
    const today = new Date().toISOString().slice(0, 10);
    expect(schedule.status).toBe('active');
    expect(schedule.next_date >= today && schedule.next_date.endsWith('-01')).toBe(true);
    // Four steps on the ledger, each once, as the system.
    const steps = await sg.governance.ledger.entries.find({ workspace: owner.workspace, tool: 'subscription.dunning' }).lean();
    expect(steps.map((e: any) => e.event.data.step).sort()).toEqual(['reactivated', 'reminder', 'second_reminder', 'suspended']);
    // One message per step, each once.
    expect(await mailsTo(email, 3)).toBe(3);
    expect(new Set(messageIdsTo(email)).size).toBe(3);
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
  });

  it('a suspended subscription can still be cancelled: it ends with the last period billed, what it owes stays owed, and a later payment resumes nothing', async () => {
    const owner = await configuredWorkspace(sg);
    const customer = await party(owner, { name: 'Taller Sur SAS', kind: 'customer' });
    const plan = (await out('plans.create', { name: 'Básico', price: 5000000, interval: 'month', due_days: 5 }, owner)).plan;
    const sub = (await out('plans.subscribe', { plan_id: plan.id, customer_id: customer, start_date: '2026-09-01', post: true }, owner)).subscription;
    const [september] = (await out('invoices.recurring_run', { as_of: '2026-09-01' }, owner)).issued;
    // 50,000.00 + 19 % = 59,500.00, due 2026-09-01 + 5 = 2026-09-06; on 2026-09-27 it is 21 days late: one pass suspends.
    await dun('2026-09-27');
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription).toMatchObject({ status: 'suspended', dunning: { level: 3 } });
    // Before: 409 "this needs it active". The schedule stood at 2026-10-01 (October began while suspended, never billed):
    // the subscription ends with September, its last period billed.
    const cancelled = (await out('plans.cancel', { subscription_id: sub.id }, owner)).subscription;
    expect(cancelled).toMatchObject({ status: 'cancelled', cancel_at: '2026-10-01', dunning: { invoice_id: september.invoice_id, level: 3 } });
    expect(await sg.db.collection('recurring_invoices').findOne({ _id: sub.schedule_id as never })).toMatchObject({ status: 'ended', end_date: '2026-09-30' });
    expect(await sg.call('plans.cancel', { subscription_id: sub.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect((await out('plans.get', { id: plan.id }, owner)).plan.subscribers).toBe(0);
    // What it owes stays owed; paid, the dunning ends and nothing resumes or is billed.
    expect((await out('invoices.get', { id: september.invoice_id }, owner)).invoice).toMatchObject({ status: 'posted', balance: 5950000 });
    await out('payments.register', { customer_id: customer, amount: 5950000, currency: 'COP', date: '2026-11-20', invoices: [{ invoice_id: september.invoice_id }] }, owner);
    await dun();
    expect((await out('plans.get_subscription', { id: sub.id }, owner)).subscription).toMatchObject({ status: 'cancelled', dunning: null });
    expect((await out('invoices.recurring_run', {}, owner)).issued).toEqual([]);
    expect(await sg.db.collection('recurring_invoices').findOne({ _id: sub.schedule_id as never })).toMatchObject({ status: 'ended' });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
  });
});

