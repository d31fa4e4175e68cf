import { defineTool } from '@cuadra/shared';
import { assertNotAfterToday } from '../../../lib/document-dates.ts';
import { monthEnd } from '../depreciation.ts';
import { assets } from '../model.ts';
import { depreciateThrough, MAX_MONTHS_PER_CALL } from '../ops.ts';

const MONTH = { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' } as const;

/**
 * The monthly depreciation run: every active asset of the workspace is depreciated, month by month
 * in order, through `month` — in the NIIF book by one journal entry per asset and month, in the
 * fiscal book beside it. Idempotent per asset and month (the entry's id and the asset's month are
 * the keys), safe to run again after a crash or twice at once; an asset behind catches up.
 */
export const depreciate = defineTool({
  name: 'assets.depreciate',
  description: 'Run the monthly depreciation through a month (YYYY-MM, a month that has ended): each active asset gets one journal entry per month not yet depreciated (debit 5160 depreciaciones, credit 1592 depreciación acumulada, dated the month\'s last day, NIIF book) and its fiscal-book month (ET art. 137 cap). Running it again, or after an interruption, posts nothing twice.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, required: ['month'], properties: { month: MONTH } },
  output: {
    type: 'object', additionalProperties: false, required: ['month', 'assets', 'entries', 'niif_total', 'fiscal_total', 'complete'],
    properties: {
      month: MONTH,
      assets: { type: 'integer', description: 'Assets that depreciated at least one month in this call.' },
      entries: { type: 'array', items: { type: 'string' }, description: 'Journal entries written or confirmed by this call.' },
      niif_total: { type: 'integer' }, fiscal_total: { type: 'integer' },
      complete: { type: 'boolean', description: 'False when the call stopped at its bound with months left: call it again.' },
    },
  },
  async handler(input, ctx) {
    const end = monthEnd(input.month);
    // The entries are dated the month's last day: a month that has not ended would date them in the future.
    assertNotAfterToday(ctx, end, '/month');
    const budget = { left: MAX_MONTHS_PER_CALL };
    const due = await assets(ctx.db).find({ workspace: ctx.workspace, status: 'active', next_month: { $lte: input.month } }).limit(MAX_MONTHS_PER_CALL).lean();
    let touched = 0;
    let niif = 0;
    let fiscal = 0;
    const entries: string[] = [];
    for (const a of due) {
      const { months } = await depreciateThrough(ctx, a, input.month, budget);
      if (months.length) touched++;
      for (const m of months) {
        niif += m.niif;
        fiscal += m.fiscal;
        if (m.entry_id) entries.push(m.entry_id);
      }
      if (budget.left === 0) break;
    }
    return { month: input.month, assets: touched, entries, niif_total: niif, fiscal_total: fiscal, complete: budget.left > 0 };
  },
});
