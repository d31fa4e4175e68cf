// What a ledger read asks the store for (issue 33): the entry positions its finds on `ledger` (or
// another collection keyed by `{workspace, seq}`, such as `ledger_checkpoints`) spell out — a
// `seq` given as a value is one lookup on the store's side, a `$in` one per value —, from the
// driver's command monitoring: the test's own count, not the ledger's. A find that does not spell
// its positions out counts as infinitely many: it would be a walk of the collection.
import type { Connection } from 'mongoose';

/** Runs `read` and answers its result with the positions of `collection` (default the ledger) it asked the store for, and its finds there (`db` opened with `monitorCommands`). */
export async function positionsAsked<T>(db: Connection, read: () => Promise<T>, collection = 'ledger'): Promise<{ result: T; asked: number; finds: number }> {
  let asked = 0;
  let finds = 0;
  const listen = (e: { commandName: string; command: Record<string, any> }) => {
    if (e.commandName !== 'find' || e.command.find !== collection) return;
    finds++;
    const seq = e.command.filter?.seq;
    asked += typeof seq === 'number' ? 1 : Array.isArray(seq?.$in) ? seq.$in.length : Number.POSITIVE_INFINITY;
  };
  db.getClient().on('commandStarted', listen);
  try {
    return { result: await read(), asked, finds };
  } finally {
    db.getClient().off('commandStarted', listen);
  }
}
