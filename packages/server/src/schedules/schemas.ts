import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../http/schemas.js';
import { NotifyBody } from '../notifications/schemas.js';

// A schedule carries what POST /v1/notify takes, minus the idempotency key: each run gets its own.
const { idempotencyKey: _perRun, ...notifyFields } = NotifyBody.properties;

const zoneName = { minLength: 1, maxLength: 64 };

export const OneTimeScheduleBody = Type.Object({
  ...notifyFields,
  scheduledFor: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'ISO 8601 date-time, in the future. With `timezone`, its date and time are taken in that zone and any offset or Z is ignored; without, it is the instant it writes (no offset means UTC).',
  }),
  // No default: an omitted timezone means "the instant scheduledFor writes", not "the UTC wall clock".
  timezone: Type.Optional(Type.String({ ...zoneName, description: 'IANA time zone name (America/New_York); the wall clock of scheduledFor is read in it' })),
});
export type OneTimeScheduleInput = Static<typeof OneTimeScheduleBody>;

export const CronScheduleBody = Type.Object({
  ...notifyFields,
  cronExpr: Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'Five fields: minute hour day-of-month month day-of-week (Vixie cron syntax, names JAN-DEC and SUN-SAT allowed)',
  }),
  timezone: Type.String({ ...zoneName, default: 'UTC', description: 'IANA time zone name (America/New_York); cronExpr is evaluated on its wall clock' }),
});
export type CronScheduleInput = Static<typeof CronScheduleBody>;

const NullableDate = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ScheduleStatusSchema = StringEnum(['PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const, {
  description: 'PENDING until a one-time schedule has run (COMPLETED or FAILED) or any schedule is cancelled (CANCELLED)',
});

export const CreatedSchedule = Type.Object({
  id: Type.String(),
  status: ScheduleStatusSchema,
  nextRunAt: Type.String({ format: 'date-time' }),
});

export const ScheduleListItem = Type.Object({
  id: Type.String(),
  wallet: Type.String(),
  subject: Type.String(),
  status: ScheduleStatusSchema,
  nextRunAt: Type.String({
    format: 'date-time',
    description: 'The next run while PENDING; once the schedule has ended, the run it was due for then (its run, or the one cancelling called off)',
  }),
});

export const ScheduleList = Type.Object({ items: Type.Array(ScheduleListItem), total: Type.Integer() });

export const ScheduleRun = Type.Object({
  occurrence: Type.String({ format: 'date-time', description: 'The scheduled instant this run stands for' }),
  notificationId: NullableString,
  outcome: StringEnum(['queued', 'opted_out', 'duplicate', 'failed'] as const, {
    description: 'The send result; duplicate = a retried run found the notification already created',
  }),
  error: NullableString,
  firedAt: Type.String({ format: 'date-time' }),
});

export const ScheduleRecord = Type.Object({
  ...ScheduleListItem.properties,
  kind: StringEnum(['once', 'cron'] as const),
  body: Type.String(),
  category: Type.String(),
  priority: Type.String(),
  preferredChannel: NullableString,
  receipt: Type.Boolean(),
  templateId: NullableString,
  environment: Type.String(),
  cronExpr: NullableString,
  timezone: Type.String(),
  scheduledFor: Type.Union([Type.String(), Type.Null()], {
    description: 'One-time only: the wall-clock date-time asked for, without offset (read in timezone)',
  }),
  lastRunAt: NullableDate,
  failureReason: NullableString,
  createdAt: Type.String({ format: 'date-time' }),
  runs: Type.Array(ScheduleRun, { description: 'The most recent runs, newest first (at most 100)' }),
  runCount: Type.Integer({ description: 'All runs ever recorded' }),
});

export const ScheduleParams = Type.Object({ id: Type.String({ minLength: 1 }) });
