import { DATE_SCHEMA, type ToolContext } from '@cuadra/shared';
import { payrollPull } from '../../accounting/payroll_pull.ts';
import { cashflow } from './cashflow.ts';
import { statement, STATEMENT_METRICS, type StatementAnswer } from './statements.ts';

/** What can be printed: a statement's answer, or the cash flow's (same envelope, `rows` with `value`). */
export type PrintableAnswer = Omit<StatementAnswer, 'metric'> & { metric: StatementAnswer['metric'] | 'cashflow' };

/** The input properties naming a statement to print or export: which one, at a date or over a span. */
export const PRINTABLE_QUERY_PROPERTIES = {
  metric: { enum: [...STATEMENT_METRICS, 'cashflow'] },
  as_of: DATE_SCHEMA, from: DATE_SCHEMA, to: DATE_SCHEMA,
} as const;

/** What is asked of a printable statement. */
export interface PrintableQuery { metric: PrintableAnswer['metric']; as_of?: string; from?: string; to?: string; compare?: 'previous_period' | 'previous_year' }

/** The statement a print or an export lays out, waking the workspace's payroll pull (accounting/payroll_pull.ts). */
export async function printableStatement(ctx: ToolContext, query: PrintableQuery, interval: 'day' | 'week' | 'month'): Promise<PrintableAnswer> {
  payrollPull.wake(ctx.workspace);
  if (query.metric === 'cashflow') {
    const cf = await cashflow(ctx.db, ctx.workspace, { ...query, metric: 'cashflow', interval }, ctx.now);
    return { metric: 'cashflow', unit: 'money', currency: cf.currency ?? 'COP', series: cf.series, summary: cf.summary, rows: cf.rows ?? [] };
  }
  return statement(ctx.db, ctx.workspace, { ...query, metric: query.metric, interval }, ctx.now);
}

/** Titles of the printable statements, in Spanish (Decreto 2420 de 2015 names). */
export const PRINT_TITLES = {
  trial_balance: 'Balance de prueba',
  balance_sheet: 'Estado de situación financiera',
  income_statement: 'Estado de resultados',
  cashflow: 'Estado de flujos de efectivo (método directo)',
} as const;

/**
 * An amount in cents as Colombian print shows it (es-CO): thousands with `.`, decimals with `,`
 * only when there are cents, a leading minus for negatives — 120000000 → `1.200.000`,
 * 123456 → `1.234,56`, −50000000 → `-500.000`. Integer arithmetic: exact for any amount.
 */
export function formatCop(cents: number): string {
  const negative = cents < 0;
  const abs = Math.abs(cents);
  const units = Math.trunc(abs / 100);
  const rest = abs % 100;
  const grouped = String(units).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${negative ? '-' : ''}${grouped}${rest ? `,${String(rest).padStart(2, '0')}` : ''}`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const SECTION_NAMES: Record<string, string> = {
  asset: 'Activo', liability: 'Pasivo', equity: 'Patrimonio', income: 'Ingresos', cost: 'Costos', expense: 'Gastos', result: 'Resultado', liability_and_equity: 'Pasivo y patrimonio',
  operating: 'Operación', investing: 'Inversión', financing: 'Financiación', net_change: 'Variación neta', opening_cash: 'Efectivo inicial', closing_cash: 'Efectivo final',
};

/**
 * The statement as a self-contained HTML page (no scripts, no external requests) to print:
 * the company, the statement's title and period, one row per account line and the totals,
 * amounts in {@link formatCop}.
 */
export function statementHtml(answer: PrintableAnswer, company: { name: string; nit: string | null }, period: string): string {
  const title = PRINT_TITLES[answer.metric];
  let head: string[];
  let body: string[][];
  let bold: boolean[];
  if (answer.metric === 'trial_balance') {
    head = ['Cuenta', 'Nombre', 'Débitos', 'Créditos', 'Saldo'];
    const rows = answer.rows as { account: string; name: string; debit: number; credit: number; balance: number }[];
    const debit = rows.reduce((s, r) => s + r.debit, 0);
    const credit = rows.reduce((s, r) => s + r.credit, 0);
    body = [...rows.map((r) => [r.account, r.name, formatCop(r.debit), formatCop(r.credit), formatCop(r.balance)]), ['', 'Sumas iguales', formatCop(debit), formatCop(credit), formatCop(debit - credit)]];
    bold = [...rows.map(() => false), true];
  } else {
    const compare = answer.rows.some((r) => 'previous' in r);
    head = ['Sección', 'Cuenta', 'Nombre', answer.metric === 'balance_sheet' ? 'Saldo' : 'Valor', ...(compare ? ['Periodo anterior'] : [])];
    const rows = answer.rows as { kind: string; section: string; account: string | null; name: string; balance?: number; value?: number; previous?: number }[];
    body = rows.map((r) => [SECTION_NAMES[r.section] ?? r.section, r.account ?? '', r.name, formatCop(r.balance ?? r.value ?? 0), ...(compare ? [formatCop(r.previous ?? 0)] : [])]);
    bold = rows.map((r) => r.kind !== 'account');
  }
  const amounts = new Set(['Débitos', 'Créditos', 'Saldo', 'Valor', 'Periodo anterior']);
  const numeric = (i: number) => amounts.has(head[i]);
  return `<!DOCTYPE html>
<html lang="es-CO"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body { font-family: 'DejaVu Sans', Arial, sans-serif; font-size: 9.5pt; color: #111; }
h1 { font-size: 14pt; margin: 0 0 2pt; } .sub { margin: 0 0 10pt; color: #333; }
table { width: 100%; border-collapse: collapse; }
th, td { padding: 2pt 4pt; border-bottom: 0.5pt solid #ccc; text-align: left; vertical-align: top; }
th { border-bottom: 1pt solid #111; } td.n, th.n { text-align: right; white-space: nowrap; }
tr.b td { font-weight: bold; border-top: 0.8pt solid #111; }
.foot { margin-top: 12pt; font-size: 8pt; color: #555; }
</style></head><body>
<h1>${esc(company.name)}</h1>
<p class="sub">${company.nit ? `NIT ${esc(company.nit)} · ` : ''}${esc(title)} · ${esc(period)} · Cifras en ${esc(answer.currency)}</p>
<table><thead><tr>${head.map((h, i) => `<th${numeric(i) ? ' class="n"' : ''}>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>
${body.map((r, n) => `<tr${bold[n] ? ' class="b"' : ''}>${r.map((c, i) => `<td${numeric(i) ? ' class="n"' : ''}>${esc(c)}</td>`).join('')}</tr>`).join('\n')}
</tbody></table>
<p class="foot">Preparado con Cuadra a partir del libro diario (Plan Único de Cuentas, Decreto 2650 de 1993).</p>
</body></html>`;
}
