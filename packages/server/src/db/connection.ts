import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Anything that runs SQL: the database itself or one transaction on it. */
export interface Queryable {
  query<T = Record<string, any>>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface Database extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script (migrations); no parameters. */
  exec(sql: string): Promise<void>;
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const INT8 = 20;
const NUMERIC = 1700;

// Both engines answer with the same JS types: int8 and numeric as numbers, timestamps as Date.
const parseNumber = (value: string) => Number(value);

export async function openPglite(dataDir: string | undefined): Promise<Database> {
  const db = new PGlite(dataDir, { parsers: { [INT8]: parseNumber, [NUMERIC]: parseNumber } });
  await db.waitReady;
  return {
    engine: 'pglite',
    async query(text, params) {
      return (await db.query<any>(text, params)).rows;
    },
    async transaction(fn) {
      return db.transaction((tx) => fn({ query: async (text, params) => (await tx.query<any>(text, params)).rows }));
    },
    async exec(sql) {
      await db.exec(sql);
    },
    async listen(channel, onNotify) {
      return db.listen(channel, onNotify);
    },
    async close() {
      await db.close();
    },
  };
}

export interface PostgresOptions {
  url: string;
  max?: number;
  connectionTimeoutMs?: number;
}

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const types = {
    getTypeParser(oid: number, format?: any) {
      if (oid === INT8 || oid === NUMERIC) return parseNumber;
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    types: types as pg.CustomTypesConfig,
  });
  // An idle client losing its server (a PostgreSQL restart) must not crash the process.
  pool.on('error', () => {});
  const listeners: pg.PoolClient[] = [];
  return {
    engine: 'postgres',
    async query(text, params) {
      return (await pool.query(text, params as unknown[])).rows;
    },
    async transaction(fn) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn({ query: async (text, params) => (await client.query(text, params as unknown[])).rows });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async listen(channel, onNotify) {
      const client = await pool.connect();
      listeners.push(client);
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      client.on('error', () => {});
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => {});
        client.release();
        listeners.splice(listeners.indexOf(client), 1);
      };
    },
    async close() {
      for (const client of listeners.splice(0)) client.release(true);
      await pool.end();
    },
  };
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03']);

/** True when an error means the database cannot be reached right now (as opposed to a bad query). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message } = error as { code?: string; message?: string };
  if (code && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/i.test(
    message ?? '',
  );
}
