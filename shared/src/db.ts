import { probeEnabled } from './probe.ts';
import mongoose, { type Connection, type Model, type Schema } from 'mongoose';

/**
 * Opens one service's own database. Each service has its own connection and database
 * name; nothing here is shared between services.
 */
export async function connectDatabase(url: string, dbName: string, options: { monitorCommands?: boolean } = {}): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS: 5_000,
    maxPoolSize: 20,
    // Collections and indexes are made by ensureModel at start-up, where a race between
    // services starting together is retried instead of failing one of them.
    autoIndex: false,
    autoCreate: false,
    // The bench's probe counts commands (shared/src/probe.ts); off otherwise, and off when the
    // bench measures without it (CUADRA_PROBE_MONGO=0: command monitoring copies every command).
    // Tests that must see every command (reads never write) ask for it themselves.
    ...((probeEnabled() && process.env.CUADRA_PROBE_MONGO !== '0') || options.monitorCommands ? { monitorCommands: true } : {}),
  });
  await connection.asPromise();
  return connection;
}

/** Pings the database; false when it does not answer within the driver's timeout. */
export async function databaseAnswers(connection: Connection, timeoutMs = 2_000): Promise<boolean> {
  if (connection.readyState !== 1 || !connection.db) return false;
  // A ping answers even when the store can no longer write (a server whose storage failed keeps
  // its socket open): prove it with a real write and a read of what was written.
  const probe = async () => {
    const health = connection.db!.collection<{ _id: string; n: number; at: Date }>('health');
    const id = `probe:${process.pid}`;
    const at = new Date();
    await health.updateOne({ _id: id }, { $inc: { n: 1 }, $set: { at } }, { upsert: true });
    const back = await health.findOne({ _id: id });
    return back !== null && back.at.getTime() === at.getTime();
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([probe(), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); })]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** The model `name` on a connection, registered once (models are per connection, never global). */
export function modelOn<T>(db: Connection, name: string, schema: Schema<T>, collection: string): Model<T> {
  return (db.models[name] as Model<T> | undefined) ?? (db.model<T>(name, schema, collection) as unknown as Model<T>);
}

/**
 * Creates a model's collection and indexes, retrying when services starting at the same moment
 * race to create the same collection (mongo-java-server's H2 backend answers that race with a
 * generic "already existed" error where MongoDB answers NamespaceExists).
 */
export async function ensureModel(model: Model<any>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await model.createCollection().catch((err: { code?: number; message?: string }) => {
        if (err.code === 48 || /already exist/i.test(err.message ?? '')) return;
        throw err;
      });
      await model.createIndexes();
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1) + Math.random() * 100));
    }
  }
}
