import mongoose, { type Connection } from 'mongoose';

/**
 * Opens one service's own database. Each service has its own connection and database
 * name; nothing here is shared between services.
 */
export async function connectDatabase(url: string, dbName: string): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS: 5_000,
    maxPoolSize: 20,
    autoIndex: true,
  });
  await connection.asPromise();
  return connection;
}

/** Pings the database; false when it does not answer within the driver's timeout. */
export async function databaseAnswers(connection: Connection): Promise<boolean> {
  try {
    if (connection.readyState !== 1 || !connection.db) return false;
    await connection.db.admin().ping();
    return true;
  } catch {
    return false;
  }
}
