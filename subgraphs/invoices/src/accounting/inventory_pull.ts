import type { PeerGraph } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { pullJournalFeed, type JournalFeed, type PullResult } from './feed_pull.ts';

/** The movement types whose entries inventory publishes (inventory stock/journal.ts: receipts and transfers post nothing). */
const KINDS = new Set(['delivery', 'return', 'purchase_return', 'adjustment', 'count', 'write_down', 'revaluation']);

/**
 * Inventory's feed (inventory stock/journal_feed.ts): cost of sales (6135 / 1435, 1499 released),
 * goods a customer returns (1435 / 6135), what goods sent back to a vendor carried apart from the
 * vendor's credit (1435 and 6135, 1499 released), count and adjustment differences (5295 / 1435, 1435 / 4250), write-downs to net realisable value
 * (5199 / 1499) and the revaluations a backdated movement causes, each under the journal source
 * `stock_movement` and the movement's id. The pull is feed_pull.ts's; it runs in the background
 * (journal module's `inventory journal pull`) and before a month is closed or after it is reopened,
 * never in a read.
 */
export const INVENTORY_FEED: JournalFeed = {
  subgraph: 'inventory',
  source: 'inventory_journal_since',
  marks: 'inventory_pull_marks',
  accepts: (r) => typeof r.movement_id === 'string' && /^[A-Za-z0-9_-]+$/.test(r.movement_id) && KINDS.has(r.kind),
  entrySource: (r) => ({ kind: 'stock_movement', id: r.movement_id as string }),
};

/** Pulls inventory's final journal entries into the workspace's journal (feed_pull.ts). Never throws for inventory's sake. */
export function pullInventoryEntries(db: Connection, workspace: string, graph: PeerGraph | undefined, now: Date, log?: { warn: (o: object, m: string) => void }): Promise<PullResult> {
  return pullJournalFeed(INVENTORY_FEED, db, workspace, graph, now, log);
}
