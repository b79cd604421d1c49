import { Connection, createConnection } from 'mongoose';

/** The driver's connection type, for code outside the adapters that only passes it along. */
export type MongoConnection = Connection;

/** Operations buffer until the server answers, so opening never blocks the caller. */
export function openMongoConnection(uri: string): MongoConnection {
  return createConnection(uri, { serverSelectionTimeoutMS: 10_000 });
}

/** A write refused by a unique index (the server's E11000). */
export const isDuplicateKey = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 11000;

export async function pingMongo(connection: MongoConnection): Promise<void> {
  await connection.asPromise();
  await connection.db!.admin().ping();
}
