import { PGlite } from '@electric-sql/pglite';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { listenPostgres } from './listen-postgres.js';

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

export const MAX_PREPARED = 1000;

/**
 * Names queries so that each PostgreSQL connection parses and plans a statement once and then
 * only binds and executes it. The name is a digest of the text (equal texts share it, and pg
 * refuses one name for two texts). Only the first MAX_PREPARED distinct texts are named, so SQL
 * built at run time can never pile up prepared statements on the server.
 */
export function statementNamer(): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED) {
      name = `h${createHash('sha1').update(text).digest('base64url')}`;
      names.set(text, name);
    }
    return name;
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
  const listeners = new Set<() => Promise<void>>();
  const nameOf = statementNamer();
  // Statements without parameters (migrations, one-off DDL) are left unnamed.
  const statement = (text: string, params: unknown[] | undefined) => ({ text, values: params, name: params?.length ? nameOf(text) : undefined });
  return {
    engine: 'postgres',
    async query(text, params) {
      return (await pool.query(statement(text, params))).rows;
    },
    async transaction(fn) {
      const client = await pool.connect();
      let broken = false;
      // The pool stops listening for a client's errors while it is checked out, and pg emits
      // 'error' when the connection drops (a database restart): unheard, that kills the process.
      // The query in progress fails on its own; the client is discarded on release.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn({ query: async (text, params) => (await client.query(statement(text, params))).rows });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async listen(channel, onNotify) {
      const stop = await listenPostgres(pool, channel, onNotify);
      listeners.add(stop);
      return async () => {
        listeners.delete(stop);
        await stop();
      };
    },
    async close() {
      const stops = [...listeners];
      listeners.clear();
      await Promise.all(stops.map((stop) => stop()));
      await pool.end();
    },
  };
}

/**
 * True when PostgreSQL refused a value a client sent that no text or jsonb column can hold: the NUL
 * character (22021 in text, 22P05 as `\u0000` in jsonb). Every string of a request can carry one,
 * so the refusal is the client's error (400), whichever statement met it first.
 */
export function isUnstorableText(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
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
