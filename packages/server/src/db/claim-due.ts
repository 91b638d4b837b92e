import type { Queryable } from './connection.js';

/**
 * Which rows of a job table are claimable. Table and column names come from code, never from
 * requests; `where` may refer to $1 (now).
 */
export interface ClaimTarget {
  table: string;
  /** Column holding the due time (next_attempt_at, next_run_at). */
  dueColumn: string;
  /** Extra condition on claimable rows, e.g. `status IN ('queued', 'sending')`. */
  where?: string;
  /** Extra assignments made while claiming, e.g. `status = 'sending'`. */
  set?: string;
  idColumn?: string;
  /** Columns returned for each claimed row (`job.<column>` each); every column when not given. */
  returning?: string[];
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  now: Date;
}

/**
 * Claims up to `limit` due rows whose lease is free or expired, and leases them until now + leaseMs.
 * Rows locked by another claimer are skipped, so concurrent claimers never get the same row; a row
 * whose holder died becomes claimable again once its lease expires.
 */
export async function claimDue<T = Record<string, any>>(
  db: Queryable,
  target: ClaimTarget,
  { limit, leaseMs, now }: ClaimOptions,
): Promise<T[]> {
  const id = target.idColumn ?? 'id';
  const table = target.table;
  const sql = `
    WITH due AS (
      SELECT ${id} FROM ${table}
      WHERE ${target.dueColumn} <= $1
        AND (locked_until IS NULL OR locked_until <= $1)
        ${target.where ? `AND (${target.where})` : ''}
      ORDER BY ${target.dueColumn}
      LIMIT $3
      FOR UPDATE SKIP LOCKED
    )
    UPDATE ${table} AS job
    SET locked_until = $2${target.set ? `, ${target.set}` : ''}
    FROM due
    WHERE job.${id} = due.${id}
    RETURNING ${target.returning ? target.returning.map((column) => `job.${column}`).join(', ') : 'job.*'}`;
  return db.query<T>(sql, [now, new Date(now.getTime() + leaseMs), limit]);
}
