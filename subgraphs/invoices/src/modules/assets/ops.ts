import { CuadraError, defineOperation, type LegacyMarkers, type OperationContext, type OperationKind, type ToolContext } from '@cuadra/shared';
import { findAccount } from '../../accounting/chart.ts';
import { journalEntries, postEntry, type BooksContext, type JournalLine } from '../../books/index.ts';
import { invoicePostOperation, postDocument, RECEIVABLES } from '../invoices/ops.ts';
import { postOpenItem } from '../../open-items/index.ts';
import { issuePricedInvoiceOnce } from '../invoices/issue.ts';
import { ASSET_CLASSES, DISPOSAL_ACCOUNTS } from './classes.ts';
import { fiscalMonth, monthEnd, nextMonth, niifMonth } from './depreciation.ts';
import { assets, carryingAmounts, fullyDepreciated, type AssetDisposal, type AssetDoc, type AssetMonth, type AssetStatus } from './model.ts';

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

/** The asset an acquisition or disposal works on, while it is still at that step of its life (null after: the marker goes). */
function assetIn(status: 'recording' | 'disposing') {
  return async (ctx: OperationContext, id: string): Promise<AssetDoc | null> =>
    assets(ctx.db).findOne({ _id: id, workspace: ctx.workspace, status }).lean();
}

/** Moves an asset on from the intent it carries, by one conditional update; the asset as it stands when another finisher moved it first. */
async function leaveIntent(ctx: OperationContext, a: AssetDoc, from: 'recording' | 'disposing', to: AssetStatus): Promise<AssetDoc> {
  const after = await assets(ctx.db).findOneAndUpdate({ _id: a._id, status: from }, { $set: { status: to, updated_at: ctx.now }, $inc: { rev: 1 } }, { returnDocument: 'after' }).lean();
  return after ?? (await assets(ctx.db).findById(a._id).lean())!;
}

/**
 * An asset recorded by hand, as a durable operation (shared/src/operations.ts): begun before the
 * asset is written as `recording`; its steps, each idempotent — the acquisition entry posted under
 * the id the asset carries (debit its class's cost account, credit the account it was paid or owed
 * from), then `recording` → `active` by one conditional update. A process that dies in between
 * leaves the marker, and the maintenance sweep runs the steps again after the lease: the entry is
 * found by its id, posted once. Assets an older version left `recording` (their intent kept on the
 * asset alone, under a lease of their own) are adopted: a marker is written for each.
 */
export const acquisitionOperation: OperationKind<AssetDoc> = defineOperation<AssetDoc>({
  kind: 'asset_acquisition',
  legacyMarkers: [intentsKeptOnAssets('recording')],
  load: assetIn('recording'),
  steps: [
    async function postAcquisitionEntry(ctx, a) {
      if (a.origin.kind !== 'manual') return a;
      const cls = ASSET_CLASSES[a.class];
      const credit = await findAccount(ctx.db, ctx.workspace, a.origin.credit_account);
      const lines: JournalLine[] = [
        { account: cls.cost, name: cls.name, debit: a.cost, credit: 0, party_id: null },
        { account: a.origin.credit_account, name: credit?.name ?? a.origin.credit_account, debit: 0, credit: a.cost, party_id: null },
      ];
      await postEntry(ctx, { kind: ASSET_SOURCES.acquisition, id: a._id }, lines, { id: a.origin.entry_id, date: a.acquisition_date, currency: a.currency, memo: `Adquisición de activo fijo — ${a.name}` });
      return a;
    },
    async function markActive(ctx, a) {
      return leaveIntent(ctx, a, 'recording', 'active');
    },
  ],
});

/**
 * The intents an older version kept on the asset itself (`recording`, `disposing`), finished by a
 * sweep of its own with the asset's `updated_at` for a lease: a marker is written for each (leased
 * from that time), so the runner finishes them. Nothing on the asset is cleared — its status is its
 * state, not a lease — so an asset at that step always has a marker, whoever wrote it.
 */
function intentsKeptOnAssets(status: 'recording' | 'disposing'): LegacyMarkers {
  return { collection: 'fixed_assets', filter: { status }, record: (m) => m._id, leasedAt: (m) => m.updated_at as Date, release: async () => {}, everyPass: true };
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

/** A disposal's sale invoice another call is posting: the disposal waits for it (the invoices' sweep finishes a dead post). */
export class SaleInvoiceHeld extends CuadraError {
  constructor(invoiceId: string) {
    super('conflict', `The sale invoice ${invoiceId} is being posted by another call; the disposal is finished once it is posted.`);
  }
}

/**
 * A sale or retirement, as a durable operation: begun before the intent (`disposing`, with the
 * figures and, for a sale to a customer, its priced invoice) is written on the asset by one
 * conditional update; its steps, each idempotent and in this order: the invoice issued and posted
 * (once: its id) — by `postDocument` in a call (it signs), by the open-item post with the regime the
 * intent stored from the sweep —, the disposal entry (once: its id), then sold or retired. An invoice
 * whose post another call holds stops the steps ({@link SaleInvoiceHeld}): the marker stays for the
 * next pass. Disposals an older version left `disposing` are adopted, as acquisitions are.
 */
export const disposalOperation: OperationKind<AssetDoc> = defineOperation<AssetDoc>({
  kind: 'asset_disposal',
  legacyMarkers: [intentsKeptOnAssets('disposing')],
  load: assetIn('disposing'),
  steps: [
    async function issueSaleInvoice(ctx, a) {
      const d = a.disposal!;
      const sale = d.invoice;
      if (!sale) return a;
      const call = (ctx as Partial<ToolContext>).principal ? ctx as ToolContext : null;
      const posted = await issuePricedInvoiceOnce(ctx, {
        id: sale.id, customer_id: d.party_id!, customer: sale.customer, currency: a.currency, issue_date: d.date, due_date: d.due_date ?? d.date, lines: sale.lines,
        withholdings: [], notes: `Venta de activo fijo — ${a.name}`, source: { asset_id: a._id },
      }, (id) => (call ? postDocument(call, id) : postOpenItem(ctx, RECEIVABLES, invoicePostOperation, id, sale.regime)));
      if (!posted) throw new SaleInvoiceHeld(sale.id);
      return a;
    },
    async function postDisposalEntry(ctx, a) {
      const d = a.disposal!;
      await postEntry(ctx, { kind: ASSET_SOURCES.disposal, id: a._id }, disposalLines(a, d), {
        id: d.entry_id, date: d.date, currency: a.currency, memo: `${d.proceeds > 0 ? 'Venta' : 'Retiro'} de activo fijo — ${a.name}`,
      });
      return a;
    },
    async function markDisposed(ctx, a) {
      return leaveIntent(ctx, a, 'disposing', a.disposal!.proceeds > 0 ? 'sold' : 'retired');
    },
  ],
});

/** Refuses a change to an asset that is not active (or is still being recorded). */
export function assertActive(a: AssetDoc): void {
  if (a.status !== 'active') throw new CuadraError('conflict', `Fixed asset ${a._id} is ${a.status}; this needs it active.`);
}
