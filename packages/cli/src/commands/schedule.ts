import type { CreatedSchedule, CronScheduleParams, OneTimeScheduleParams, Schedule } from '@herald/sdk';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { usageError } from '../exit-codes.js';
import { CREATE_KEY_HELP } from '../idempotency-key.js';
import { withCreationKey } from '../keyed-request.js';
import { readStdinObject } from '../json-input.js';
import { addMessageOptions, messageFrom, requireValidNotification, type MessageFlags } from '../message-flags.js';
import { integerIn } from '../parse-options.js';
import { everyItem, shownLine, withPaging, type PagingFlags } from '../paging.js';
import type { Output } from '../output.js';
import type { ContextOf } from './admin.js';

interface ScheduleFlags extends MessageFlags {
  timezone?: string;
  fromStdin?: boolean;
  idempotencyKey?: string;
}

/**
 * A schedule's body: stdin's JSON object (with --from-stdin) overridden by flags. The message is
 * checked locally like a send; `field` (scheduledFor or cronExpr) comes from its flag or stdin.
 */
async function scheduleBody(context: Context, flags: ScheduleFlags, field: 'scheduledFor' | 'cronExpr', flagValue: string | undefined, flagName: string) {
  const { timezone, fromStdin, idempotencyKey: _creationKey, ...message } = flags;
  const { scheduledFor, cronExpr, timezone: stdinZone, ...notification } = fromStdin ? await readStdinObject(context.io.stdin) : {};
  if (notification.idempotencyKey !== undefined) throw usageError('A schedule takes no idempotencyKey: each run gets its own (--idempotency-key makes creating the schedule safe to repeat)');
  const checked = requireValidNotification({ ...notification, ...messageFrom(message) });
  const when = flagValue ?? (field === 'scheduledFor' ? scheduledFor : cronExpr);
  if (typeof when !== 'string') throw usageError(`${field} is required (${flagName})`);
  const zone = timezone ?? stdinZone;
  return { ...checked, ...(zone !== undefined ? { timezone: zone } : {}), [field]: when };
}

function showCreated(out: Output, created: CreatedSchedule): void {
  out.line(out.style.green(`Scheduled ${created.id}`));
  out.fields([
    ['status', created.status],
    ['next run', created.nextRunAt],
  ]);
}

/** An ended schedule keeps the run it was due for in nextRunAt; a person reads "no next run". */
const nextRun = (schedule: { status: string; nextRunAt: string }) => (schedule.status === 'PENDING' ? schedule.nextRunAt : '-');

function showSchedule(out: Output, schedule: Schedule): void {
  out.fields([
    ['id', schedule.id],
    ['kind', schedule.kind === 'cron' ? `cron ${schedule.cronExpr}` : `once at ${schedule.scheduledFor}`],
    ['timezone', schedule.timezone],
    ['status', schedule.status],
    ['next run', nextRun(schedule)],
    ['last run', schedule.lastRunAt ?? '-'],
    ['wallet', schedule.wallet],
    ['subject', schedule.subject],
    ['runs', String(schedule.runCount)],
    ...(schedule.failureReason ? [['failure', schedule.failureReason] as [string, string]] : []),
  ]);
  if (schedule.runs.length > 0) {
    out.line();
    out.table(
      ['OCCURRENCE', 'OUTCOME', 'NOTIFICATION', 'ERROR'],
      schedule.runs.map((r) => [r.occurrence, r.outcome, r.notificationId ?? '-', r.error ?? '']),
    );
  }
}

function addScheduleOptions(command: Command): Command {
  return addMessageOptions(command)
    .option('--timezone <zone>', 'IANA time zone the wall clock is read in, e.g. America/New_York (default UTC)')
    .option('--from-stdin', 'read the notification as a JSON object from standard input; flags override its fields')
    .option('--idempotency-key <key>', CREATE_KEY_HELP);
}

/** `herald schedule once | cron | list | get | cancel`. */
export function registerSchedule(program: Command, contextOf: ContextOf): void {
  const schedule = program.command('schedule').description('one-time and recurring sends');

  addScheduleOptions(schedule.command('once').description('send one notification at a date and time'))
    .option('--at <datetime>', 'when: an ISO 8601 date-time read on the wall clock of --timezone, e.g. 2027-06-01T09:00; without --timezone, the instant it writes (no offset means UTC)')
    .action(async (flags: ScheduleFlags & { at?: string }, command: Command) => {
      const context = contextOf(command);
      const { at, ...rest } = flags;
      const params = await scheduleBody(context, rest, 'scheduledFor', at, '--at');
      const herald = context.herald();
      const created = await withCreationKey(flags.idempotencyKey, (key) => herald.schedules.once(params as OneTimeScheduleParams, { idempotencyKey: key }));
      context.out.result(created, () => showCreated(context.out, created));
    });

  addScheduleOptions(schedule.command('cron').description('send a notification at every occurrence of a cron expression'))
    .option('--cron <expression>', 'five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * MON-FRI"')
    .action(async (flags: ScheduleFlags & { cron?: string }, command: Command) => {
      const context = contextOf(command);
      const { cron, ...rest } = flags;
      const params = await scheduleBody(context, rest, 'cronExpr', cron, '--cron');
      const herald = context.herald();
      const created = await withCreationKey(flags.idempotencyKey, (key) => herald.schedules.cron(params as CronScheduleParams, { idempotencyKey: key }));
      context.out.result(created, () => showCreated(context.out, created));
    });

  withPaging(schedule.command('list').description("your protocol's schedules, newest first"), 'schedules', 20)
    .action(async (flags: PagingFlags, command: Command) => {
      const context = contextOf(command);
      const herald = context.herald();
      const list = flags.all
        ? await everyItem(flags, () => herald.schedules.listAll({ limit: flags.limit })).then((items) => ({ items, total: items.length }))
        : await herald.schedules.list({ page: flags.page, limit: flags.limit });
      const { out } = context;
      out.result(list, () => {
        out.table(
          ['ID', 'STATUS', 'NEXT RUN', 'WALLET', 'SUBJECT'],
          list.items.map((s) => [s.id, s.status, nextRun(s), s.wallet, s.subject]),
        );
        out.line(out.style.dim(flags.all ? shownLine(undefined, list.items.length, list.total) : `${list.items.length} shown of ${list.total}`));
      });
    });

  schedule
    .command('get')
    .description('one schedule with its most recent runs')
    .argument('<id>', 'schedule id (sched_…)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const record = await context.herald().schedules.get(id);
      context.out.result(record, () => showSchedule(context.out, record));
    });

  schedule
    .command('cancel')
    .description('cancel a schedule: it never fires again')
    .argument('<id>', 'schedule id (sched_…)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const result = await context.herald().schedules.cancel(id);
      context.out.result(result, () =>
        context.out.line(result.cancelled ? context.out.style.green(`Cancelled ${id}`) : `${id} had already ended or been cancelled`),
      );
    });
}
