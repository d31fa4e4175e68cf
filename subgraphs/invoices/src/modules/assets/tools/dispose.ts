import { beginOperation, CuadraError, defineTool, dropOperation, ID_SCHEMA, recordOutput, runOperation, type ToolContext } from '@cuadra/shared';
import { postableAccount } from '../../../accounting/chart.ts';
import { assertPeriodOpen } from '../../../books/index.ts';
import { assertNotAfterToday } from '../../../lib/document-dates.ts';
import { buyerFromCrm } from '../../items/document-lines.ts';
import { requireSettings } from '../../invoices/ops.ts';
import { taxRegimeOf, VAT_RATE_INPUT, vatRateFor } from '../../../lib/tax-regime.ts';
import { priceInvoiceLines } from '../../invoices/issue.ts';
import { DISPOSAL_ACCOUNTS } from '../classes.ts';
import { ASSET_VIEW_SCHEMA, assets, assetView, findAsset, type AssetDoc, type SaleInvoice } from '../model.ts';
import { depreciateThrough, disposalOf, disposalOperation, MAX_MONTHS_PER_CALL, SaleInvoiceHeld, saleInvoiceId } from '../ops.ts';

/** `YYYY-MM` one month earlier. */
function previousMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/**
 * The VAT of a fixed asset's sale. Colombia: none by default — Estatuto Tributario art. 420
 * parágrafo 1 (as written by Ley 1819 de 2016 art. 173): "El impuesto no se aplicará a las ventas
 * de activos fijos, salvo que se trate de las excepciones previstas para los bienes inmuebles de uso
 * residencial, automotores y demás activos fijos que se vendan habitualmente a nombre y por cuenta
 * de terceros y para los aerodinos"; an exception (an aircraft) is invoiced at the rate the caller
 * gives. Elsewhere the sale of a business's capital goods is a taxable supply (Directive
 * 2006/112/EC art. 2(1)(a), 14): the caller gives the country's rate.
 */
function saleVatRate(ctx: Pick<ToolContext, 'principal'>, given: number | undefined): number {
  if (taxRegimeOf(ctx.principal) === 'dian') return vatRateFor(ctx.principal, given ?? 0, '/tax_rate_ppm');
  if (given === undefined) throw new CuadraError('invalid_input', 'The sale of a fixed asset is a taxable supply here: give its VAT rate.', { field: '/tax_rate_ppm' });
  return given;
}

/**
 * The invoice of a sale to `party_id`, priced now (so a retry or the sweep issues exactly this one):
 * one line, the price credited to 4245 (the disposal entry nets it against the carrying amount).
 * Refused before anything is written when the buyer is no customer, or a Colombian workspace has
 * no e-invoicing set-up to number it.
 */
async function saleInvoice(ctx: ToolContext, a: AssetDoc, partyId: string, price: number, rate: number | undefined): Promise<SaleInvoice> {
  const regime = taxRegimeOf(ctx.principal);
  const taxRate = saleVatRate(ctx, rate);
  if (regime === 'dian') await requireSettings(ctx.db, ctx.workspace);
  const customer = await buyerFromCrm(ctx, partyId, { field: '/party_id' });
  const lines = await priceInvoiceLines(ctx, a.currency, [{
    description: `Venta de activo fijo: ${a.name}${taxRate === 0 && regime === 'dian' ? ' (no causa IVA: ET art. 420 par. 1)' : ''}`,
    quantity: 1, unit_price: price, tax_rate_ppm: taxRate, account: DISPOSAL_ACCOUNTS.gain.code,
  }]);
  return { id: saleInvoiceId(a._id), customer, lines, regime };
}

/**
 * Runs a disposal's steps ({@link disposalOperation}) in a call: the asset as they leave it, or as
 * stored (still `disposing`) when its sale invoice is being posted by another call.
 */
async function finishDisposal(ctx: ToolContext, a: AssetDoc): Promise<AssetDoc> {
  try {
    return await runOperation(ctx, disposalOperation, a, a._id);
  } catch (err) {
    if (err instanceof SaleInvoiceHeld) return a;
    throw err;
  }
}

/**
 * Sells or retires an asset (NIIF para pymes §17.27–17.30): its depreciation is brought up to the
 * month before the disposal (whole months), then one entry takes its cost and accumulated
 * depreciation out of the books, brings the proceeds in, and books the difference as a gain (4245)
 * or a loss (5310). The fiscal result (proceeds − cost + fiscal depreciation) is shown beside it.
 * A sale to a customer (`party_id` without `proceeds_account`) is invoiced first — an ordinary
 * customer invoice, posted once, the receivable in the collections lane — and the disposal entry
 * books only the net (see ops.ts disposalLines).
 */
export const dispose = defineTool({
  name: 'assets.dispose',
  description: 'Sell (proceeds > 0) or retire (proceeds 0) a fixed asset on a date. A sale to a customer (party_id) is invoiced to it once: a posted customer invoice for the price, '
    + 'without IVA in Colombia (ET art. 420 par. 1: the sale of fixed assets is not taxed; give tax_rate_ppm for an exception such as an aircraft), at the VAT rate given elsewhere; its price is credited to 4245 and netted by the disposal. '
    + 'A sale whose proceeds were received outside an invoice names proceeds_account (e.g. 111005 bank) instead. Depreciation is first posted through the month before; then one entry removes cost and accumulated depreciation and books the gain (4245) or loss (5310). Answers both books\' results and the deferred-tax basis the sale reverses.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'date', 'proceeds'],
    properties: {
      id: ID_SCHEMA, date: { type: 'string', format: 'date' },
      proceeds: { type: 'integer', minimum: 0, maximum: 1e15, description: 'What the sale brings in, in cents, before VAT (0 for a retirement).' },
      proceeds_account: { type: 'string', pattern: '^[1-7][0-9]{3,9}$', description: 'A sale not invoiced here: where its proceeds are debited. Without it a sale needs party_id and is invoiced.' },
      party_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$', description: 'The buyer (a crm customer): the sale is invoiced to it, unless proceeds_account says the proceeds came in otherwise (then it is carried on the proceeds line).' },
      tax_rate_ppm: { ...VAT_RATE_INPUT, description: `${VAT_RATE_INPUT.description} An invoiced sale's VAT. Default in Colombia 0 (ET art. 420 par. 1); required elsewhere.` },
      due_date: { type: 'string', format: 'date', description: 'When the invoiced price is due (default the sale date).' },
      reason: { type: 'string', maxLength: 500 },
    },
  },
  output: recordOutput('asset', ASSET_VIEW_SCHEMA),
  async handler(input, ctx) {
    let a = await findAsset(ctx, input.id);
    if (a.status === 'disposing') {
      // A retry of a disposal whose call died: its steps again (each idempotent), under the marker the intent had.
      await beginOperation(ctx, disposalOperation, a._id);
      return { asset: assetView(await finishDisposal(ctx, a)) };
    }
    if (a.status !== 'active') throw new CuadraError('conflict', `Fixed asset ${a._id} is ${a.status}; only an active asset is sold or retired.`);
    assertNotAfterToday(ctx, input.date, '/date');
    if (input.date < a.acquisition_date) throw new CuadraError('invalid_input', `The asset was acquired on ${a.acquisition_date}; it cannot leave before.`, { field: '/date' });
    const invoiced = input.proceeds > 0 && !input.proceeds_account;
    if (invoiced && !input.party_id) throw new CuadraError('invalid_input', 'A sale is invoiced to its buyer (party_id), or names the account its proceeds were received into (proceeds_account).', { field: '/party_id' });
    if (!invoiced && (input.tax_rate_ppm !== undefined || input.due_date !== undefined)) {
      throw new CuadraError('invalid_input', 'Only a sale invoiced to its buyer carries VAT and a due date.', { field: input.tax_rate_ppm !== undefined ? '/tax_rate_ppm' : '/due_date' });
    }
    if (input.due_date !== undefined && input.due_date < input.date) throw new CuadraError('invalid_input', 'The price cannot be due before the sale.', { field: '/due_date' });
    if (input.proceeds_account) await postableAccount(ctx.db, ctx.workspace, input.proceeds_account, '/proceeds_account');
    await assertPeriodOpen(ctx.db, ctx.workspace, input.date);
    const month = input.date.slice(0, 7);
    if (a.schedule.some((m) => m.month >= month)) {
      throw new CuadraError('conflict', `Fixed asset ${a._id} is already depreciated for ${month} or later; it cannot leave the books on ${input.date}.`);
    }
    ({ asset: a } = await depreciateThrough(ctx, a, previousMonth(month), { left: MAX_MONTHS_PER_CALL }));
    const invoice = invoiced ? await saleInvoice(ctx, a, input.party_id!, input.proceeds, input.tax_rate_ppm) : null;
    const disposal = disposalOf(a, {
      date: input.date, proceeds: input.proceeds, proceeds_account: input.proceeds > 0 ? input.proceeds_account ?? null : null, party_id: input.party_id ?? null, reason: input.reason ?? null,
      invoice, due_date: input.due_date ?? null,
    });
    // The marker first, then the intent, with its figures, on the asset as it stood (rev): a
    // depreciation run meanwhile makes this fail and nothing is half done.
    await beginOperation(ctx, disposalOperation, a._id);
    const disposing = await assets(ctx.db).findOneAndUpdate(
      { _id: a._id, status: 'active', rev: a.rev },
      { $set: { status: 'disposing', disposal, updated_at: ctx.now }, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!disposing) {
      // The marker goes unless another call's disposal won (it is that call's marker too).
      if ((await assets(ctx.db).findById(a._id, { status: 1 }).lean())?.status !== 'disposing') await dropOperation(ctx, disposalOperation, a._id);
      throw new CuadraError('conflict', `Fixed asset ${a._id} changed while it was being disposed of; nothing was done. Try again.`);
    }
    return { asset: assetView(await finishDisposal(ctx, disposing)) };
  },
});
