import { fromModules } from '@cuadra/shared';
import { accountsModule } from './accounts/index.ts';
import { assetsModule } from './assets/index.ts';
import { bankModule } from './bank/index.ts';
import { billsModule } from './bills/index.ts';
import { dimensionsModule } from './dimensions/index.ts';
import { documentsModule } from './documents/index.ts';
import { einvoicingModule } from './einvoicing/index.ts';
import { forecastsModule } from './forecasts/index.ts';
import { invoicesModule } from './invoices/index.ts';
import { itemsModule } from './items/index.ts';
import { journalModule } from './journal/index.ts';
import { paymentRunsModule } from './payment_runs/index.ts';
import { paymentsModule } from './payments/index.ts';
import { periodsModule } from './periods/index.ts';
import { plansModule } from './plans/index.ts';
import { purchaseOrdersModule } from './purchase_orders/index.ts';
import { quotesModule } from './quotes/index.ts';
import { rentalsModule } from './rentals/index.ts';
import { salesOrdersModule } from './sales_orders/index.ts';
import { taxModule } from './tax/index.ts';

/** The invoices (finance) subgraph: its built modules, then those DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules(
  'invoices', [itemsModule, invoicesModule, paymentsModule, quotesModule, salesOrdersModule, einvoicingModule, journalModule, billsModule, bankModule, paymentRunsModule, purchaseOrdersModule, accountsModule, periodsModule, documentsModule, dimensionsModule, forecastsModule, taxModule, assetsModule, rentalsModule, plansModule],
  ['inventory'],
);
