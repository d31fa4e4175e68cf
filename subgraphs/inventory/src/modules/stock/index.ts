import { defineModule } from '@cuadra/shared';
import { finishPendingEverywhere } from './ledger.ts';
import { financeDocumentsPull, staleHoldsRepairJob } from './finance_documents.ts';
import { inventoryJournal, inventoryJournalSinceSource } from './journal_feed.ts';
import { inventoryValueMetric } from './metrics.ts';
import { stockBalances, stockDays, stockItems, stockMovements } from './model.ts';
import { inventoryJournalSource, stockLevelsSource, stockMovementsSource } from './sources.ts';
import { adjust } from './tools/adjust.ts';
import { configureItem } from './tools/configure_item.ts';
import { deliver } from './tools/deliver.ts';
import { receive } from './tools/receive.ts';
import { release, reserve } from './tools/reserve.ts';
import { transfer } from './tools/transfer.ts';
import { writeDownTool } from './tools/write_down.ts';

/**
 * Stock: the append-only ledger per item and warehouse (ledger.ts), its valuation by weighted
 * average or FIFO (valuation.ts), levels and reservations, and the journal entries finance takes
 * in through the `inventory_journal` feed.
 */
export const stockModule = defineModule({
  name: 'stock',
  tools: [configureItem, receive, deliver, transfer, adjust, writeDownTool, reserve, release],
  models: [stockItems, stockBalances, stockMovements, stockDays, inventoryJournal],
  listed: [{ model: stockBalances }, { model: stockMovements }],
  reads: {
    sources: { stock_levels: stockLevelsSource, stock_movements: stockMovementsSource },
    // Read by finance through the graph only (ARCHITECTURE.md, "Inventory postings"); not a §2.5 source.
    feeds: { inventory_journal: inventoryJournalSource, inventory_journal_since: inventoryJournalSinceSource },
    metrics: { inventory_value: inventoryValueMetric },
  },
  maintenance: ({ db, now }) => finishPendingEverywhere(db, now),
  // Finance's posted invoices, bills and credit notes move stock (finance_documents.ts); never in a read.
  background: [financeDocumentsPull.job, staleHoldsRepairJob],
  // Finance's dry run of a vendor's credit note (its service assertion only, checked in the resolver).
  readGuards: { 'Query.previewStockForDocument': 'stock' },
});
