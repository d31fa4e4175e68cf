import { probeEnabled } from './probe.ts';
import mongoose, { type Connection, type Model, type Schema } from 'mongoose';

/**
 * How long the driver waits for a usable server before it gives up on an operation — only while
 * the server's state is not known (start-up); a server known down fails an operation at once
 * ({@link failFastWhileDown}).
 */
export const SERVER_SELECTION_TIMEOUT_MS = 5_000;

/**
 * How often the driver's monitor checks the server (the driver's default is 10 s): a server that
 * dies between operations is known down within this, and one that comes back is used again within
 * this, without any operation having to wait for it.
 */
export const HEARTBEAT_FREQUENCY_MS = 1_000;

/**
 * Thrown instead of an operation while the database server is known down: nothing was sent.
 * `storeUnreachable` (errors.ts) recognises it by name, so every surface answers `unavailable`
 * (or `outcome_unknown` for a call that had already written something).
 */
export class DatabaseKnownDownError extends Error {
  // A getter, not an own field: the driver copies an error's own enumerable fields onto the
  // MongoServerError it wraps it in (a bulk write), whose `name` has only a getter — an own `name`
  // here made that wrapping throw a TypeError, answered 500 `internal` instead of `unavailable`.
  override get name(): string {
    return 'DatabaseKnownDownError';
  }
}

/** The slice of the driver's topology that the fail-fast guard wraps (see {@link failFastWhileDown}). */
interface SelectingTopology { selectServer(...args: unknown[]): Promise<unknown> }
/** The public SDAM event the guard listens to: every server's type and last error. */
interface TopologyChange { newDescription: { servers: Map<string, { type: string; error: unknown }> } }

/**
 * Makes the connection fail at once while its server is known down (issue 31, finding 7), and
 * use it again by itself when it is back.
 *
 * Why: when the server dies, the driver marks it Unknown (the first operation's network error, or
 * a failed heartbeat) and clears the pool; every later operation then waits in server selection
 * for up to {@link SERVER_SELECTION_TIMEOUT_MS} — several times over for a call that makes several
 * operations — before the caller hears `unavailable`. The driver's own SDAM events say when every
 * server is Unknown *with an error* (down, as opposed to not yet discovered at start-up); while
 * that holds, server selection refuses at once with {@link DatabaseKnownDownError} instead of
 * joining the wait queue. The monitor's heartbeat ({@link HEARTBEAT_FREQUENCY_MS}) finds the
 * server again; the next topology change lifts the refusal.
 *
 * The driver has no public option for this; the one internal method used, the topology's
 * `selectServer`, is checked at connection time so a driver that renamed it fails start-up
 * loudly rather than silently losing the guarantee.
 */
function failFastWhileDown(connection: Connection): void {
  const client = connection.getClient() as unknown as { topology?: SelectingTopology; on(event: 'topologyDescriptionChanged', listener: (event: TopologyChange) => void): void };
  const topology = client.topology;
  if (!topology || typeof topology.selectServer !== 'function') throw new Error('connectDatabase: the MongoDB driver has no topology.selectServer to guard; see failFastWhileDown');
  let downSince: Date | null = null;
  client.on('topologyDescriptionChanged', ({ newDescription }) => {
    const servers = [...newDescription.servers.values()];
    const down = servers.length > 0 && servers.every((server) => server.type === 'Unknown' && server.error != null);
    downSince = down ? (downSince ?? new Date()) : null;
  });
  const select = topology.selectServer.bind(topology);
  topology.selectServer = (...args: unknown[]) => {
    if (downSince) return Promise.reject(new DatabaseKnownDownError(`The database server has not answered since ${downSince.toISOString()}; not waiting for it.`));
    return select(...args);
  };
}

/**
 * Opens one service's own database. Each service has its own connection and database
 * name; nothing here is shared between services.
 */
export async function connectDatabase(url: string, dbName: string, options: { monitorCommands?: boolean } = {}): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    heartbeatFrequencyMS: HEARTBEAT_FREQUENCY_MS,
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
  failFastWhileDown(connection);
  return connection;
}

/** Pings the database; false when it does not answer within the driver's timeout. */
export async function databaseAnswers(connection: Connection, timeoutMs = 2_000): Promise<boolean> {
  // A ping answers even when the store can no longer write (a server whose storage failed keeps
  // its socket open): prove it with a real write and a read of what was written.
  return answersWithin(connection, timeoutMs, async (db) => {
    const health = db.collection<{ _id: string; n: number; at: Date }>('health');
    const id = `probe:${process.pid}`;
    const at = new Date();
    await health.updateOne({ _id: id }, { $inc: { n: 1 }, $set: { at } }, { upsert: true });
    const back = await health.findOne({ _id: id });
    return back !== null && back.at.getTime() === at.getTime();
  });
}

/**
 * Whether `probe` succeeds on an open connection within `timeoutMs` — false when the connection is
 * not open, the probe throws, or it takes longer (readiness is polled: it never waits long).
 */
export async function answersWithin(connection: Connection, timeoutMs: number, probe: (db: NonNullable<Connection['db']>) => Promise<boolean>): Promise<boolean> {
  const db = connection.db;
  if (connection.readyState !== 1 || !db) return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([probe(db), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); })]);
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
