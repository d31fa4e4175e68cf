import { fromModules } from '@cuadra/shared';
import { billsModule } from './bills/index.ts';
import { einvoicingModule } from './einvoicing.ts';
import { invoicesModule } from './invoices.ts';
import { itemsModule } from './items.ts';
import { journalModule } from './journal.ts';
import { paymentsModule } from './payments.ts';
import { quotesModule } from './quotes.ts';
import { salesOrdersModule } from './sales_orders.ts';

/** The invoices (finance) subgraph: its built modules, then those DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules(
  'invoices', [itemsModule, invoicesModule, paymentsModule, quotesModule, salesOrdersModule, einvoicingModule, journalModule, billsModule],
  ['purchase_orders', 'rentals', 'payment_runs', 'bank', 'accounts', 'assets', 'inventory', 'documents', 'tax'],
);
