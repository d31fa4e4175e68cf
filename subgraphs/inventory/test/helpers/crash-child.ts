import { connectDatabase } from '@cuadra/shared';
import { writeMovement } from '../../src/modules/stock/ledger.ts';
import { inventoryJournal } from '../../src/modules/stock/journal_feed.ts';
import { stockMovements, type BalanceDoc } from '../../src/modules/stock/model.ts';

/*
 * A process that writes one delivery and dies by SIGKILL at a chosen point of it (crash-points.test.ts):
 * `movement` — after the balance's conditional update committed it, as its movement document is inserted;
 * `feed` — after the movement document, as its journal entry goes into the feed.
 * argv: mongo url, database, balance id, workspace, crash point, source id.
 */
const [url, name, balance, workspace, point, sourceId] = process.argv.slice(2);
const db = await connectDatabase(url!, name!);
const die = async (): Promise<never> => {
  process.kill(process.pid, 'SIGKILL');
  return new Promise<never>(() => undefined);
};
if (point === 'movement') stockMovements(db).create = die as never;
if (point === 'feed') inventoryJournal(db).create = die as never;
await writeMovement(db, undefined, { _id: balance!, workspace: workspace! } as Pick<BalanceDoc, '_id' | 'workspace'>, {
  type: 'delivery', date: '2026-11-20', qty: -2_000_000, source: { kind: 'invoice', id: sourceId!, line: 1 }, reason: null,
  id: `mv_${sourceId}`,
}, { now: new Date(), dryRun: false, skipOpenCheck: true });
// Not reached when the crash point was hit.
process.exit(3);
