import type { AnswerShape } from '../answer-shape.js';
import { eachItem } from '../paginate.js';
import { createCall, type CreateOptions, type RequestCore, type RequestOptions } from '../request.js';
import type { Category, Environment, NotificationParams, Priority, SubmissionStatus } from './notifications.js';

/** PENDING until a one-time schedule has run (COMPLETED or FAILED) or any schedule is cancelled. */
export type ScheduleStatus = 'PENDING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

/** What a schedule sends: a notification without an idempotency key (each run gets its own). */
export type ScheduledNotification = Omit<NotificationParams, 'idempotencyKey'> & {
  /** IANA zone name (America/New_York) the wall clock is read in; default UTC. */
  timezone?: string;
};

export type OneTimeScheduleParams = ScheduledNotification & {
  /**
   * ISO 8601 date-time, in the future. With `timezone`, its date and time are read in that zone (any
   * offset or Z ignored); without, it is the instant it writes (no offset means UTC).
   */
  scheduledFor: string;
};

export type CronScheduleParams = ScheduledNotification & {
  /** Five fields: minute hour day-of-month month day-of-week (names JAN-DEC, SUN-SAT allowed). */
  cronExpr: string;
};

export interface CreatedSchedule {
  /** `sched_…` */
  id: string;
  status: ScheduleStatus;
  /** ISO 8601 UTC instant of the first run. */
  nextRunAt: string;
}

export interface ScheduleListItem {
  id: string;
  wallet: string;
  subject: string;
  status: ScheduleStatus;
  /** ISO 8601 UTC instant: the next run while PENDING; once ended, the run it was due for then. */
  nextRunAt: string;
}

export interface ScheduleList {
  items: ScheduleListItem[];
  total: number;
}

export interface ScheduleRun {
  /** The scheduled instant this run stands for. */
  occurrence: string;
  notificationId: string | null;
  outcome: SubmissionStatus;
  error: string | null;
  firedAt: string;
}

/** `GET /v1/schedule/:id`. */
export interface Schedule extends ScheduleListItem {
  kind: 'once' | 'cron';
  body: string;
  category: Category;
  priority: Priority;
  preferredChannel: string | null;
  receipt: boolean;
  templateId: string | null;
  environment: Environment;
  cronExpr: string | null;
  timezone: string;
  /** One-time only: the wall-clock date-time asked for, without offset. */
  scheduledFor: string | null;
  lastRunAt: string | null;
  failureReason: string | null;
  createdAt: string;
  /** The most recent runs, newest first (at most 100). */
  runs: ScheduleRun[];
  /** Every run ever recorded. */
  runCount: number;
}

const schedulePath = (id: string) => `/v1/schedule/${encodeURIComponent(id)}`;
const CREATED: AnswerShape = { id: 'string', status: 'string', nextRunAt: 'string' };

/** One-time and recurring sends. */
export class Schedules {
  constructor(private readonly core: RequestCore) {}

  /**
   * Schedules one notification at a wall-clock date-time in a time zone. With
   * `options.idempotencyKey` a repeat gets the first answer and creates no second schedule.
   * @example await herald.schedules.once({ wallet, subject, body, category: 'governance', scheduledFor: '2027-06-01T09:00:00', timezone: 'America/New_York' });
   */
  async once(params: OneTimeScheduleParams, options?: CreateOptions): Promise<CreatedSchedule> {
    const { call, options: requestOptions } = createCall('/v1/schedule', params, CREATED, options);
    return this.core.request(call, requestOptions);
  }

  /**
   * Schedules a notification at every occurrence of a cron expression in a time zone. With
   * `options.idempotencyKey` a repeat gets the first answer and creates no second schedule.
   * @example await herald.schedules.cron({ wallet, subject, body, category: 'defi', cronExpr: '0 9 * * MON-FRI', timezone: 'Europe/Berlin' });
   */
  async cron(params: CronScheduleParams, options?: CreateOptions): Promise<CreatedSchedule> {
    const { call, options: requestOptions } = createCall('/v1/schedule/cron', params, CREATED, options);
    return this.core.request(call, requestOptions);
  }

  /**
   * The protocol's schedules, newest first.
   * @example const { items, total } = await herald.schedules.list({ limit: 50 });
   */
  list(params: { page?: number; limit?: number } = {}, options?: RequestOptions): Promise<ScheduleList> {
    return this.core.request({ method: 'GET', path: '/v1/schedule', query: { page: params.page, limit: params.limit }, answer: { items: 'objects', total: 'number' } }, options);
  }

  /**
   * Every schedule, newest first, a page (`limit`, default 100) fetched at a time as the loop reads.
   * @example for await (const schedule of herald.schedules.listAll()) if (schedule.status === 'PENDING') console.log(schedule.id);
   */
  listAll(params: { limit?: number } = {}, options?: RequestOptions): AsyncGenerator<ScheduleListItem, void, undefined> {
    return eachItem((page, limit) => this.list({ page, limit }, options), (schedule) => schedule.id, params.limit);
  }

  /**
   * One schedule with its most recent runs; unknown ids throw 404 `SCHEDULE_NOT_FOUND`.
   * @example const { status, runs } = await herald.schedules.get('sched_01J…');
   */
  get(id: string, options?: RequestOptions): Promise<Schedule> {
    return this.core.request({ method: 'GET', path: schedulePath(id), answer: { id: 'string', status: 'string', runs: 'objects' } }, options);
  }

  /**
   * Cancels a schedule: it never fires again. `cancelled` is false when it had already ended. A
   * sandbox key cancels sandbox schedules only (403 `FORBIDDEN` for a production one).
   * @example const { cancelled } = await herald.schedules.cancel('sched_01J…');
   */
  cancel(id: string, options?: RequestOptions): Promise<{ cancelled: boolean }> {
    return this.core.request({ method: 'DELETE', path: schedulePath(id), answer: { cancelled: 'boolean' } }, options);
  }
}
