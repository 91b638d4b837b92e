import type { Queryable } from '../db/connection.js';
import { countAndPage } from '../db/count-and-page.js';

export type ScheduleStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export interface ScheduleRow {
  id: string;
  protocol_id: string;
  environment: 'production' | 'sandbox';
  kind: 'once' | 'cron';
  wallet: string;
  subject: string;
  body: string;
  category: string;
  priority: string;
  preferred_channel: string | null;
  write_receipt: boolean;
  template_id: string | null;
  template_variables: Record<string, unknown> | null;
  cron_expr: string | null;
  timezone: string;
  /** One-time: the requested wall clock (a timestamp without zone, read back as text). */
  scheduled_for: string | null;
  status: ScheduleStatus;
  /** When PENDING, the next run; once ended, the run it was due for then (see NEXT_RUN). */
  next_run_at: Date;
  locked_until: Date | null;
  last_run_at: Date | null;
  failure_reason: string | null;
  created_at: Date;
}

export interface RunRow {
  occurrence: Date;
  notification_id: string | null;
  outcome: string;
  error: string | null;
  fired_at: Date;
}

export type NewSchedule = Omit<ScheduleRow, 'status' | 'locked_until' | 'last_run_at' | 'failure_reason' | 'next_run_at'> & { next_run_at: Date };

/**
 * A schedule keeps next_run_at when it ends: the run it was due for then (a one-time schedule's
 * run, the occurrence a cancellation called off), so nextRunAt is always a timestamp, as the
 * contract types it. Schedules that ended while it was cleared on ending have none: their last
 * run, or their last change, stands in.
 */
const NEXT_RUN = 'coalesce(next_run_at, last_run_at, updated_at) AS next_run_at';

// scheduled_for comes back as text so no engine turns the zoneless wall clock into a local-time Date.
const COLUMNS = `id, protocol_id, environment, kind, wallet, subject, body, category, priority, preferred_channel, write_receipt,
  template_id, template_variables, cron_expr, timezone, to_char(scheduled_for, 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS scheduled_for,
  status, ${NEXT_RUN}, locked_until, last_run_at, failure_reason, created_at`;

export async function insertSchedule(db: Queryable, row: NewSchedule): Promise<void> {
  await db.query(
    `INSERT INTO schedules (id, protocol_id, environment, kind, wallet, subject, body, category, priority, preferred_channel,
       write_receipt, template_id, template_variables, cron_expr, timezone, scheduled_for, status, next_run_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::timestamp, 'PENDING', $17, $18, $18)`,
    [
      row.id,
      row.protocol_id,
      row.environment,
      row.kind,
      row.wallet,
      row.subject,
      row.body,
      row.category,
      row.priority,
      row.preferred_channel,
      row.write_receipt,
      row.template_id,
      row.template_variables ? JSON.stringify(row.template_variables) : null,
      row.cron_expr,
      row.timezone,
      row.scheduled_for,
      row.next_run_at,
      row.created_at,
    ],
  );
}

export async function findSchedule(db: Queryable, protocolId: string, id: string): Promise<ScheduleRow | undefined> {
  const [row] = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM schedules WHERE id = $1 AND protocol_id = $2`, [id, protocolId]);
  return row;
}

/** The protocol's schedules, newest first. */
export async function listSchedules(db: Queryable, protocolId: string, page: number, limit: number) {
  return countAndPage<Pick<ScheduleRow, 'id' | 'wallet' | 'subject' | 'status' | 'next_run_at'>>(
    db,
    { text: 'SELECT count(*)::int AS total FROM schedules WHERE protocol_id = $1', params: [protocolId] },
    {
      text: `SELECT id, wallet, subject, status, ${NEXT_RUN} FROM schedules WHERE protocol_id = $1
     ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      params: [protocolId, limit, (page - 1) * limit],
    },
  );
}

export async function listRuns(db: Queryable, scheduleId: string, limit: number): Promise<{ runs: RunRow[]; total: number }> {
  const { rows, total } = await countAndPage<RunRow>(
    db,
    { text: 'SELECT count(*)::int AS total FROM schedule_runs WHERE schedule_id = $1', params: [scheduleId] },
    {
      text: `SELECT occurrence, notification_id, outcome, error, fired_at FROM schedule_runs WHERE schedule_id = $1
     ORDER BY occurrence DESC LIMIT $2`,
      params: [scheduleId, limit],
    },
  );
  return { runs: rows, total };
}

/**
 * PENDING → CANCELLED in one statement, so it wins or loses atomically against a firing worker:
 * a worker holding the row (FOR UPDATE) makes it wait, and it then sees the worker's outcome.
 * Returns false when the schedule is not (or no longer) PENDING or is not the protocol's.
 */
export async function cancelPending(db: Queryable, protocolId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE schedules SET status = 'CANCELLED', locked_until = NULL, updated_at = $3
     WHERE id = $1 AND protocol_id = $2 AND status = 'PENDING' RETURNING id`,
    [id, protocolId, now],
  );
  return rows.length === 1;
}

/**
 * Locks the claimed rows for firing, in id order, and returns those still ours: PENDING (not
 * cancelled meanwhile) and still under our lease (`lease` is the locked_until the claim set).
 */
export async function lockClaimed(db: Queryable, ids: string[], lease: Date): Promise<ScheduleRow[]> {
  return db.query<ScheduleRow>(
    `SELECT ${COLUMNS} FROM schedules WHERE id = ANY($1::text[]) AND status = 'PENDING' AND locked_until = $2
     ORDER BY id FOR UPDATE`,
    [ids, lease],
  );
}

export interface RunOutcome {
  scheduleId: string;
  occurrence: Date;
  notificationId: string | null;
  outcome: 'queued' | 'opted_out' | 'duplicate' | 'failed';
  error: string | null;
  /** The schedule afterwards. */
  status: ScheduleStatus;
  /** The next run when PENDING; the run it was due for when it ends. */
  nextRunAt: Date;
  failureReason: string | null;
}

/**
 * Records a firing in one statement (the transaction holds the protocol's quota row by now, so
 * round trips are kept few): links each new notification to its schedule, inserts the runs, and
 * moves each schedule on. The schedule update only touches rows still PENDING (they are locked,
 * so this holds; the condition states the invariant).
 */
export async function recordRuns(db: Queryable, outcomes: RunOutcome[], now: Date): Promise<void> {
  if (outcomes.length === 0) return;
  const col = <T>(pick: (o: RunOutcome) => T) => outcomes.map(pick);
  await db.query(
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
         AS u(schedule_id, occurrence, notification_id, outcome, error, status, next_run_at, failure_reason)
     ), linked AS (
       UPDATE notifications AS n SET schedule_id = i.schedule_id FROM input i
       WHERE n.id = i.notification_id AND n.schedule_id IS NULL RETURNING n.id
     ), runs AS (
       INSERT INTO schedule_runs (schedule_id, occurrence, notification_id, outcome, error, fired_at)
       SELECT schedule_id, occurrence, notification_id, outcome, error, $9 FROM input
       ON CONFLICT (schedule_id, occurrence) DO NOTHING RETURNING schedule_id
     )
     UPDATE schedules AS s
     SET status = i.status, next_run_at = i.next_run_at, failure_reason = i.failure_reason,
         last_run_at = $9, locked_until = NULL, updated_at = $9
     FROM input i WHERE s.id = i.schedule_id AND s.status = 'PENDING'`,
    [
      col((o) => o.scheduleId),
      col((o) => o.occurrence.toISOString()),
      col((o) => o.notificationId),
      col((o) => o.outcome),
      col((o) => o.error),
      col((o) => o.status),
      col((o) => o.nextRunAt.toISOString()),
      col((o) => o.failureReason),
      now,
    ],
  );
}

/** When the next claimable schedule falls due (rows leased by a worker are not claimable). */
export async function nextDueAt(db: Queryable, now: Date): Promise<Date | undefined> {
  const [row] = await db.query<{ next_run_at: Date }>(
    `SELECT next_run_at FROM schedules WHERE status = 'PENDING' AND (locked_until IS NULL OR locked_until <= $1)
     ORDER BY next_run_at LIMIT 1`,
    [now],
  );
  return row?.next_run_at;
}

/** Gives claimed rows back without firing them (a stopping worker). */
export async function releaseClaims(db: Queryable, ids: string[], lease: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE schedules SET locked_until = NULL WHERE id = ANY($1::text[]) AND locked_until = $2', [ids, lease]);
}

/** Why each failed notification was not queued (its last_error). */
export async function failureReasons(db: Queryable, notificationIds: string[]): Promise<Map<string, string | null>> {
  if (notificationIds.length === 0) return new Map();
  const rows = await db.query<{ id: string; last_error: string | null }>('SELECT id, last_error FROM notifications WHERE id = ANY($1::text[])', [
    notificationIds,
  ]);
  return new Map(rows.map((r) => [r.id, r.last_error]));
}
