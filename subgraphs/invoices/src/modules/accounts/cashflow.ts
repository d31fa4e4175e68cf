import { addDays, changeBps, CuadraError, localDate, windowProblem, type MetricQuery, type MetricReader } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { wholeChart } from '../../accounting/chart.ts';
import { isCash } from '../../books/journal.ts';
import { ledgerAsOf, windowLedgerSums, type LedgerSums } from '../../books/general-ledger.ts';
import { PUC } from '../../accounting/puc.ts';
import { withTarget, type MetricAnswer } from '../../books/rollup-reads.ts';
import { workspaceCurrency } from '../../lib/settings.ts';

/** The three activities of a cash flow statement (NIC 7 / IAS 7). */
export type CashActivity = 'operating' | 'investing' | 'financing';

const SECTION_NAMES: Record<CashActivity, string> = {
  operating: 'Flujo de efectivo de actividades de operación',
  investing: 'Flujo de efectivo de actividades de inversión',
  financing: 'Flujo de efectivo de actividades de financiación',
};

/**
 * The activity of a counter-account of a cash movement, by its PUC group: investing = 12
 * inversiones, 15 propiedades, planta y equipo, 16 intangibles, 18 otros activos, 19
 * valorizaciones; financing = 21 obligaciones financieras and class 3 patrimonio (capital
 * contributed, dividends and withdrawals); operating = everything else (customers, vendors,
 * taxes, payroll, income, costs and expenses).
 */
export function activityOf(code: string): CashActivity {
  const group = code.slice(0, 2);
  if (['12', '15', '16', '18', '19'].includes(group)) return 'investing';
  if (group === '21' || code[0] === '3') return 'financing';
  return 'operating';
}

/** Cash and bank balance (PUC 11, debit side) in a set of position sums. */
export function cashBalance(sums: LedgerSums): number {
  let total = 0;
  for (const [k, v] of Object.entries(sums)) {
    if (k[0] === 'd' && isCash(k.slice(1))) total += v;
    else if (k[0] === 'c' && isCash(k.slice(1))) total -= v;
  }
  return total;
}

/** The counter-accounts of a window's cash movements (`x<code>`, journal.ts) by activity. */
export function cashFlows(sums: LedgerSums): { accounts: { account: string; section: CashActivity; value: number }[]; totals: Record<CashActivity, number>; net: number } {
  const accounts = Object.entries(sums).filter(([k, v]) => k[0] === 'x' && v !== 0).map(([k, v]) => ({ account: k.slice(1), section: activityOf(k.slice(1)), value: v }))
    .sort((a, b) => (a.account < b.account ? -1 : 1));
  const totals: Record<CashActivity, number> = { operating: 0, investing: 0, financing: 0 };
  for (const a of accounts) totals[a.section] += a.value;
  return { accounts, totals, net: totals.operating + totals.investing + totals.financing };
}

/**
 * The `cashflow` metric (specification §2.3), direct method: every journal entry that moves a
 * cash or bank account (PUC 11) is read through its other lines, each counter-account's credit
 * − debit being cash received (positive) or paid (negative) for that reason; the counters are
 * kept on write (journal.ts `x<code>`), so the read is rollups only. Rows: each counter-account
 * with its activity, the three activity totals, the net change, and the opening and closing cash
 * (PUC 11 at the day before `from` and at `to`), which differ by exactly the net change.
 * `series` is the net change per `interval`; `compare` fills `previous` and `change_bps`.
 */
export async function cashflow(db: Connection, workspace: string, q: MetricQuery, now: Date): Promise<MetricAnswer> {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const currency = await workspaceCurrency(db, workspace);
  const today = localDate(now);
  const chart = new Map((await wholeChart(db, workspace)).map((a) => [a.code, a]));
  const { w, bs, pw, pbs, sums } = await windowLedgerSums(db, workspace, currency, q, today);
  const flows = cashFlows(sums[0]);
  const prev = pw ? cashFlows(sums[1 + bs.length]) : null;
  const series: MetricAnswer['series'] = bs.map((b, i) => ({ ...b, value: cashFlows(sums[1 + i]).net }));
  if (pw) series.forEach((p, i) => { if (pbs[i]) p.previous = cashFlows(sums[2 + bs.length + i]).net; });
  const opening = cashBalance(await ledgerAsOf(db, workspace, currency, addDays(w.from, -1), today));
  const closing = cashBalance(await ledgerAsOf(db, workspace, currency, w.to, today));
  const name = (code: string) => chart.get(code)?.name ?? PUC[code] ?? code;
  const prevOf = (code: string) => (prev ? { previous: prev.accounts.find((a) => a.account === code)?.value ?? 0 } : {});
  const codes = [...new Set([...flows.accounts.map((a) => a.account), ...(prev?.accounts.map((a) => a.account) ?? [])])].sort();
  const rows: Record<string, unknown>[] = [];
  for (const section of ['operating', 'investing', 'financing'] as const) {
    for (const code of codes.filter((c) => activityOf(c) === section)) {
      rows.push({ kind: 'account', section, account: code, name: name(code), value: flows.accounts.find((a) => a.account === code)?.value ?? 0, ...prevOf(code) });
    }
    rows.push({ kind: 'total', section, account: null, name: SECTION_NAMES[section], value: flows.totals[section], ...(prev ? { previous: prev.totals[section] } : {}) });
  }
  rows.push({ kind: 'total', section: 'net_change', account: null, name: 'Aumento (disminución) neto del efectivo', value: flows.net, ...(prev ? { previous: prev.net } : {}) });
  rows.push({ kind: 'balance', section: 'opening_cash', account: null, name: `Efectivo al ${addDays(w.from, -1)}`, value: opening });
  rows.push({ kind: 'balance', section: 'closing_cash', account: null, name: `Efectivo al ${w.to}`, value: closing });
  let summary: MetricAnswer['summary'] = { value: flows.net };
  if (prev) {
    const change = changeBps(flows.net, prev.net);
    summary = change === undefined ? { value: flows.net, previous: prev.net } : { value: flows.net, previous: prev.net, change_bps: change };
  }
  return { metric: 'cashflow', unit: 'money', currency, series, summary: withTarget(summary, q), rows };
}

/** The reader of `cashflow`. */
export const cashflowMetric: MetricReader = async (q, ctx) => cashflow(ctx.db, ctx.workspace, q, ctx.now) as unknown as Promise<Record<string, unknown>>;
