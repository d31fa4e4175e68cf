import { peerGraph, type BackgroundJob, type Logger, type PeerConfig } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import { pullInventoryEntries } from '../../accounting/inventory_pull.ts';
import { items } from '../items/model.ts';

/** How often the pull runs (`INVOICES_INVENTORY_PULL_INTERVAL_MS`, default 2 s): the shortest wait of a workspace moving stock. */
const EVERY_MS = Number(process.env.INVOICES_INVENTORY_PULL_INTERVAL_MS) > 0 ? Number(process.env.INVOICES_INVENTORY_PULL_INTERVAL_MS) : 2_000;
/** The longest a workspace with stocked items and nothing new waits between two pulls. */
const MAX_IDLE_MS = 5 * 60_000;
/** How long a workspace stays woken (pulled on every pass) after inventory asked about it. */
const WOKEN_MS = 10_000;

/** Workspaces inventory is moving stock in, until when (this process's memory: a hint, never the record). */
const woken = new Map<string, number>();
/** Per workspace: when it is next due, and its current wait (doubled by every pull that finds nothing). */
const due = new Map<string, { at: number; wait: number }>();

/**
 * Inventory asks finance's closed periods before every movement it writes (inventory ledger.ts):
 * the hint that the workspace's feed is about to grow. Its workspace is pulled on every pass for
 * the next {@link WOKEN_MS}; without hints (another finance instance took them, or this one
 * restarted) a workspace is still pulled, less often the longer it has nothing new.
 */
export function wakeInventoryPull(workspace: string, now = Date.now()): void {
  if (woken.size >= 10_000) woken.clear();
  woken.set(workspace, now + WOKEN_MS);
  due.delete(workspace);
}

/**
 * One pass: every workspace with items of kind product (the only ones inventory stocks) or woken,
 * that is due, pulls inventory's journal feed into its books (accounting/inventory_pull.ts).
 * @returns how many entries it wrote
 */
export async function pullInventoryEverywhere(db: Connection, peers: PeerConfig | undefined, log: Logger, now: Date): Promise<number> {
  if (!peers?.urls.inventory) return 0;
  const t = now.getTime();
  const stocked = (await items(db).distinct('workspace', { kind: 'product' })) as string[];
  for (const [ws, until] of woken) if (until < t) woken.delete(ws);
  let written = 0;
  for (const workspace of new Set([...woken.keys(), ...stocked])) {
    const state = due.get(workspace);
    if (!woken.has(workspace) && state && state.at > t) continue;
    const r = await pullInventoryEntries(db, workspace, peerGraph('invoices', peers, workspace), now, log);
    written += r.written.length;
    const wait = r.written.length > 0 || !state ? EVERY_MS : Math.min(MAX_IDLE_MS, state.wait * 2);
    due.set(workspace, { at: t + wait, wait });
  }
  if (due.size > 100_000) due.clear();
  return written;
}

/** The background pull of inventory's journal entries (never in a read: reads never write). */
export const inventoryPullJob: BackgroundJob = {
  name: 'inventory journal pull',
  everyMs: EVERY_MS,
  async run(db, now, log, peers) {
    await pullInventoryEverywhere(db, peers, log, now);
  },
};
