import { changeBps, CuadraError, localDate, windowProblem, type MetricQuery } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { wholeChart, type ChartAccount } from '../../accounting/chart.ts';
import { codesIn, ledgerAsOf, windowLedgerSums, signedBalance, type LedgerSums } from '../../books/general-ledger.ts';
import { accountType, PUC } from '../../accounting/puc.ts';
import { positionDate } from '../../books/calendar.ts';
import { LedgerCounter } from '../../books/rollup-store.ts';
import { workspaceCurrency } from '../../lib/settings.ts';

/** The financial statements, as metrics (specification §2.3). */
export const STATEMENT_METRICS = ['trial_balance', 'balance_sheet', 'income_statement'] as const;
export type StatementMetric = (typeof STATEMENT_METRICS)[number];

/** The contract shape of a metric answer (CONTRACT.md §8), `rows` holding the statement's lines. */
export interface StatementAnswer {
  metric: StatementMetric;
  unit: 'money';
  currency: string;
  series: { period: string; period_end: string; value: number; previous?: number }[];
  summary: { value: number; previous?: number; change_bps?: number; target?: number };
  rows: Record<string, unknown>[];
}

function nameOf(chart: Map<string, ChartAccount>, code: string): string {
  return chart.get(code)?.name ?? PUC[code] ?? code;
}

/** Trial balance at a date: per account Σ debits, Σ credits and the balance (debits − credits), so the balances sum to 0. */
export function trialBalance(sums: LedgerSums, chart: Map<string, ChartAccount>) {
  const rows = codesIn(sums).map((code) => {
    const debit = sums[LedgerCounter.debit(code)] ?? 0;
    const credit = sums[LedgerCounter.credit(code)] ?? 0;
    return { account: code, name: nameOf(chart, code), type: accountType(code), debit, credit, balance: debit - credit };
  }).filter((r) => r.debit !== 0 || r.credit !== 0);
  return { rows, debit: rows.reduce((s, r) => s + r.debit, 0), credit: rows.reduce((s, r) => s + r.credit, 0) };
}

/**
 * The result of the period in the sums: income (class 4, credit side) − costs (6, 7) − expenses
 * (5). `withoutClosing` leaves out the year-end closing entries (the income statement shows the
 * year's activity, not its transfer to equity).
 */
function movement(sums: LedgerSums, code: string, withoutClosing: boolean): number {
  const closing = (key: string) => (withoutClosing ? sums[key] ?? 0 : 0);
  const dr = (sums[LedgerCounter.debit(code)] ?? 0) - closing(LedgerCounter.closingDebit(code));
  const cr = (sums[LedgerCounter.credit(code)] ?? 0) - closing(LedgerCounter.closingCredit(code));
  return accountType(code) === 'income' ? cr - dr : dr - cr;
}

/** Income statement lines and totals of one set of sums. */
export function incomeStatement(sums: LedgerSums, chart: Map<string, ChartAccount>) {
  const lines = codesIn(sums).filter((c) => ['4', '5', '6', '7'].includes(c[0])).map((code) => ({
    account: code, name: nameOf(chart, code), section: accountType(code), value: movement(sums, code, true),
  }));
  const total = (section: string) => lines.filter((l) => l.section === section).reduce((s, l) => s + l.value, 0);
  const income = total('income');
  const cost = total('cost');
  const expense = total('expense');
  return { lines, income, cost, expense, result: income - cost - expense };
}

/**
 * Balance sheet at a date: assets (class 1, debit balances), liabilities (2) and equity (3, credit
 * balances) per account, the result not yet closed to equity (classes 4–7 to date) as an equity
 * line, and the totals: assets = liabilities + equity.
 */
export function balanceSheet(sums: LedgerSums, chart: Map<string, ChartAccount>) {
  const accounts = codesIn(sums).filter((c) => ['1', '2', '3'].includes(c[0])).map((code) => ({
    kind: 'account', section: accountType(code), account: code as string | null, name: nameOf(chart, code),
    balance: signedBalance(sums, code, code[0] === '1' ? 'debit' : 'credit'),
  })).filter((r) => r.balance !== 0);
  const result = codesIn(sums).filter((c) => ['4', '5', '6', '7'].includes(c[0]))
    .reduce((s, code) => s + (accountType(code) === 'income' ? 1 : -1) * movement(sums, code, false), 0);
  const sum = (section: string) => accounts.filter((r) => r.section === section).reduce((s, r) => s + r.balance, 0);
  const assets = sum('asset');
  const liabilities = sum('liability');
  const equity = sum('equity') + result;
  const rows = [
    ...accounts,
    { kind: 'result', section: 'equity', account: null, name: 'Resultado del ejercicio en curso (ingresos − costos − gastos, sin cerrar)', balance: result },
    { kind: 'total', section: 'asset', account: null, name: 'Total activo', balance: assets },
    { kind: 'total', section: 'liability', account: null, name: 'Total pasivo', balance: liabilities },
    { kind: 'total', section: 'equity', account: null, name: 'Total patrimonio', balance: equity },
    { kind: 'total', section: 'liability_and_equity', account: null, name: 'Total pasivo y patrimonio', balance: liabilities + equity },
  ];
  return { rows, assets, liabilities, equity, result };
}

function withTarget(summary: StatementAnswer['summary'], q: MetricQuery): StatementAnswer['summary'] {
  return q.target === undefined ? summary : { ...summary, target: q.target };
}

/**
 * Answers a statement for a workspace in its base currency, from the ledger rollups (never the
 * journal). Entries in other currencies are kept in their own rollups and are not converted here.
 */
export async function statement(db: Connection, workspace: string, q: MetricQuery & { metric: StatementMetric }, now: Date): Promise<StatementAnswer> {
  const problem = windowProblem(q);
  if (problem) throw new CuadraError('invalid_input', problem.error, { field: problem.field });
  const currency = await workspaceCurrency(db, workspace);
  const today = localDate(now);
  const chart = new Map((await wholeChart(db, workspace)).map((a) => [a.code, a]));
  if (q.metric === 'trial_balance' || q.metric === 'balance_sheet') {
    const asOf = positionDate(q, today);
    const sums = await ledgerAsOf(db, workspace, currency, asOf, today);
    if (q.metric === 'trial_balance') {
      const tb = trialBalance(sums, chart);
      return { metric: q.metric, unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: tb.debit }], summary: withTarget({ value: tb.debit }, q), rows: tb.rows };
    }
    const bs = balanceSheet(sums, chart);
    return { metric: q.metric, unit: 'money', currency, series: [{ period: asOf, period_end: asOf, value: bs.assets }], summary: withTarget({ value: bs.assets }, q), rows: bs.rows };
  }
  const { bs, pw, pbs, sums } = await windowLedgerSums(db, workspace, currency, q, today);
  const window = incomeStatement(sums[0], chart);
  const series: StatementAnswer['series'] = bs.map((b, i) => ({ ...b, value: incomeStatement(sums[1 + i], chart).result }));
  const totals = (s: ReturnType<typeof incomeStatement>) => [
    { kind: 'total', section: 'income', account: null, name: 'Ingresos', value: s.income },
    { kind: 'total', section: 'cost', account: null, name: 'Costos', value: s.cost },
    { kind: 'total', section: 'expense', account: null, name: 'Gastos', value: s.expense },
    { kind: 'total', section: 'result', account: null, name: 'Resultado del periodo', value: s.result },
  ];
  let rows: Record<string, unknown>[] = [...window.lines.map((l) => ({ kind: 'account', ...l })), ...totals(window)];
  if (!pw) return { metric: q.metric, unit: 'money', currency, series, summary: withTarget({ value: window.result }, q), rows };
  const prev = incomeStatement(sums[1 + bs.length], chart);
  series.forEach((p, i) => {
    if (pbs[i]) p.previous = incomeStatement(sums[2 + bs.length + i], chart).result;
  });
  // Accounts moved in either window, each with both figures.
  const prevByCode = new Map(prev.lines.map((l) => [l.account, l]));
  const codes = [...new Set([...window.lines.map((l) => l.account), ...prev.lines.map((l) => l.account)])].sort();
  const nowByCode = new Map(window.lines.map((l) => [l.account, l]));
  const prevTotals = totals(prev);
  rows = [
    ...codes.map((code) => ({ kind: 'account', account: code, name: nameOf(chart, code), section: accountType(code), value: nowByCode.get(code)?.value ?? 0, previous: prevByCode.get(code)?.value ?? 0 })),
    ...totals(window).map((t, i) => ({ ...t, previous: prevTotals[i].value })),
  ];
  const change = changeBps(window.result, prev.result);
  return {
    metric: q.metric, unit: 'money', currency, series, rows,
    summary: withTarget(change === undefined ? { value: window.result, previous: prev.result } : { value: window.result, previous: prev.result, change_bps: change }, q),
  };
}
