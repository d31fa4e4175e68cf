import { localDate, type MetricReader } from '@cuadra/shared';
import { rollupId, rollups, type RollupDoc } from '../../lib/rollup.ts';
import { repairPendingRollups } from '../../lib/rollups.ts';
import { settings } from '../../lib/settings.ts';
import { completeStuckImports, bankRollupNs } from './import.ts';
import { bankAccounts, bankImports, bankTransactions } from './model.ts';

/** Bank accounts read per answer (a workspace has a handful; beyond this the answer says so by its rows). */
export const ACCOUNTS_READ = 200;

/**
 * `bank_reconciliation`: reconciled vs unreconciled transactions by bank account, from the
 * all-time counters kept on write in each account's rollup namespace `bank:<id>` (import.ts):
 * `unrec_n`/`unrec_amt` (+ on import, − on reconcile, + on undo) and `rec_n`/`rec_amt`. Amounts
 * are Σ |amount| in cents. Accounts in the workspace's currency; the
 * summary value is the amount still unreconciled, the series its single point today. Reads one
 * rollup document per account, by `_id`.
 */
export const bankReconciliation: MetricReader = async (q, ctx) => {
  await completeStuckImports({ db: ctx.db, workspace: ctx.workspace, now: ctx.now });
  await repairPendingRollups(ctx.db, ctx.workspace, [bankImports(ctx.db), bankTransactions(ctx.db)], ctx.now);
  const currency = (await settings(ctx.db).findById(ctx.workspace, { currency: 1 }).lean())?.currency ?? 'COP';
  const accounts = (await bankAccounts(ctx.db).find({ workspace: ctx.workspace, currency }).limit(ACCOUNTS_READ).lean())
    .sort((a, b) => a.name.localeCompare(b.name) || a._id.localeCompare(b._id));
  const ids = accounts.map((a) => rollupId(ctx.workspace, bankRollupNs(a._id), 'a', 'all'));
  const docs = new Map((ids.length ? await rollups(ctx.db).find({ _id: { $in: ids } }).lean<RollupDoc[]>() : []).map((d) => [d._id, d]));
  const rows = accounts.map((a, i) => {
    const v = docs.get(ids[i])?.v ?? {};
    return {
      bank_id: a._id, name: a.name, currency: a.currency,
      reconciled_count: v.rec_n ?? 0, reconciled_amount: v.rec_amt ?? 0, unreconciled_count: v.unrec_n ?? 0, unreconciled_amount: v.unrec_amt ?? 0,
    };
  });
  const value = rows.reduce((s, r) => s + r.unreconciled_amount, 0);
  const today = localDate(ctx.now);
  return { metric: q.metric, unit: 'money', currency, series: [{ period: today, period_end: today, value }], summary: { value }, rows };
};

/** The metrics this module answers. */
export const BANK_METRICS = { bank_reconciliation: bankReconciliation };
