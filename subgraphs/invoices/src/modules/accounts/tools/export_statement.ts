import { defineTool, spreadsheetRow } from '@cuadra/shared';
import { printableStatement, PRINTABLE_QUERY_PROPERTIES, PRINT_TITLES as TITLES, type PrintableAnswer } from '../printable.ts';

/** exceljs, loaded at the first workbook rather than at the service's start (its import was ~10 % of the start's CPU). */
const excel = async () => (await import('exceljs')).default;

/** Cents as the spreadsheet shows them: currency units with two decimals (exact for |cents| < 2^53). */
function units(cents: number): number {
  return cents / 100;
}

/** The statement as one worksheet: a heading, one row per line, amounts in currency units. */
async function workbookOf(answer: PrintableAnswer, heading: string): Promise<Buffer> {
  const wb = new (await excel()).Workbook();
  wb.creator = 'Cuadra';
  const ws = wb.addWorksheet(answer.metric === 'cashflow' ? 'Flujos de efectivo' : TITLES[answer.metric]);
  // Every row is written through the one cell writer: an account name like `=HYPERLINK(…)` stays text (OWASP).
  const addRow = (values: readonly (string | number)[]) => ws.addRow(spreadsheetRow(values));
  addRow([TITLES[answer.metric]]).font = { bold: true, size: 14 };
  addRow([heading, `Moneda: ${answer.currency}`]);
  addRow([]);
  const money = '#,##0.00;[Red]-#,##0.00';
  if (answer.metric === 'trial_balance') {
    addRow(['Cuenta', 'Nombre', 'Débitos', 'Créditos', 'Saldo']).font = { bold: true };
    let debit = 0;
    let credit = 0;
    for (const r of answer.rows as { account: string; name: string; debit: number; credit: number; balance: number }[]) {
      addRow([r.account, r.name, units(r.debit), units(r.credit), units(r.balance)]);
      debit += r.debit;
      credit += r.credit;
    }
    addRow(['', 'Totales', units(debit), units(credit), units(debit - credit)]).font = { bold: true };
    for (const c of ['C', 'D', 'E']) ws.getColumn(c).numFmt = money;
  } else {
    const compare = answer.rows.some((r) => 'previous' in r);
    addRow(['Sección', 'Cuenta', 'Nombre', answer.metric === 'balance_sheet' ? 'Saldo' : 'Valor', ...(compare ? ['Anterior'] : [])]).font = { bold: true };
    for (const r of answer.rows as { kind: string; section: string; account: string | null; name: string; balance?: number; value?: number; previous?: number }[]) {
      const row = addRow([r.section, r.account ?? '', r.name, units(r.balance ?? r.value ?? 0), ...(compare ? [units(r.previous ?? 0)] : [])]);
      if (r.kind !== 'account') row.font = { bold: true };
    }
    for (const c of ['D', 'E']) ws.getColumn(c).numFmt = money;
  }
  ws.getColumn('A').width = 14;
  ws.getColumn('B').width = 12;
  ws.getColumn('C').width = 48;
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** A statement exported to a spreadsheet (XLSX, written with exceljs). */
export const exportStatement = defineTool({
  name: 'accounts.export_statement',
  description: 'Export a financial statement — trial_balance or balance_sheet at as_of, income_statement or cashflow over from/to (with interval and compare) — as an XLSX spreadsheet, base64-encoded: one worksheet, one row per account line and the totals, amounts in currency units with two decimals.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['metric'],
    properties: {
      ...PRINTABLE_QUERY_PROPERTIES,
      interval: { enum: ['day', 'week', 'month'] }, compare: { enum: ['previous_period', 'previous_year'] },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['filename', 'content_type', 'size', 'base64'],
    properties: { filename: { type: 'string' }, content_type: { const: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }, size: { type: 'integer', minimum: 1 }, base64: { type: 'string' } },
  },
  async handler(input, ctx) {
    const answer = await printableStatement(ctx, input, input.interval ?? 'month');
    const period = answer.metric === 'income_statement' || answer.metric === 'cashflow'
      ? `${answer.series[0]?.period ?? ''} – ${answer.series[answer.series.length - 1]?.period_end ?? ''}`
      : answer.series[0].period;
    const file = await workbookOf(answer, answer.metric === 'income_statement' || answer.metric === 'cashflow' ? `Periodo: ${period}` : `Al ${period}`);
    return {
      filename: `${answer.metric}_${period.replace(/[^0-9-]+/g, '_')}.xlsx`,
      content_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' as const,
      size: file.length,
      base64: file.toString('base64'),
    };
  },
});
