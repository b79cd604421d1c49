import { Connection, createConnection } from 'mongoose';

/** The driver's connection type, for code outside the adapters that only passes it along. */
export type MongoConnection = Connection;

/** Operations buffer until the server answers, so opening never blocks the caller. */
export function openMongoConnection(uri: string): MongoConnection {
  return createConnection(uri, { serverSelectionTimeoutMS: 10_000 });
}

/** The hosts of a connection string (`a:27017,b:27017`), without its user and password. */
export function mongoHosts(uri: string): string {
  const rest = uri.slice(uri.indexOf('//') + 2);
  const authority = rest.split(/[/?]/, 1)[0];
  return authority.slice(authority.lastIndexOf('@') + 1) || '(no host)';
}

/**
 * Resolves once the server answered, so the stores built on it find its database; an unreachable
 * server fails the boot with one message naming MongoDB and the host it tried.
 */
export async function connectMongo(connection: MongoConnection, uri: string): Promise<MongoConnection> {
  try {
    await connection.asPromise();
    return connection;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`MongoDB at ${mongoHosts(uri)} (MONGODB_URI) did not answer: ${reason}`);
  }
}

/** A write refused by a unique index (the server's E11000). */
export const isDuplicateKey = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 11000;

export async function pingMongo(connection: MongoConnection): Promise<void> {
  await connection.asPromise();
  await connection.db!.admin().ping();
}
