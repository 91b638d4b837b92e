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
  /** Claim by group (see claimDue): rows of one group are handed to one claimer at a time. */
  group?: ClaimGroup;
}

/**
 * Groups whose rows must be worked one claimer at a time (a webhook endpoint's deliveries). A
 * group with a row under a live lease is skipped; the others are taken oldest due row first, at
 * most `perGroup` rows each. Wants an index on (column, due column) and one on (column,
 * locked_until), both restricted like `where`.
 */
export interface ClaimGroup {
  column: string;
  perGroup: number;
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  now: Date;
  /** With `group`: rows of at most this many groups. */
  groups?: number;
}

/**
 * Claims up to `limit` due rows whose lease is free or expired, and leases them until now + leaseMs.
 * Rows locked by another claimer are skipped, so concurrent claimers never get the same row; a row
 * whose holder died becomes claimable again once its lease expires.
 */
export async function claimDue<T = Record<string, any>>(
  db: Queryable,
  target: ClaimTarget,
  { limit, leaseMs, now, groups }: ClaimOptions,
): Promise<T[]> {
  const id = target.idColumn ?? 'id';
  const table = target.table;
  const pick = target.group ? groupedPick(target, id, target.group) : dueRows(target, id, '$3');
  const sql = `
    WITH due AS (${pick})
    UPDATE ${table} AS job
    SET locked_until = $2${target.set ? `, ${target.set}` : ''}
    FROM due
    WHERE job.${id} = due.${id}
    RETURNING ${target.returning ? target.returning.map((column) => `job.${column}`).join(', ') : 'job.*'}`;
  const params: unknown[] = [now, new Date(now.getTime() + leaseMs), limit];
  if (target.group) params.push(Math.max(1, Math.min(groups ?? 2_147_483_647, 2_147_483_647)));
  return db.query<T>(sql, params);
}

/**
 * The rows of a grouped claim. Reading the due rows in due order and skipping those of busy groups
 * would read every due row when most groups are busy (one endpoint with a backlog, twenty busy
 * endpoints); instead the distinct groups are listed by a skip scan (one index probe per group
 * with claimable-by-`where` rows), busy groups are dropped by one probe each, the rest are ordered
 * by their oldest due row, and each of the first `groups` (ClaimOptions) gives up to `perGroup`
 * of its oldest due rows.
 */
function groupedPick(target: ClaimTarget, id: string, group: ClaimGroup): string {
  const { table, dueColumn: due } = target;
  const where = whereClause(target);
  const claimable = claimableRows(target);
  const g = group.column;
  return `
    WITH RECURSIVE groups(g) AS (
      (SELECT ${g} FROM ${table} WHERE true ${where} ORDER BY ${g} LIMIT 1)
      UNION ALL
      SELECT (SELECT ${g} FROM ${table} WHERE ${g} > groups.g ${where} ORDER BY ${g} LIMIT 1) FROM groups WHERE groups.g IS NOT NULL
    ), ready AS MATERIALIZED (
      SELECT groups.g, oldest.due FROM groups
      CROSS JOIN LATERAL (SELECT ${due} AS due FROM ${table} WHERE ${g} = groups.g AND ${claimable} ORDER BY ${due} LIMIT 1) oldest
      WHERE groups.g IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM ${table} WHERE ${g} = groups.g AND locked_until > $1 ${where})
      ORDER BY oldest.due
      LIMIT $4
    )
    SELECT rows.${id} FROM ready
    CROSS JOIN LATERAL (
      SELECT ${id} FROM ${table} WHERE ${g} = ready.g AND ${claimable} ORDER BY ${due} LIMIT ${Math.max(1, Math.floor(group.perGroup))} FOR UPDATE SKIP LOCKED
    ) rows
    LIMIT $3`;
}

/**
 * The rows `claimDue` would take (ungrouped), locked with FOR UPDATE SKIP LOCKED for the rest of
 * the caller's transaction instead of leased. For work that is finished inside that transaction:
 * nothing is written to the rows to take them, other claimers skip them until the commit, and a
 * process that dies before it leaves them as they were.
 */
export async function lockDue<T = Record<string, any>>(tx: Queryable, target: Omit<ClaimTarget, 'set' | 'group'>, { limit, now }: Omit<ClaimOptions, 'leaseMs'>): Promise<T[]> {
  const columns = target.returning ? target.returning.join(', ') : '*';
  return tx.query<T>(dueRows(target, columns, '$2'), [now, limit]);
}

/** ` AND (where)`, or nothing. */
function whereClause(target: Pick<ClaimTarget, 'where'>): string {
  return target.where ? `AND (${target.where})` : '';
}

/** The condition of a claimable row: due at $1, its lease free or expired, and `where`. */
function claimableRows(target: Pick<ClaimTarget, 'dueColumn' | 'where'>): string {
  return `${target.dueColumn} <= $1 AND (locked_until IS NULL OR locked_until <= $1) ${whereClause(target)}`;
}

/** The claimable rows, oldest due first, at most `limit` (a parameter), skipping rows locked by others. */
function dueRows(target: Pick<ClaimTarget, 'table' | 'dueColumn' | 'where'>, columns: string, limit: string): string {
  return `SELECT ${columns} FROM ${target.table} WHERE ${claimableRows(target)} ORDER BY ${target.dueColumn} LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
}
