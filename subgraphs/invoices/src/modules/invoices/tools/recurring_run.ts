import { defineTool, type ToolContext } from '@cuadra/shared';
import { issueInvoiceOnce } from '../issue.ts';
import { nextPeriod, recurringInvoices, type RecurringDoc } from '../recurring.ts';
import { addDays } from '../../../lib/money.ts';
import { assertNotAfterToday, documentToday } from '../../../lib/document-dates.ts';

/** Most periods one run issues, so a schedule left alone for years cannot make one call unbounded. */
const MAX_PER_RUN = 100;

/** The invoice id of one period of a schedule: the same on every retry. */
export function periodInvoiceId(schedule: string, date: string): string {
  return `inv_r${schedule.slice(4)}_${date.replaceAll('-', '')}`;
}

function issuePeriod(ctx: ToolContext, r: RecurringDoc, date: string): Promise<string> {
  return issueInvoiceOnce(ctx, {
    id: periodInvoiceId(r._id, date), customer_id: r.customer_id, customer: r.customer, currency: r.currency, issue_date: date, due_date: addDays(date, r.due_days),
    lines: r.lines, withholdings: r.withholdings, notes: r.notes, source: { recurring_id: r._id, ...(r.subscription_id ? { subscription_id: r.subscription_id } : {}) }, post: r.post,
  });
}

/**
 * Issues every period that has come due (next_date ≤ as_of) of the workspace's active schedules.
 * Each period: the invoice (id derived from schedule + date, so it exists at most once), then the
 * schedule moves to the next date by a conditional update on the date it had.
 */
export const recurringRun = defineTool({
  name: 'invoices.recurring_run',
  description: 'Issue the invoices of recurring schedules that have come due up to as_of (default today, never later: an invoice is not dated in the future): one invoice per schedule and period, never twice, posted when the schedule says so.',
  risk: 'write',
  input: { type: 'object', additionalProperties: false, properties: { as_of: { type: 'string', format: 'date' } } },
  output: {
    type: 'object', additionalProperties: false, required: ['as_of', 'issued'],
    properties: {
      as_of: { type: 'string', format: 'date' },
      issued: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false, required: ['recurring_id', 'invoice_id', 'date'],
          properties: { recurring_id: { type: 'string' }, invoice_id: { type: 'string' }, date: { type: 'string', format: 'date' } },
        },
      },
    },
  },
  async handler(input, ctx) {
    const asOf = input.as_of ?? documentToday(ctx);
    // Each period's invoice is dated its period's day: a run ahead of today would issue future-dated invoices.
    assertNotAfterToday(ctx, asOf, '/as_of');
    const due = await recurringInvoices(ctx.db).find({ workspace: ctx.workspace, status: 'active', next_date: { $lte: asOf } }).limit(MAX_PER_RUN).lean();
    const issued: { recurring_id: string; invoice_id: string; date: string }[] = [];
    for (const schedule of due) {
      let r: RecurringDoc | null = schedule;
      while (r && r.status === 'active' && r.next_date <= asOf && issued.length < MAX_PER_RUN) {
        if (r.end_date && r.next_date > r.end_date) {
          await recurringInvoices(ctx.db).updateOne({ _id: r._id, next_date: r.next_date }, { $set: { status: 'ended', updated_at: ctx.now } });
          break;
        }
        const date: string = r.next_date;
        const invoiceId = await issuePeriod(ctx, r, date);
        const next = nextPeriod(date, r.interval, r.every, r.anchor_day);
        const ended: boolean = r.end_date !== null && next > r.end_date;
        r = await recurringInvoices(ctx.db).findOneAndUpdate(
          // Only while active: a schedule suspended meanwhile (dunning) stays suspended, its period re-used by id on resumption.
          { _id: r._id, next_date: date, status: 'active' },
          { $set: { next_date: next, status: ended ? 'ended' : 'active', updated_at: ctx.now }, $inc: { issued: 1 } },
          { returnDocument: 'after' },
        ).lean();
        // Reported by the run that moved the schedule past the period: a run that lost the race (another
        // run or replica moved it first) made nothing new, and reporting it would count the period twice.
        if (r) issued.push({ recurring_id: schedule._id, invoice_id: invoiceId, date });
      }
    }
    return { as_of: asOf, issued };
  },
});
