import { createHash } from 'node:crypto';
import { defineTool } from '@cuadra/shared';
import { htmlToPdf } from '@cuadra/shared/pdf';
import { settings } from '../../../lib/settings.ts';
import { printableStatement, PRINTABLE_QUERY_PROPERTIES, statementHtml } from '../printable.ts';

/** A statement printed: HTML laid out for A4, printed to PDF by Chromium (as invoices.pdf). */
export const printStatement = defineTool({
  name: 'accounts.print_statement',
  description: 'Print a financial statement — trial_balance or balance_sheet at as_of, income_statement or cashflow over from/to (with compare) — in Spanish with Colombian number format (1.200.000), as a PDF (default) or the HTML page it is printed from, base64-encoded.',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['metric'],
    properties: {
      ...PRINTABLE_QUERY_PROPERTIES,
      compare: { enum: ['previous_period', 'previous_year'] },
      format: { enum: ['pdf', 'html'] },
    },
  },
  output: {
    type: 'object', additionalProperties: false, required: ['filename', 'content_type', 'bytes', 'sha256', 'content_base64'],
    properties: {
      filename: { type: 'string' }, content_type: { enum: ['application/pdf', 'text/html; charset=utf-8'] }, bytes: { type: 'integer', minimum: 1 },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' }, content_base64: { type: 'string' },
    },
  },
  async handler(input, ctx) {
    const { format = 'pdf', ...query } = input;
    const answer = await printableStatement(ctx, query, 'month');
    const issuer = (await settings(ctx.db).findById(ctx.workspace, { issuer: 1 }).lean())?.issuer;
    const company = { name: issuer?.name ?? 'Empresa', nit: issuer ? `${issuer.nit}-${issuer.check_digit}` : null };
    const period = answer.metric === 'income_statement' || answer.metric === 'cashflow'
      ? `Del ${answer.series[0]?.period ?? ''} al ${answer.series[answer.series.length - 1]?.period_end ?? ''}`
      : `Al ${answer.series[0].period}`;
    const html = statementHtml(answer, company, period);
    const bytes = format === 'html' ? Buffer.from(html, 'utf8') : await htmlToPdf(html);
    const stamp = period.replace(/[^0-9-]+/g, '_').replace(/^_|_$/g, '');
    return {
      filename: `${answer.metric}_${stamp}.${format}`,
      content_type: format === 'html' ? 'text/html; charset=utf-8' as const : 'application/pdf' as const,
      bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), content_base64: bytes.toString('base64'),
    };
  },
});
