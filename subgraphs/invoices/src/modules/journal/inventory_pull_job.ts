import { journalFeedPullJob } from '../../accounting/feed_pull.ts';
import { INVENTORY_FEED } from '../../accounting/inventory_pull.ts';
import { items } from '../items/model.ts';

/** How often the pull runs (`INVOICES_INVENTORY_PULL_INTERVAL_MS`, default 2 s): the shortest wait of a workspace moving stock. */
const EVERY_MS = Number(process.env.INVOICES_INVENTORY_PULL_INTERVAL_MS) > 0 ? Number(process.env.INVOICES_INVENTORY_PULL_INTERVAL_MS) : 2_000;

/**
 * The background pull of inventory's journal entries (accounting/inventory_pull.ts), over every
 * workspace with items of kind product (the only ones inventory stocks). Inventory asks finance's
 * closed periods before every movement it writes (inventory ledger.ts): the hint (`wake`) that the
 * workspace's feed is about to grow; without hints (another finance instance took them, or this
 * one restarted) a workspace is still pulled, less often the longer it has nothing new.
 */
export const inventoryPull = journalFeedPullJob(INVENTORY_FEED, {
  name: 'inventory journal pull',
  everyMs: EVERY_MS,
  known: async (db) => (await items(db).distinct('workspace', { kind: 'product' })) as string[],
});
