import type { Logger } from 'pino';
import type { Queryable } from './connection.js';

export interface TableStatisticsOptions {
  /** A busy table is analyzed at least this often (60 s). */
  intervalMs?: number;
  /** Between those, how often a busy table's count of changed rows is looked at (1 s). */
  checkMs?: number;
}

/**
 * Keeps the planner's statistics of a busy job table fresh. A queue table changes shape fast (a
 * broadcast adds a million queued rows in seconds, a drain turns them all delivered), while
 * autovacuum analyzes it at best once a minute and PGlite never does. With statistics taken while
 * the queue was empty, PostgreSQL plans a claim as "read every due row, then sort" instead of
 * reading the first rows of the due index, and an outcome update as a scan of every queued row
 * instead of primary-key lookups: tens of milliseconds per batch instead of one or two.
 *
 * `busy()` is called by a loop that just found a full batch. In the background, it runs ANALYZE
 * on the table once every `intervalMs`, and sooner when PostgreSQL's count of rows changed since
 * the last ANALYZE (checked at most every `checkMs`) exceeds a fifth of the rows the statistics
 * describe: the rule autovacuum applies, without its wait. PGlite keeps no such count, so there
 * only the interval applies.
 */
export function tableStatistics(db: Queryable, table: string, log: Logger, options: TableStatisticsOptions = {}): { busy(): void } {
  const intervalMs = options.intervalMs ?? 60_000;
  const checkMs = options.checkMs ?? 1000;
  let lastAnalyze = -Infinity;
  let lastCheck = -Infinity;
  let running = false;

  async function refresh(due: boolean): Promise<void> {
    if (!due) {
      const [row] = await db.query<{ stale: boolean }>(
        `SELECT s.n_mod_since_analyze > 1000 + 0.2 * greatest(c.reltuples, 0) AS stale
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relid = $1::regclass`,
        [table],
      );
      if (!row?.stale) return;
    }
    lastAnalyze = performance.now();
    await db.query(`ANALYZE ${table}`);
  }

  return {
    busy() {
      const now = performance.now();
      if (running || now - lastCheck < checkMs) return;
      lastCheck = now;
      running = true;
      refresh(now - lastAnalyze >= intervalMs)
        .catch((error: unknown) => log.debug({ err: error, table }, 'could not refresh table statistics'))
        .finally(() => {
          running = false;
        });
    },
  };
}
