import { CuadraError, defineTool, ID_SCHEMA } from '@cuadra/shared';
import { employees } from '../../employees/model.ts';
import { requireEmployer } from '../epayroll.ts';
import { payslipMailer, payslipMailings, STALE_CLAIM_MS } from '../mail.ts';
import { formatCop, htmlToPdf, payslipHtml } from '../payslip_document.ts';
import { loadRun, payslipNet } from '../runs.ts';

const RESULT = {
  type: 'object', additionalProperties: false, required: ['employee_id', 'name', 'to', 'status', 'error'],
  properties: {
    employee_id: { type: 'string' }, name: { type: 'string' }, to: { type: ['string', 'null'] },
    status: { enum: ['sent', 'already_sent', 'no_email', 'in_progress', 'failed'] },
    error: { type: ['string', 'null'] },
  },
} as const;

/**
 * E-mails each employee of a posted run their payslip (the page as the message, the PDF
 * attached). Each delivery is claimed before it leaves and marked after, so a retry sends only
 * what was not sent.
 */
export const sendPayslips = defineTool({
  name: 'payroll.send_payslips',
  description: 'E-mail every employee of a posted payroll run their payslip in Spanish, the PDF attached, to the e-mail on their employee record. Employees without e-mail are listed as no_email; payslips already sent are not sent again (calling twice is safe). Refused when e-mail (SMTP) is not configured, the run is not posted, or the employer\'s name and NIT are not set (payroll.employer_configure).',
  risk: 'external',
  input: { type: 'object', additionalProperties: false, required: ['run_id'], properties: { run_id: ID_SCHEMA } } as const,
  output: {
    type: 'object', additionalProperties: false, required: ['run_id', 'sent', 'results'],
    properties: { run_id: { type: 'string' }, sent: { type: 'integer' }, results: { type: 'array', items: RESULT } },
  } as const,
  async handler(input, ctx) {
    const run = await loadRun(ctx, input.run_id);
    if (run.status !== 'posted') throw new CuadraError('conflict', `The payroll run of ${run.period.from}–${run.period.to} is ${run.status}; payslips are sent once it is posted.`, { field: '/run_id' });
    const send = payslipMailer();
    if (!send) throw new CuadraError('unavailable', 'E-mail is not configured on this installation (SMTP_URL); payslips can be downloaded with payroll.payslip.', { beforeAnyEffect: true });
    // Every payslip names its employer: without one, nothing is sent.
    const employer = await requireEmployer(ctx.db, ctx.workspace);
    const ids = run.payslips.map((p) => p.employee_id);
    const people = new Map((await employees(ctx.db).find({ _id: { $in: ids }, workspace: ctx.workspace }, { email: 1 }).lean()).map((e) => [e._id, e.email]));
    const mailings = payslipMailings(ctx.db);
    const results = [];
    let sent = 0;
    for (const slip of run.payslips) {
      const to = people.get(slip.employee_id) ?? null;
      const base = { employee_id: slip.employee_id, name: slip.name, to };
      if (!to) { results.push({ ...base, status: 'no_email' as const, error: null }); continue; }
      const _id = `${run._id}:${slip.employee_id}`;
      const stale = new Date(ctx.now.getTime() - STALE_CLAIM_MS);
      let claimed = false;
      try {
        claimed = !!await mailings.findOneAndUpdate(
          { _id, workspace: ctx.workspace, $or: [{ status: 'failed' }, { status: 'sending', claimed_at: { $lt: stale } }] },
          { $set: { status: 'sending', to, claimed_at: ctx.now, error: null } },
          { returnDocument: 'after' },
        ).lean();
        if (!claimed) {
          await mailings.create({ _id, workspace: ctx.workspace, run_id: run._id, employee_id: slip.employee_id, to, status: 'sending', error: null, claimed_at: ctx.now, sent_at: null });
          claimed = true;
        }
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      if (!claimed) {
        const seen = await mailings.findOne({ _id, workspace: ctx.workspace }).lean();
        results.push({ ...base, status: seen?.status === 'sent' ? 'already_sent' as const : 'in_progress' as const, error: null });
        continue;
      }
      try {
        const html = payslipHtml(run, slip, { employer });
        const pdf = await htmlToPdf(html);
        await send({
          to,
          subject: `Desprendible de nómina ${run.period.from} a ${run.period.to}`,
          text: `Hola, ${slip.name}:\n\nAdjuntamos su desprendible de nómina del periodo ${run.period.from} a ${run.period.to}.\nNeto a pagar: ${formatCop(payslipNet(slip))}.\n`,
          html,
          attachment: { filename: `desprendible-${run.period.from}-${run.period.to}-${slip.document.number}.pdf`, content: pdf },
        });
        await mailings.updateOne({ _id, workspace: ctx.workspace }, { $set: { status: 'sent', sent_at: new Date() } });
        sent += 1;
        results.push({ ...base, status: 'sent' as const, error: null });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        await mailings.updateOne({ _id, workspace: ctx.workspace }, { $set: { status: 'failed', error: message } });
        ctx.log.warn({ err, run: run._id, employee: slip.employee_id }, 'payslip mail failed');
        results.push({ ...base, status: 'failed' as const, error: message });
      }
    }
    return { run_id: run._id, sent, results };
  },
});
