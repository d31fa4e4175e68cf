import { create as createInvoice } from './invoices/create.ts';
import { get as getInvoice } from './invoices/get.ts';
import { list as listInvoices } from './invoices/list.ts';
import { create as createItem } from './items/create.ts';
import { list as listItems } from './items/list.ts';

/** Every tool the invoices subgraph owns. */
export const tools = [createItem, listItems, createInvoice, getInvoice, listInvoices];

/** Tool modules the invoices (finance) subgraph owns (DOMAIN.md). */
export const modules = [
  'invoices', 'bills', 'quotes', 'sales_orders', 'purchase_orders', 'rentals', 'items', 'payments', 'payment_runs', 'bank',
  'accounts', 'journal', 'assets', 'inventory', 'documents', 'einvoicing', 'tax',
] as const;
