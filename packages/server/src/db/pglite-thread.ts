/**
 * The thread that owns the embedded database. PGlite is PostgreSQL compiled to WebAssembly: a
 * query runs to completion in the thread that calls it, so in the server's own thread every
 * query (and every request-log write) held the event loop. Here it runs beside the server, as
 * PostgreSQL's own processes do, and the server only posts messages (connection.ts, openPglite).
 */
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { parentPort, workerData } from 'node:worker_threads';
import { INT8, NUMERIC, parseNumber } from './number-parsers.js';
import { ERROR_FIELDS, type PgliteReply, type PgliteRequest, type SerializedDbError } from './pglite-messages.js';

const port = parentPort!;
const { dataDir } = workerData as { dataDir: string | undefined };

function serializeError(error: unknown): SerializedDbError {
  if (!(error instanceof Error)) return { message: String(error) };
  const out: SerializedDbError = { message: error.message };
  for (const field of ERROR_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field];
    if (typeof value === 'string') out[field] = value;
  }
  return out;
}

/** An open transaction: its handle, how the main thread ends it, and how it ended. */
interface OpenTransaction {
  tx: Transaction;
  end(commit: boolean): void;
  finished: Promise<void>;
}

// Options go in one object: `new PGlite(undefined, options)` (in memory) drops the options.
const db = new PGlite({ dataDir, parsers: { [INT8]: parseNumber, [NUMERIC]: parseNumber } });
const transactions = new Map<number, OpenTransaction>();
const listeners = new Map<number, () => Promise<void>>();
/** Thrown into PGlite's transaction to make it roll back. */
const ROLLBACK = Symbol('rollback');

const reply = (message: PgliteReply) => port.postMessage(message);
const settle = (id: number, work: Promise<unknown>) =>
  work.then(
    (rows) => reply({ id, rows: rows as unknown[] | undefined }),
    (error) => reply({ id, error: serializeError(error) }),
  );

/** Opens a transaction and answers once inside it; it stays open until an `end` message. */
function begin(id: number) {
  let opened = false;
  const finished = db.transaction(
    (tx) =>
      new Promise<void>((resolve, reject) => {
        opened = true;
        transactions.set(id, { tx, end: (commit) => (commit ? resolve() : reject(ROLLBACK)), finished });
        reply({ id });
      }),
  );
  // Failing to begin (the database closed) is answered here; a begun transaction's outcome goes
  // to the message that ends it.
  finished.catch((error) => {
    if (!opened) reply({ id, error: serializeError(error) });
  });
}

port.on('message', (message: PgliteRequest) => {
  switch (message.op) {
    case 'query': {
      const target = message.tx === undefined ? db : transactions.get(message.tx)?.tx;
      if (!target) return reply({ id: message.id, error: { message: 'the transaction has already ended' } });
      return void settle(
        message.id,
        target.query(message.text, message.params).then((result) => result.rows),
      );
    }
    case 'exec':
      return void settle(message.id, db.exec(message.sql).then(() => undefined));
    case 'begin':
      return begin(message.id);
    case 'end': {
      const open = transactions.get(message.tx);
      transactions.delete(message.tx);
      if (!open) return reply({ id: message.id });
      open.end(message.commit);
      // Answered once PGlite ran COMMIT (whose failure the caller must see) or ROLLBACK.
      const outcome = message.commit ? open.finished : open.finished.catch(() => undefined);
      return void settle(message.id, outcome.then(() => undefined));
    }
    case 'listen': {
      const { id, channel } = message;
      return void settle(
        id,
        db
          .listen(channel, (payload) => reply({ notify: id, payload }))
          .then((stop) => {
            listeners.set(id, stop);
            return undefined;
          }),
      );
    }
    case 'unlisten': {
      const stop = listeners.get(message.listener);
      listeners.delete(message.listener);
      return void settle(message.id, stop ? stop() : Promise.resolve());
    }
    case 'close':
      return void settle(message.id, db.close());
  }
});

void db.waitReady.then(
  () => reply({ ready: true }),
  (error) => reply({ ready: false, error: serializeError(error) }),
);
