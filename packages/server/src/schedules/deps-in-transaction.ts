import type { Database, Queryable } from '../db/connection.js';
import type { Deps } from '../deps.js';

let savepoints = 0;

/**
 * `deps` whose database is the open transaction `tx`: every query runs in it and each nested
 * `transaction()` becomes a savepoint, so code written for `deps.db` (the send path) commits or
 * rolls back with the caller's transaction. A nested failure rolls back to its savepoint only,
 * as a real transaction would have been rolled back on its own.
 */
export function depsInTransaction(deps: Deps, tx: Queryable): Deps {
  const db: Database = {
    engine: deps.db.engine,
    query: (text, params) => tx.query(text, params),
    async transaction(fn) {
      const name = `herald_sp_${++savepoints}`;
      await tx.query(`SAVEPOINT ${name}`);
      try {
        const result = await fn(tx);
        await tx.query(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw error;
      }
    },
    exec: () => Promise.reject(new Error('exec is not available inside a transaction')),
    listen: () => Promise.reject(new Error('listen is not available inside a transaction')),
    close: () => Promise.reject(new Error('close is not available inside a transaction')),
  };
  return { ...deps, db };
}
