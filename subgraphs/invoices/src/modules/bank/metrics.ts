import { buckets, CuadraError, localDate, previousWindow, queryWindow, windowProblem, type MetricQuery, type MetricReader } from '@cuadra/shared';
import { rollupId, type RollupDoc } from '../../books/rollup-store.ts';
import { rangeSums, rollupsByIds, summaryOf, type MetricAnswer } from '../../books/rollup-reads.ts';
import { workspaceCurrency } from '../../lib/settings.ts';
import { bankRollupNs } from './import.ts';
import { bankAccounts } from './model.ts';

/** Bank accounts read per answer (a workspace has a handful; beyond this the answer says so by its rows). */
export const ACCOUNTS_READ = 200;

type Counters = (key: string) => number;

/** A row of one account from its counters. */
function accountRow(a: { _id: string; name: string; currency: string }, v: Counters) {
  return {
    bank_id: a._id, name: a.name, currency: a.currency,
    reconciled_count: v('rec_n'), reconciled_amount: v('rec_amt'), unreconciled_count: v('unrec_n'), unreconciled_amount: v('unrec_amt'),
  };
}

/** Whether the query asks for a window (any of from/to, days, interval, compare). */
function windowed(q: MetricQuery): boolean {
  return q.from !== undefined || q.to !== undefined || q.days !== undefined || q.interval !== undefined || q.compare !== undefined;
}

/**
 * `bank_reconciliation`: reconciled vs unreconciled transactions by bank account, from counters
 * kept on write in each account's rollup namespace `bank:<id>` (import.ts) on each transaction's
 * booking date: `unrec_n`/`unrec_amt` (+ on import, − on reconcile, + on undo) and
 * `rec_n`/`rec_amt`. Amounts are Σ |amount| in cents; accounts in the workspace's currency.
 *
 * - Without a window: all the account's transactions (the all-time rollup); the summary value is
 *   the amount still unreconciled, the series its single point today.
 * - With a window (from/to or days, interval, compare — as the receivables metrics take them):
 *   the transactions the bank booked in the window, as they stand now. Each bucket's value is
 *   the unreconciled amount of the transactions booked in it; rows are per account over the
 *   window; `compare` fills `previous` (per bucket, in the summary, and per row: the previous
 *   window's unreconciled amount).
 * Reads rollup documents by `_id` only: per account, the day and month documents covering the
 * window(s) (rollup-reads.ts rangeSums), never the transactions.
 */
export const bankReconciliation: MetricReader = async (q, ctx) => {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const currency = await workspaceCurrency(ctx.db, ctx.workspace, ctx);
  const accounts = (await bankAccounts(ctx.db).find({ workspace: ctx.workspace, currency }).limit(ACCOUNTS_READ).lean())
    .sort((a, b) => a.name.localeCompare(b.name) || a._id.localeCompare(b._id));
  const today = localDate(ctx.now);

  if (!windowed(q)) {
    const ids = accounts.map((a) => rollupId(ctx.workspace, bankRollupNs(a._id), 'a', 'all'));
    const docs = new Map((ids.length ? await rollupsByIds(ctx.db, ids) : []).map((d: RollupDoc) => [d._id, d]));
    const rows = accounts.map((a, i) => accountRow(a, (k) => docs.get(ids[i])?.v[k] ?? 0));
    const value = rows.reduce((s, r) => s + r.unreconciled_amount, 0);
    return { metric: q.metric, unit: 'money', currency, series: [{ period: today, period_end: today, value }], summary: summaryOf(value, undefined, q), rows } satisfies MetricAnswer;
  }

  const w = queryWindow(q, today);
  const bs = buckets(w, q.interval ?? 'day');
  const pw = q.compare ? previousWindow(w, q.compare) : null;
  const pbs = pw ? buckets(pw, q.interval ?? 'day') : [];
  const ranges = [w, ...bs.map((b) => ({ from: b.period, to: b.period_end })), ...(pw ? [pw, ...pbs.map((b) => ({ from: b.period, to: b.period_end }))] : [])];
  // Per account: sums over the window, each bucket, the previous window and its buckets.
  const perAccount = await Promise.all(accounts.map((a) => rangeSums(ctx.db, ctx.workspace, bankRollupNs(a._id), ranges)));
  const total = (i: number, key: string) => perAccount.reduce((s, sums) => s + sums[i](key), 0);
  const pStart = 1 + bs.length;
  const series: MetricAnswer['series'] = bs.map((b, i) => ({ ...b, value: total(1 + i, 'unrec_amt'), ...(pw && pbs[i] ? { previous: total(pStart + 1 + i, 'unrec_amt') } : {}) }));
  const rows = accounts.map((a, i) => ({ ...accountRow(a, perAccount[i][0]), ...(pw ? { previous: perAccount[i][pStart]('unrec_amt') } : {}) }));
  const value = total(0, 'unrec_amt');
  return { metric: q.metric, unit: 'money', currency, series, summary: summaryOf(value, pw ? total(pStart, 'unrec_amt') : undefined, q), rows } satisfies MetricAnswer;
};

/** The metrics this module answers. */
export const BANK_METRICS = { bank_reconciliation: bankReconciliation };
