import { configure as configureEinvoicing } from './einvoicing/configure.ts';
import { create as createInvoice } from './invoices/create.ts';
import { creditNote } from './invoices/credit_note.ts';
import { get as getInvoice } from './invoices/get.ts';
import { list as listInvoices } from './invoices/list.ts';
import { post as postInvoice } from './invoices/post.ts';
import { recurringCancel } from './invoices/recurring_cancel.ts';
import { recurringCreate } from './invoices/recurring_create.ts';
import { recurringList } from './invoices/recurring_list.ts';
import { recurringRun } from './invoices/recurring_run.ts';
import { render as renderInvoice } from './invoices/render.ts';
import { send as sendInvoice } from './invoices/send.ts';
import { update as updateInvoice } from './invoices/update.ts';
import { archive as archiveItem } from './items/archive.ts';
import { create as createItem } from './items/create.ts';
import { get as getItem } from './items/get.ts';
import { list as listItems } from './items/list.ts';
import { update as updateItem } from './items/update.ts';
import { list as listJournal } from './journal/list.ts';
import { get as getPayment } from './payments/get.ts';
import { list as listPayments } from './payments/list.ts';
import { register as registerPayment } from './payments/register.ts';
import { accept as acceptQuote } from './quotes/accept.ts';
import { convert as convertQuote } from './quotes/convert.ts';
import { create as createQuote } from './quotes/create.ts';
import { get as getQuote } from './quotes/get.ts';
import { list as listQuotes } from './quotes/list.ts';
import { send as sendQuote } from './quotes/send.ts';
import { convert as convertSalesOrder } from './sales_orders/convert.ts';
import { create as createSalesOrder } from './sales_orders/create.ts';
import { get as getSalesOrder } from './sales_orders/get.ts';
import { list as listSalesOrders } from './sales_orders/list.ts';

/** Every tool the invoices subgraph owns. */
export const tools = [
  createItem, getItem, listItems, updateItem, archiveItem,
  createInvoice, updateInvoice, postInvoice, creditNote, sendInvoice, getInvoice, listInvoices, renderInvoice,
  recurringCreate, recurringRun, recurringList, recurringCancel,
  registerPayment, getPayment, listPayments,
  createQuote, sendQuote, acceptQuote, convertQuote, getQuote, listQuotes,
  createSalesOrder, convertSalesOrder, getSalesOrder, listSalesOrders,
  configureEinvoicing, listJournal,
];

/** Tool modules the invoices (finance) subgraph owns (DOMAIN.md). */
export const modules = [
  'invoices', 'bills', 'quotes', 'sales_orders', 'purchase_orders', 'rentals', 'items', 'payments', 'payment_runs', 'bank',
  'accounts', 'journal', 'assets', 'inventory', 'documents', 'einvoicing', 'tax',
] as const;
