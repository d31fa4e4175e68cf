import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { requireEmployer } from '../epayroll.ts';
import { htmlToPdf, payslipHtml } from '../payslip_document.ts';
import { loadRun, payslipNet } from '../runs.ts';

/**
 * One employee's payslip of a run as a document: HTML in Spanish, or that page printed to PDF
 * (base64). Employer contributions and provisions appear only with `employer_costs`.
 */
export const payslip = defineTool({
  name: 'payroll.payslip',
  description: 'The payslip (desprendible de nómina) of one employee in a payroll run, in Spanish: earnings, deductions and net pay (with the final settlement — severance, its interest, service bonus, vacations and any indemnity — on the payslip of a contract\'s last day), money as COP 1.200.000. format html gives the page; pdf gives it printed to A4 PDF, base64. employer_costs: true adds the employer\'s contributions and provisions (not shown to the employee by default). A run not yet posted is marked as a draft. The page is headed by the employer\'s name and NIT (set with payroll.employer_configure).',
  risk: 'read',
  input: {
    type: 'object', additionalProperties: false, required: ['run_id', 'employee_id'],
    properties: {
      run_id: ID_SCHEMA,
      employee_id: ID_SCHEMA,
      format: { enum: ['html', 'pdf'], default: 'html' },
      employer_costs: { type: 'boolean', default: false },
    },
  } as const,
  output: {
    type: 'object', additionalProperties: false, required: ['run_id', 'employee_id', 'format', 'content_type', 'filename', 'net', 'content'],
    properties: {
      run_id: { type: 'string' },
      employee_id: { type: 'string' },
      format: { enum: ['html', 'pdf'] },
      content_type: { enum: ['text/html; charset=utf-8', 'application/pdf'] },
      filename: { type: 'string' },
      net: { type: 'integer' },
      /** The HTML page, or the PDF in base64. */
      content: { type: 'string' },
    },
  } as const,
  async handler(input, ctx) {
    const run = await loadRun(ctx, input.run_id);
    const slip = run.payslips.find((p) => p.employee_id === input.employee_id);
    if (!slip) throw new CuadraError('not_found', `The payroll run of ${run.period.from}–${run.period.to} has no payslip for employee ${input.employee_id}.`, { field: '/employee_id' });
    const employer = await requireEmployer(ctx.db, ctx.workspace);
    const html = payslipHtml(run, slip, { employer_costs: input.employer_costs ?? false, employer });
    const format = input.format ?? 'html';
    const base = `desprendible-${run.period.from}-${run.period.to}-${slip.document.number}`;
    if (format === 'html') {
      return { run_id: run._id, employee_id: slip.employee_id, format, content_type: 'text/html; charset=utf-8' as const, filename: `${base}.html`, net: payslipNet(slip), content: html };
    }
    const pdf = await htmlToPdf(html);
    return { run_id: run._id, employee_id: slip.employee_id, format, content_type: 'application/pdf' as const, filename: `${base}.pdf`, net: payslipNet(slip), content: pdf.toString('base64') };
  },
});
