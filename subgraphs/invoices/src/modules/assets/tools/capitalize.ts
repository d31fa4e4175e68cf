import { CuadraError, createPositioned, defineTool, ID_SCHEMA, recordOutput } from '@cuadra/shared';
import { bills } from '../../bills/model.ts';
import { classOfAccount } from '../classes.ts';
import { firstDepreciationMonth } from '../depreciation.ts';
import { TERMS_FIELDS, termsOf } from '../fields.ts';
import { ASSET_VIEW_SCHEMA, assets, assetView, type AssetDoc } from '../model.ts';

/** The asset a bill line becomes: one per line, whoever asks and however often. */
export function assetIdOfBillLine(billId: string, line: number): string {
  return `ast_${billId.replace(/^bil_/, 'b')}_${line}`;
}

/**
 * Registers a posted bill's line charged to a property, plant and equipment account (1524, 1528…)
 * as a fixed asset. The bill's entry already debited the account, so no entry is posted here;
 * the cost is the line's amount before VAT (the VAT went to 240810 IVA descontable).
 */
export const capitalize = defineTool({
  name: 'assets.capitalize',
  description: 'Register as a fixed asset the line of a posted bill that was charged to a property, plant and equipment account (1524 equipo de oficina, 1528 equipo de computación): cost = the line\'s subtotal, class from the account, date = the bill\'s. Give the useful life and method. One asset per bill line.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['bill_id', 'line', 'useful_life_months'],
    properties: { ...TERMS_FIELDS, bill_id: ID_SCHEMA, line: { type: 'integer', minimum: 0, maximum: 499 } },
  },
  output: recordOutput('asset', ASSET_VIEW_SCHEMA),
  async handler(input, ctx) {
    const bill = await bills(ctx.db).findOne({ _id: input.bill_id, workspace: ctx.workspace }).lean();
    if (!bill) throw new CuadraError('invalid_input', `No bill ${input.bill_id} exists in this workspace.`, { field: '/bill_id' });
    if (bill.status === 'draft' || bill.status === 'void') throw new CuadraError('invalid_input', `Bill ${input.bill_id} is ${bill.status}; only a posted bill's line is an acquisition.`, { field: '/bill_id' });
    const line = bill.lines[input.line];
    if (!line) throw new CuadraError('invalid_input', `Bill ${input.bill_id} has no line ${input.line} (it has ${bill.lines.length}).`, { field: '/line' });
    const cls = classOfAccount(line.account);
    if (!cls) throw new CuadraError('invalid_input', `Line ${input.line} is charged to ${line.account}, not to a property, plant and equipment account.`, { field: '/line' });
    const inService = input.in_service_date ?? bill.issue_date;
    if (inService < bill.issue_date) throw new CuadraError('invalid_input', 'An asset cannot be in service before it was acquired.', { field: '/in_service_date' });
    const id = assetIdOfBillLine(bill._id, input.line);
    const name = input.name ?? line.description;
    const doc: AssetDoc = {
      _id: id, workspace: ctx.workspace, name, class: cls, status: 'active', currency: bill.currency, cost: line.subtotal, ...termsOf(input, line.subtotal),
      acquisition_date: bill.issue_date, in_service_date: inService, next_month: firstDepreciationMonth(inService), months: 0, niif_accumulated: 0, fiscal_accumulated: 0,
      usage: {}, units_to_date: 0, schedule: [], origin: { kind: 'bill', bill_id: bill._id, line: input.line }, disposal: null,
      search_lc: `${name} ${cls}`.toLowerCase(), rev: 0, created_at: ctx.now, updated_at: ctx.now,
    };
    try {
      await createPositioned(assets(ctx.db), doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', `Line ${input.line} of bill ${input.bill_id} is already the asset ${id}.`);
      throw err;
    }
    return { asset: assetView(doc) };
  },
});
