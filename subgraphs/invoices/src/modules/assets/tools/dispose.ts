import { CuadraError, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { postableAccount } from '../../../accounting/chart.ts';
import { assertPeriodOpen } from '../../../books/index.ts';
import { assertNotAfterToday } from '../../../lib/document-dates.ts';
import { ASSET_VIEW_SCHEMA, assets, assetView, findAsset } from '../model.ts';
import { completeDisposal, depreciateThrough, disposalOf, MAX_MONTHS_PER_CALL } from '../ops.ts';

/** `YYYY-MM` one month earlier. */
function previousMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/**
 * Sells or retires an asset (NIIF para pymes §17.27–17.30): its depreciation is brought up to the
 * month before the disposal (whole months), then one entry takes its cost and accumulated
 * depreciation out of the books, brings the proceeds in, and books the difference as a gain (4245)
 * or a loss (5310). The fiscal result (proceeds − cost + fiscal depreciation) is shown beside it.
 */
export const dispose = defineTool({
  name: 'assets.dispose',
  description: 'Sell (proceeds > 0, received into proceeds_account, e.g. 111005 bank or 130505 receivable with party_id) or retire (proceeds 0) a fixed asset on a date. Depreciation is first posted through the month before; then one entry removes cost and accumulated depreciation and books the gain (4245) or loss (5310). Answers both books\' results.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['id', 'date', 'proceeds'],
    properties: {
      id: ID_SCHEMA, date: { type: 'string', format: 'date' },
      proceeds: { type: 'integer', minimum: 0, maximum: 1e15, description: 'What the sale brings in, in cents, before VAT (0 for a retirement).' },
      proceeds_account: { type: 'string', pattern: '^[1-7][0-9]{3,9}$', description: 'Where the proceeds are debited (required when proceeds > 0).' },
      party_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$', description: 'The buyer, carried on the proceeds line.' },
      reason: { type: 'string', maxLength: 500 },
    },
  },
  output: recordOutput('asset', ASSET_VIEW_SCHEMA),
  async handler(input, ctx) {
    let a = await findAsset(ctx, input.id);
    if (a.status === 'disposing') return { asset: assetView(await completeDisposal(ctx, a)) };
    if (a.status !== 'active') throw new CuadraError('conflict', `Fixed asset ${a._id} is ${a.status}; only an active asset is sold or retired.`);
    assertNotAfterToday(ctx, input.date, '/date');
    if (input.date < a.acquisition_date) throw new CuadraError('invalid_input', `The asset was acquired on ${a.acquisition_date}; it cannot leave before.`, { field: '/date' });
    if (input.proceeds > 0 && !input.proceeds_account) throw new CuadraError('invalid_input', 'A sale names the account its proceeds are received into.', { field: '/proceeds_account' });
    if (input.proceeds_account) await postableAccount(ctx.db, ctx.workspace, input.proceeds_account, '/proceeds_account');
    await assertPeriodOpen(ctx.db, ctx.workspace, input.date);
    const month = input.date.slice(0, 7);
    if (a.schedule.some((m) => m.month >= month)) {
      throw new CuadraError('conflict', `Fixed asset ${a._id} is already depreciated for ${month} or later; it cannot leave the books on ${input.date}.`);
    }
    ({ asset: a } = await depreciateThrough(ctx, a, previousMonth(month), { left: MAX_MONTHS_PER_CALL }));
    const disposal = disposalOf(a, { date: input.date, proceeds: input.proceeds, proceeds_account: input.proceeds > 0 ? input.proceeds_account! : null, party_id: input.party_id ?? null, reason: input.reason ?? null });
    // The intent, with its figures, on the asset as it stood (rev): a depreciation run meanwhile makes this fail and nothing is half done.
    const disposing = await assets(ctx.db).findOneAndUpdate(
      { _id: a._id, status: 'active', rev: a.rev },
      { $set: { status: 'disposing', disposal, updated_at: ctx.now }, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!disposing) throw new CuadraError('conflict', `Fixed asset ${a._id} changed while it was being disposed of; nothing was done. Try again.`);
    return { asset: assetView(await completeDisposal(ctx, disposing)) };
  },
});
