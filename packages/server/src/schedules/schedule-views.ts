import type { Static } from '@sinclair/typebox';
import type { Deps } from '../deps.js';
import { inSnapshot } from '../db/count-and-page.js';
import { ApiError } from '../http/errors.js';
import { findSchedule, listRuns, listSchedules } from './schedule-store.js';
import type { ScheduleList, ScheduleRecord } from './schemas.js';
import { formatInstant, formatWallClock } from './zone-time.js';

/** Runs shown by GET /v1/schedule/:id; a minutely cron schedule gathers half a million a year. */
const RUNS_SHOWN = 100;

const iso = (date: Date | null) => (date ? formatInstant(date) : null);

export async function scheduleList(deps: Deps, protocolId: string, page: number, limit: number): Promise<Static<typeof ScheduleList>> {
  const { rows, total } = await listSchedules(deps.db, protocolId, page, limit);
  return {
    items: rows.map((row) => ({ id: row.id, wallet: row.wallet, subject: row.subject, status: row.status, nextRunAt: formatInstant(row.next_run_at) })),
    total,
  };
}

export async function scheduleRecord(deps: Deps, protocolId: string, id: string): Promise<Static<typeof ScheduleRecord>> {
  // One snapshot: a run fired between the reads would show in the runs of a schedule still
  // waiting for it.
  const { row, runs, total } = await inSnapshot(deps.db, async (db) => {
    const found = await findSchedule(db, protocolId, id);
    return found ? { row: found, ...(await listRuns(db, found.id, RUNS_SHOWN)) } : { row: undefined, runs: [], total: 0 };
  });
  if (!row) throw new ApiError('SCHEDULE_NOT_FOUND', `Schedule ${id} not found`);
  return {
    id: row.id,
    kind: row.kind,
    wallet: row.wallet,
    subject: row.subject,
    body: row.body,
    category: row.category,
    priority: row.priority,
    preferredChannel: row.preferred_channel,
    receipt: row.write_receipt,
    templateId: row.template_id,
    environment: row.environment,
    status: row.status,
    nextRunAt: formatInstant(row.next_run_at),
    cronExpr: row.cron_expr,
    timezone: row.timezone,
    scheduledFor: row.scheduled_for && formatWallClock(Date.parse(`${row.scheduled_for}Z`)),
    lastRunAt: iso(row.last_run_at),
    failureReason: row.failure_reason,
    createdAt: formatInstant(row.created_at),
    runs: runs.map((run) => ({
      occurrence: formatInstant(run.occurrence),
      notificationId: run.notification_id,
      outcome: run.outcome as 'queued' | 'opted_out' | 'duplicate' | 'failed',
      error: run.error,
      firedAt: formatInstant(run.fired_at),
    })),
    runCount: total,
  };
}
