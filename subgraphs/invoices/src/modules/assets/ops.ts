import { CuadraError, type ToolContext } from '@cuadra/shared';
import { findAccount } from '../../accounting/chart.ts';
import { journalEntries, postEntry, type BooksContext, type JournalLine } from '../../books/index.ts';
import { invoicePostOperation, RECEIVABLES } from '../../lib/invoice-ops.ts';
import { postOpenItem } from '../../open-items/index.ts';
import { issuePricedInvoiceOnce } from '../invoices/issue.ts';
import { ASSET_CLASSES, DISPOSAL_ACCOUNTS } from './classes.ts';
import { fiscalMonth, monthEnd, nextMonth, niifMonth } from './depreciation.ts';
import { assets, carryingAmounts, fullyDepreciated, type AssetDisposal, type AssetDoc, type AssetMonth } from './model.ts';

/** The journal source kinds this module posts (declared in its manifest). */
export const ASSET_SOURCES = { acquisition: 'asset_acquisition', depreciation: 'depreciation', disposal: 'asset_disposal' } as const;

/** The id of an asset's depreciation entry for a month: one per asset and month, whoever runs it and however often. */
export function depreciationEntryId(assetId: string, month: string): string {
  return `je_dep_${assetId}_${month.replace('-', '')}`;
}

/** The id of an asset's acquisition entry (assets recorded by hand). */
export function acquisitionEntryId(assetId: string): string {
  return `je_acq_${assetId}`;
}

/** The id of an asset's sale or retirement entry. */
export function disposalEntryId(assetId: string): string {
  return `je_disp_${assetId}`;
}

type Ctx = BooksContext & Pick<ToolContext, 'workspace'>;

/**
 * Posts an asset recorded by hand (debit its class's cost account, credit the account it was paid
 * or owed from) and makes it active. The asset is written first as `recording`, so a process that
 * dies in between leaves the intent, which this same call (from the sweep) finishes: the entry's id
 * comes from the asset, so it is posted once.
 */
export async function completeAcquisition(ctx: Ctx, a: AssetDoc): Promise<AssetDoc> {
  if (a.status !== 'recording' || a.origin.kind !== 'manual') return a;
  const cls = ASSET_CLASSES[a.class];
  const credit = await findAccount(ctx.db, ctx.workspace, a.origin.credit_account);
  const lines: JournalLine[] = [
    { account: cls.cost, name: cls.name, debit: a.cost, credit: 0, party_id: null },
    { account: a.origin.credit_account, name: credit?.name ?? a.origin.credit_account, debit: 0, credit: a.cost, party_id: null },
  ];
  await postEntry(ctx, { kind: ASSET_SOURCES.acquisition, id: a._id }, lines, { id: a.origin.entry_id, date: a.acquisition_date, currency: a.currency, memo: `Adquisición de activo fijo — ${a.name}` });
  const after = await assets(ctx.db).findOneAndUpdate({ _id: a._id, status: 'recording' }, { $set: { status: 'active', updated_at: ctx.now }, $inc: { rev: 1 } }, { returnDocument: 'after' }).lean();
  return after ?? (await assets(ctx.db).findById(a._id).lean())!;
}

/**
 * Depreciates one month of an asset in both books, exactly once. The NIIF amount is posted as
 * the entry `je_dep_<asset>_<YYYYMM>` (debit the class's 5160 sub-account, credit its 1592
 * sub-account); then one conditional update on the month the asset stood at moves both books on
 * and records the month. A process that dies between the two leaves the entry; the next run reads
 * the amount back from it (never recomputes a different one) and moves the asset on. Two runs at
 * once: the entry is written once (its id), the update applies once (its condition).
 */
async function depreciateMonth(ctx: Ctx, a: AssetDoc): Promise<AssetDoc> {
  const month = a.next_month;
  const k = a.months + 1;
  const unitsThisMonth = a.method === 'units_of_production' ? a.usage[month] ?? 0 : 0;
  const entryId = depreciationEntryId(a._id, month);
  const posted = await journalEntries(ctx.db).findOne({ _id: entryId, workspace: ctx.workspace }, { lines: 1 }).lean();
  const niif = posted ? posted.lines.reduce((s, l) => s + l.debit, 0) : niifMonth(a, k, a.niif_accumulated, a.units_to_date + unitsThisMonth);
  const fiscal = fiscalMonth(a, k, a.fiscal_accumulated);
  if (niif > 0) {
    const cls = ASSET_CLASSES[a.class];
    await postEntry(ctx, { kind: ASSET_SOURCES.depreciation, id: a._id }, [
      { account: cls.expense, name: `Depreciación — ${cls.name}`, debit: niif, credit: 0, party_id: null },
      { account: cls.accumulated, name: `Depreciación acumulada — ${cls.name}`, debit: 0, credit: niif, party_id: null },
    ], { id: entryId, date: monthEnd(month), currency: a.currency, memo: `Depreciación ${month} — ${a.name}` });
  }
  const row: AssetMonth = {
    month, niif, fiscal, niif_accumulated: a.niif_accumulated + niif, fiscal_accumulated: a.fiscal_accumulated + fiscal, entry_id: niif > 0 ? entryId : null,
  };
  const after = await assets(ctx.db).findOneAndUpdate(
    { _id: a._id, status: 'active', next_month: month, months: a.months },
    { $set: { next_month: nextMonth(month), updated_at: ctx.now }, $inc: { months: 1, niif_accumulated: niif, fiscal_accumulated: fiscal, units_to_date: unitsThisMonth, rev: 1 }, $push: { schedule: row } },
    { returnDocument: 'after' },
  ).lean();
  return after ?? (await assets(ctx.db).findById(a._id).lean())!;
}

/** Most asset-months one call depreciates, so one call stays bounded; the rest is left for the next call. */
export const MAX_MONTHS_PER_CALL = 600;

/**
 * Depreciates an asset month by month from where it stands through `month` (inclusive), stopping
 * when both books have taken the whole base or `budget.left` runs out.
 * @returns the asset after, and the months it depreciated
 */
export async function depreciateThrough(ctx: Ctx, asset: AssetDoc, month: string, budget: { left: number }): Promise<{ asset: AssetDoc; months: AssetMonth[] }> {
  let a = asset;
  const months: AssetMonth[] = [];
  while (a.status === 'active' && a.next_month <= month && !fullyDepreciated(a) && budget.left > 0) {
    const before = a.months;
    a = await depreciateMonth(ctx, a);
    if (a.months > before) {
      months.push(a.schedule[a.schedule.length - 1]);
      budget.left--;
    }
  }
  return { asset: a, months };
}

/**
 * The lines of a disposal: the asset's cost and depreciation leave the books; the proceeds come in;
 * the difference is a gain (4245) or a loss (5310).
 *
 * A sale invoiced to a customer has already credited its price to 4245 (the invoice's entry: Dr
 * 130505 price + VAT, Cr 4245 price, Cr 2408 VAT). Income is booked once, on the net: this entry
 * takes back from 4245 the carrying amount up to the price, and books what the price falls short
 * of it as a loss — Dr 1592 accumulated, Dr 4245 min(price, net), Dr 5310 max(0, net − price),
 * Cr 15xx cost — so 4245 ends at the gain (price − net) or at 0 beside the loss in 5310.
 */
function disposalLines(a: AssetDoc, d: AssetDisposal): JournalLine[] {
  const cls = ASSET_CLASSES[a.class];
  const lines: JournalLine[] = [];
  if (a.niif_accumulated > 0) lines.push({ account: cls.accumulated, name: `Depreciación acumulada — ${cls.name}`, debit: a.niif_accumulated, credit: 0, party_id: null });
  if (d.invoice) {
    const net = d.proceeds - d.gain;
    const fromPrice = Math.min(d.proceeds, net);
    if (fromPrice > 0) lines.push({ account: DISPOSAL_ACCOUNTS.gain.code, name: `${DISPOSAL_ACCOUNTS.gain.name} — costo neto del activo vendido`, debit: fromPrice, credit: 0, party_id: null });
    if (d.gain < 0) lines.push({ account: DISPOSAL_ACCOUNTS.loss.code, name: DISPOSAL_ACCOUNTS.loss.name, debit: -d.gain, credit: 0, party_id: null });
    lines.push({ account: cls.cost, name: cls.name, debit: 0, credit: a.cost, party_id: null });
    return lines;
  }
  if (d.proceeds > 0) lines.push({ account: d.proceeds_account!, name: 'Producto de la venta', debit: d.proceeds, credit: 0, party_id: d.party_id });
  lines.push({ account: cls.cost, name: cls.name, debit: 0, credit: a.cost, party_id: null });
  if (d.gain > 0) lines.push({ account: DISPOSAL_ACCOUNTS.gain.code, name: DISPOSAL_ACCOUNTS.gain.name, debit: 0, credit: d.gain, party_id: null });
  if (d.gain < 0) lines.push({ account: DISPOSAL_ACCOUNTS.loss.code, name: DISPOSAL_ACCOUNTS.loss.name, debit: -d.gain, credit: 0, party_id: null });
  return lines;
}

/** The disposal of an asset as it stands (its depreciation to date). */
export function disposalOf(a: AssetDoc, input: Omit<AssetDisposal, 'entry_id' | 'gain' | 'fiscal_gain'>): AssetDisposal {
  const { niif_net, fiscal_net } = carryingAmounts(a);
  return { ...input, entry_id: disposalEntryId(a._id), gain: input.proceeds - niif_net, fiscal_gain: input.proceeds - fiscal_net };
}

/** The invoice of an asset's sale to a customer: one per asset. */
export function saleInvoiceId(assetId: string): string {
  return `inv_${assetId.replace(/^ast_/, 'a')}_sale`;
}

/**
 * Posts a disposal an asset already carries (`disposing`) and closes it as sold or retired. The
 * intent (`disposing`, with the figures and, for a sale to a customer, its priced invoice) is
 * written by one conditional update before anything else, so a call that dies on the way is
 * finished by the next call or the sweep, with the same figures, in the same order: the invoice
 * (issued and posted once: its id), then the disposal entry (once: its id), then sold.
 * `post` posts the invoice: `postDocument` in a call (it signs); the sweep's default is the
 * open-item post with the regime the intent stored. An invoice whose post another call holds is
 * left to it (the invoices' sweep finishes a dead one): the asset stays `disposing` for the next pass.
 */
export async function completeDisposal(ctx: Ctx, a: AssetDoc, post?: (id: string) => Promise<unknown>): Promise<AssetDoc> {
  if (a.status !== 'disposing' || !a.disposal) return a;
  const d = a.disposal;
  const sale = d.invoice;
  if (sale) {
    const posted = await issuePricedInvoiceOnce(ctx, {
      id: sale.id, customer_id: d.party_id!, customer: sale.customer, currency: a.currency, issue_date: d.date, due_date: d.due_date ?? d.date, lines: sale.lines,
      withholdings: [], notes: `Venta de activo fijo — ${a.name}`, source: { asset_id: a._id },
    }, post ?? ((id) => postOpenItem(ctx, RECEIVABLES, invoicePostOperation, id, sale.regime)));
    if (!posted) return a;
  }
  await postEntry(ctx, { kind: ASSET_SOURCES.disposal, id: a._id }, disposalLines(a, d), {
    id: d.entry_id, date: d.date, currency: a.currency, memo: `${d.proceeds > 0 ? 'Venta' : 'Retiro'} de activo fijo — ${a.name}`,
  });
  const after = await assets(ctx.db).findOneAndUpdate(
    { _id: a._id, status: 'disposing' },
    { $set: { status: d.proceeds > 0 ? 'sold' : 'retired', updated_at: ctx.now }, $inc: { rev: 1 } },
    { returnDocument: 'after' },
  ).lean();
  return after ?? (await assets(ctx.db).findById(a._id).lean())!;
}

/** Refuses a change to an asset that is not active (or is still being recorded). */
export function assertActive(a: AssetDoc): void {
  if (a.status !== 'active') throw new CuadraError('conflict', `Fixed asset ${a._id} is ${a.status}; this needs it active.`);
}
