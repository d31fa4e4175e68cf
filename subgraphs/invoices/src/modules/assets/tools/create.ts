import { beginOperation, CuadraError, defineTool, newId, recordOutput, createPositioned, repeatableId, runOperation, insertOrStored } from '@cuadra/shared';
import { postableAccount } from '../../../accounting/chart.ts';
import { assertPeriodOpen } from '../../../books/index.ts';
import { assertNotAfterToday } from '../../../lib/document-dates.ts';
import { workspaceCurrency } from '../../../lib/settings.ts';
import { CLASS_FIELD, TERMS_FIELDS, termsOf } from '../fields.ts';
import { firstDepreciationMonth } from '../depreciation.ts';
import { ASSET_VIEW_SCHEMA, assets, assetView, type AssetDoc } from '../model.ts';
import { acquisitionEntryId, acquisitionOperation } from '../ops.ts';

/**
 * Records an asset bought outside the bills (or brought in by hand), as the durable operation
 * {@link acquisitionOperation}: its marker, the asset (`recording`), then the steps — its acquisition
 * entry (debit the class's cost account, credit `credit_account`), then active.
 */
export const create = defineTool({
  name: 'assets.create',
  description: 'Record a fixed asset by hand: name, class, cost in cents, acquisition date, useful life, residual value and NIIF method; its acquisition entry debits the class\'s PUC account (1516, 1520, 1524, 1528, 1540) and credits credit_account (e.g. 111005 bank, 220505 suppliers). An asset bought on a bill is recorded with assets.capitalize instead (the bill already posted it). Both books (NIIF and fiscal, ET art. 137) start from here.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['name', 'class', 'cost', 'acquisition_date', 'useful_life_months', 'credit_account'],
    properties: {
      ...TERMS_FIELDS, class: CLASS_FIELD,
      cost: { type: 'integer', minimum: 1, maximum: 1e15, description: 'Cost in cents (NIIF para pymes §17.10: price, non-recoverable taxes, costs to bring it into use).' },
      acquisition_date: { type: 'string', format: 'date' },
      credit_account: { type: 'string', pattern: '^[1-7][0-9]{3,9}$', description: 'The account the cost is credited to: how it was paid or owed.' },
    },
  },
  output: recordOutput('asset', ASSET_VIEW_SCHEMA),
  async handler(input, ctx) {
    assertNotAfterToday(ctx, input.acquisition_date, '/acquisition_date');
    const inService = input.in_service_date ?? input.acquisition_date;
    if (inService < input.acquisition_date) throw new CuadraError('invalid_input', 'An asset cannot be in service before it was acquired.', { field: '/in_service_date' });
    if (input.credit_account.startsWith('15')) throw new CuadraError('invalid_input', 'The acquisition is credited to how it was paid or owed, not to property, plant and equipment.', { field: '/credit_account' });
    await postableAccount(ctx.db, ctx.workspace, input.credit_account, '/credit_account');
    await assertPeriodOpen(ctx.db, ctx.workspace, input.acquisition_date);
    // The same id in every attempt of a call that can run again (repeatableId, runs.ts): a dead attempt's asset the store applies late is this one.
    const id = repeatableId('ast') ?? newId('ast');
    const doc: AssetDoc = {
      _id: id, workspace: ctx.workspace, name: input.name, class: input.class, status: 'recording', currency: await workspaceCurrency(ctx.db, ctx.workspace),
      cost: input.cost, ...termsOf(input, input.cost), acquisition_date: input.acquisition_date, in_service_date: inService,
      next_month: firstDepreciationMonth(inService), months: 0, niif_accumulated: 0, fiscal_accumulated: 0, usage: {}, units_to_date: 0, schedule: [],
      origin: { kind: 'manual', credit_account: input.credit_account, entry_id: acquisitionEntryId(id) }, disposal: null,
      search_lc: `${input.name} ${input.class}`.toLowerCase(), rev: 0, created_at: ctx.now, updated_at: ctx.now,
    };
    await beginOperation(ctx, acquisitionOperation, id);
    // Its id taken: the asset an earlier attempt of this call wrote (its insert applied late), finished here — not recorded twice.
    const recorded = await insertOrStored(() => createPositioned(assets(ctx.db), doc), assets(ctx.db), doc, ctx.workspace);
    return { asset: assetView(await runOperation(ctx, acquisitionOperation, recorded, id)) };
  },
});
