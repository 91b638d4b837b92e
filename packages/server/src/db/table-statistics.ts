import type { Logger } from 'pino';
import type { Queryable } from './connection.js';

/**
 * Keeps the planner's statistics of a busy job table fresh. A queue table changes shape fast (a
 * broadcast adds a million queued rows in seconds, a drain turns them all delivered), while
 * autovacuum analyzes it at best once a minute and PGlite never does. With statistics taken while
 * the queue was empty, PostgreSQL plans a claim as "read every due row, then sort" instead of
 * reading the first rows of the due index, and an outcome update as a scan of every queued row
 * instead of primary-key lookups: tens of milliseconds per batch instead of one or two.
 *
 * `busy()` is called by a loop that just found a full batch: it runs ANALYZE on the table, in the
 * background, at most once per `intervalMs` per process.
 */
export function tableStatistics(db: Queryable, table: string, log: Logger, intervalMs = 60_000): { busy(): void } {
  let last = -Infinity;
  let running = false;
  return {
    busy() {
      const now = performance.now();
      if (running || now - last < intervalMs) return;
      last = now;
      running = true;
      db.query(`ANALYZE ${table}`)
        .catch((error: unknown) => log.debug({ err: error, table }, 'could not refresh table statistics'))
        .finally(() => {
          running = false;
        });
    },
  };
}
