import { defineModule } from '@cuadra/shared';
import { customerCredits } from '../models/customer-credit.ts';
import { invoices } from '../models/invoice.ts';
import { recentIndex } from '../models/recent.ts';
import { recurringInvoices } from '../models/recurring.ts';
import { pendingChanges, rollups } from '../models/rollup.ts';
import { RECEIVABLES_METRICS } from '../readouts/receivables.ts';
import { create } from '../tools/invoices/create.ts';
import { creditNote } from '../tools/invoices/credit_note.ts';
import { get } from '../tools/invoices/get.ts';
import { list } from '../tools/invoices/list.ts';
import { post } from '../tools/invoices/post.ts';
import { recurringCancel } from '../tools/invoices/recurring_cancel.ts';
import { recurringCreate } from '../tools/invoices/recurring_create.ts';
import { recurringList } from '../tools/invoices/recurring_list.ts';
import { recurringRun } from '../tools/invoices/recurring_run.ts';
import { render } from '../tools/invoices/render.ts';
import { send } from '../tools/invoices/send.ts';
import { update } from '../tools/invoices/update.ts';

/** Sales invoices and credit notes, recurring schedules, and the receivables read from them. */
export const invoicesModule = defineModule({
  name: 'invoices',
  tools: [create, update, post, creditNote, send, get, list, render, recurringCreate, recurringRun, recurringList, recurringCancel],
  models: [invoices, rollups, pendingChanges, recentIndex, customerCredits, recurringInvoices],
  listed: [{ model: invoices }],
  reads: {
    sources: { invoices: { field: 'invoicesRecords', module: 'invoices' } },
    metrics: Object.fromEntries(RECEIVABLES_METRICS.map((m) => [m, { field: 'receivablesMetric', module: 'invoices' }])),
    agenda: { receivables: { field: 'receivablesAgenda', module: 'invoices' }, recurring: { field: 'recurringAgenda', module: 'invoices' } },
  },
  readGuards: {
    'Query.invoice': 'invoices', 'Query.invoices': 'invoices', Invoice: 'invoices',
    'Query.receivablesMetric': 'invoices', 'Query.invoicesRecords': 'invoices', 'Query.receivablesAgenda': 'invoices', 'Query.recurringAgenda': 'invoices',
  },
});
