import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { listenPostgres } from './listen-postgres.js';
import { INT8, NUMERIC, parseNumber } from './number-parsers.js';
import type { PgliteReply, PgliteRequest, SerializedDbError } from './pglite-messages.js';

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


/**
 * Starts the embedded database's thread. Built code runs pglite-thread.js; code run through tsx
 * (tests, benchmarks) runs pglite-thread.ts, registering tsx in the thread first (a thread does not
 * inherit the loader its parent was started with).
 */
function startPgliteThread(dataDir: string | undefined): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./pglite-thread.js', import.meta.url), { workerData: { dataDir } });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const thread = JSON.stringify(new URL('./pglite-thread.ts', import.meta.url).href);
  return new Worker(`import(${tsx}).then(({ register }) => { register(); return import(${thread}); })`, { eval: true, workerData: { dataDir } });
}

/** An error of the embedded database, with the fields PostgreSQL reports (`code`, `constraint`, ...). */
function databaseError(serialized: SerializedDbError): Error {
  const { message, ...fields } = serialized;
  return Object.assign(new Error(message), fields);
}

/**
 * PGlite, run in a thread of its own (pglite-thread.ts): a query takes the database's CPU time in
 * that thread, as PostgreSQL's takes it in its own processes, and the server's event loop only
 * posts the query and reads the rows. Parameters and rows cross by structured clone, which keeps
 * Date, Uint8Array, arrays and plain objects as they are.
 */
export async function openPglite(dataDir: string | undefined): Promise<Database> {
  const worker = startPgliteThread(dataDir);
  const pending = new Map<number, { resolve(rows: any[]): void; reject(error: Error): void }>();
  const notifications = new Map<number, (payload: string) => void>();
  let nextId = 1;
  let stopped: Error | undefined;
  let ready: { resolve(): void; reject(error: Error): void } | undefined;
  const started = new Promise<void>((resolve, reject) => (ready = { resolve, reject }));

  const stop = (error: Error) => {
    stopped ??= error;
    ready?.reject(error);
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  };
  worker.on('message', (message: PgliteReply) => {
    if ('notify' in message) return notifications.get(message.notify)?.(message.payload);
    if ('ready' in message) {
      if (message.ready) ready?.resolve();
      else ready?.reject(databaseError(message.error!));
      ready = undefined;
      return;
    }
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    // Only a call in flight keeps the process alive, as a socket to PostgreSQL would.
    if (pending.size === 0) worker.unref();
    if (message.error) call.reject(databaseError(message.error));
    else call.resolve(message.rows ?? []);
  });
  worker.on('error', (error) => stop(new Error(`the embedded database stopped: ${error.message}`)));
  worker.on('exit', (code) => stop(new Error(`the embedded database stopped (thread exit code ${code})`)));

  // The message's id is assigned here; `op` and its fields come from the caller.
  const call = <T = any>(message: DistributiveOmit<PgliteRequest, 'id'>): Promise<T[]> => {
    if (stopped) return Promise.reject(stopped);
    const id = nextId++;
    return new Promise<T[]>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ ...message, id });
      } catch (error) {
        // A parameter that cannot be cloned (a function, a class with private state) fails here.
        pending.delete(id);
        if (pending.size === 0) worker.unref();
        reject(error as Error);
      }
    });
  };

  try {
    await started;
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.unref();
  return {
    engine: 'pglite',
    query: (text, params) => call({ op: 'query', text, params }),
    async transaction(fn) {
      // A transaction is known by the id of the message that began it.
      const tx = nextId;
      await call({ op: 'begin' });
      let result;
      try {
        result = await fn({ query: (text, params) => call({ op: 'query', text, params, tx }) });
      } catch (error) {
        await call({ op: 'end', tx, commit: false }).catch(() => {});
        throw error;
      }
      await call({ op: 'end', tx, commit: true });
      return result;
    },
    async exec(sql) {
      await call({ op: 'exec', sql });
    },
    async listen(channel, onNotify) {
      // Notifications carry the id of the message that started listening.
      const listener = nextId;
      notifications.set(listener, onNotify);
      await call({ op: 'listen', channel });
      return async () => {
        notifications.delete(listener);
        await call({ op: 'unlisten', listener });
      };
    },
    async close() {
      if (!stopped) await call({ op: 'close' });
      stop(new Error('the embedded database is closed'));
      await worker.terminate();
    },
  };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

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

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03']);

/** True when an error means the database cannot be reached right now (as opposed to a bad query). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message } = error as { code?: string; message?: string };
  if (code && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/i.test(
    message ?? '',
  );
}
