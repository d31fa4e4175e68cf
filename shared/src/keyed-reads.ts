import type { Connection } from 'mongoose';

/**
 * Documents read by a unique key (`_id`, `pos_key`…), together: every read asked for in the same
 * turn of the event loop on the same connection, collection, key field and projection is answered
 * by one `{<field>: {$in}}` pass (400 keys a command, the commands sent together). A dashboard's reads reach a subgraph as one
 * operation and its fields ask at once — the same list counter, the same bucket of positions, the
 * day documents of two agenda windows — so a dozen commands become one or two.
 *
 * Each caller gets only the documents of its own keys (strings), once each, in the order of its
 * keys; the keys are the caller's (they name the workspace, or the caller checks the workspace of
 * what it reads), so nothing another read asked for is handed out. A document two reads of a batch
 * both asked for goes to the first as read and to the others as a shallow copy, so a caller that
 * sets or deletes a field of what it got does not change another's. A failed command fails every
 * read of its batch.
 */

/** Keys a command asks for at most. */
const KEYS_PER_COMMAND = 400;

interface Found { doc: Record<string, unknown>; taken: boolean }
interface Batch { keys: Set<string>; done: Promise<Map<unknown, Found>> }
const open = new WeakMap<Connection, Map<string, Batch>>();

export async function readByKeys<D>(db: Connection, collection: string, field: string, keys: readonly string[], projection?: Record<string, 0 | 1>): Promise<D[]> {
  if (keys.length === 0) return [];
  let batches = open.get(db);
  if (!batches) open.set(db, (batches = new Map()));
  const id = `${collection}\u0000${field}\u0000${projection ? JSON.stringify(projection) : ''}`;
  let batch = batches.get(id);
  if (!batch) {
    const asking = new Set<string>();
    const all = batches;
    const done = new Promise<void>((resolve) => process.nextTick(resolve)).then(async () => {
      all.delete(id);
      const asked = [...asking];
      const coll = db.collection(collection);
      const chunks: string[][] = [];
      for (let i = 0; i < asked.length; i += KEYS_PER_COMMAND) chunks.push(asked.slice(i, i + KEYS_PER_COMMAND));
      // The commands of a large batch go out together.
      const read = await Promise.all(chunks.map((chunk) => {
        const filter = { [field]: { $in: chunk } };
        return (projection ? coll.find(filter, { projection }) : coll.find(filter)).toArray();
      }));
      const found = new Map<unknown, Found>();
      for (const docs of read) for (const doc of docs) found.set(doc[field], { doc, taken: false });
      return found;
    });
    batches.set(id, (batch = { keys: asking, done }));
  }
  for (const k of keys) batch.keys.add(k);
  const found = await batch.done;
  const out: D[] = [];
  for (const k of new Set(keys)) {
    const f = found.get(k);
    if (!f) continue;
    out.push((f.taken ? { ...f.doc } : f.doc) as D);
    f.taken = true;
  }
  return out;
}
