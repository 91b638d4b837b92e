import { openPglite, openPostgres, type Database } from '../../packages/server/src/db/connection.js';
import { freshSchema, onPostgres } from './gateway.js';

export interface EmptyDatabase {
  db: Database;
  /** The fresh schema's URL on PostgreSQL, for opening more connections to it. */
  url?: string;
  /** Closes the database and, on PostgreSQL, drops its schema. */
  dispose: () => Promise<void>;
}

/** An empty database on the engine under test: PGlite in memory, or a fresh PostgreSQL schema. */
export async function emptyDatabase(options: { max?: number } = {}): Promise<EmptyDatabase> {
  if (!onPostgres) {
    const db = await openPglite(undefined);
    return { db, dispose: () => db.close() };
  }
  const schema = await freshSchema();
  const db = await openPostgres({ url: schema.url, max: options.max ?? 2 });
  return {
    db,
    url: schema.url,
    dispose: async () => {
      await db.close();
      await schema.drop();
    },
  };
}

/** Runs `use` on an empty database (emptyDatabase), disposed of afterwards however `use` ends. */
export async function withEmptyDatabase<T>(use: (db: Database) => Promise<T>): Promise<T> {
  const { db, dispose } = await emptyDatabase();
  try {
    return await use(db);
  } finally {
    await dispose();
  }
}

/** The error pg throws when the connection drops mid-query: what a lost answer looks like. */
export const connectionLost = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
