import { defineModule, searchTextsOf } from '@cuadra/shared';
import { billsMaintenance } from './maintenance.ts';
import { payablesLane } from './agenda.ts';
import { PAYABLES_METRICS } from './metrics.ts';
import { bills } from './model.ts';
import { billPayments } from './payments.ts';
import { billsSource } from './sources.ts';
import { billCreditMarkers } from './credit.ts';
import { create } from './tools/create.ts';
import { createFromAdSpend } from './tools/create_from_ad_spend.ts';
import { creditNote } from './tools/credit_note.ts';
import { get } from './tools/get.ts';
import { list } from './tools/list.ts';
import { pay } from './tools/pay.ts';
import { post } from './tools/post.ts';
import { update } from './tools/update.ts';
import { voidBill } from './tools/void.ts';

/** Vendors' bills, the payments made against them, and the payables read from them. */
export const billsModule = defineModule({
  name: 'bills',
  maintenance: billsMaintenance,
  journalSources: ['bill', 'bill_payment', 'bill_credit_note'],
  tools: [create, createFromAdSpend, update, post, get, list, voidBill, pay, creditNote],
  models: [bills, billPayments, billCreditMarkers],
  listed: [{ model: bills, searchable: searchTextsOf }, { model: billPayments, searchable: searchTextsOf }],
  reads: {
    sources: { bills: billsSource },
    metrics: PAYABLES_METRICS,
    agenda: { payables: payablesLane },
  },
  readGuards: { 'Query.billStatus': 'bills' },
});
