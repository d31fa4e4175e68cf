import { CuadraError, localDate, windowProblem, type MetricQuery, type MetricReader, type ReadContext } from '@cuadra/shared';
import { positionDate } from '../../books/calendar.ts';
import { ledgerAsOf, signedBalance } from '../../books/general-ledger.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { withTarget } from '../../books/rollup-reads.ts';
import { ASSET_CLASS_KEYS, ASSET_CLASSES } from './classes.ts';

/**
 * `assets_summary` at `as_of`: per class, the cost (debit balance of its PUC cost account), the
 * accumulated depreciation (credit balance of its 1592 sub-account) and the net — read from the
 * ledger rollups, so it is what the books say on that date (the balance sheet's figures), never a
 * scan of the assets. Summary = total net.
 */
export const assetsSummary: MetricReader = async (q: MetricQuery, ctx: ReadContext) => {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const today = localDate(ctx.now);
  const asOf = positionDate(q, today);
  const currency = await workspaceCurrency(ctx.db, ctx.workspace);
  const sums = await ledgerAsOf(ctx.db, ctx.workspace, currency, asOf, today);
  const rows = ASSET_CLASS_KEYS.map((key) => {
    const cls = ASSET_CLASSES[key];
    const cost = signedBalance(sums, cls.cost, 'debit');
    const accumulated = signedBalance(sums, cls.accumulated, 'credit');
    return { class: key, name: cls.name, cost_account: cls.cost, accumulated_account: cls.accumulated, cost, accumulated_depreciation: accumulated, net: cost - accumulated };
  }).filter((r) => r.cost !== 0 || r.accumulated_depreciation !== 0);
  const net = rows.reduce((s, r) => s + r.net, 0);
  const cost = rows.reduce((s, r) => s + r.cost, 0);
  const accumulated = rows.reduce((s, r) => s + r.accumulated_depreciation, 0);
  return {
    metric: 'assets_summary', unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: net }],
    summary: withTarget({ value: net }, q),
    rows: [...rows, { class: 'total', name: 'Total propiedades, planta y equipo', cost_account: null, accumulated_account: null, cost, accumulated_depreciation: accumulated, net }],
  };
};
