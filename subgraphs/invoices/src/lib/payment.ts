import { PAYMENT_FORMS } from '@cuadra/shared/dian';
import type { FiscalDocument } from './fiscal-document.ts';
import type { SettingsDoc } from './settings.ts';

/**
 * How a document is paid, as DIAN's cac:PaymentMeans and the representation state it: the form
 * (list 13.3.4.1: 1 contado when due the day it is issued, 2 crédito when due later, with its due
 * date) and the means (list 13.3.4.2): the document's own, else the workspace's default, else 1
 * ("instrumento no definido").
 */
export function paymentOf(doc: Pick<FiscalDocument, 'issue_date' | 'due_date' | 'payment_means'>, s: Pick<SettingsDoc, 'payment_means'> | null): { form: '1' | '2'; means: string } {
  return {
    form: doc.due_date > doc.issue_date ? PAYMENT_FORMS.credit : PAYMENT_FORMS.cash,
    means: doc.payment_means ?? s?.payment_means ?? '1',
  };
}
