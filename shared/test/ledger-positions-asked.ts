// What a ledger read asks the store for (issue 33): the entry positions its finds on `ledger`
// spell out (each one a lookup on the store's side), from the driver's command monitoring — the
// test's own count, not the ledger's. A find that does not spell its positions out counts as
// infinitely many: it would be a walk of the collection.
import type { Connection } from 'mongoose';

/** Runs `read` and answers its result with the positions of the ledger it asked the store for (`db` opened with `monitorCommands`). */
export async function positionsAsked<T>(db: Connection, read: () => Promise<T>): Promise<{ result: T; asked: number }> {
  let asked = 0;
  const listen = (e: { commandName: string; command: Record<string, any> }) => {
    if (e.commandName !== 'find' || e.command.find !== 'ledger') return;
    const seq = e.command.filter?.seq;
    asked += Array.isArray(seq?.$in) ? seq.$in.length : Number.POSITIVE_INFINITY;
  };
  db.getClient().on('commandStarted', listen);
  try {
    return { result: await read(), asked };
  } finally {
    db.getClient().off('commandStarted', listen);
  }
}
