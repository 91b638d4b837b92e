import { findProtocol } from '../account/protocol-store.js';
import { claimDue } from '../db/claim-due.js';
import { isDatabaseUnavailable } from '../db/connection.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { untilDone } from '../jobs/until-done.js';
import type { NotifyInput } from '../notifications/schemas.js';
import { submitNotifications, type Sender, type Submission } from '../notifications/submit-notifications.js';
import { CronSyntaxError, parseCron, type CronSpec } from './cron-expression.js';
import { depsInTransaction } from './deps-in-transaction.js';
import { planCronFire } from './next-run.js';
import { failureReasons, lockClaimed, recordRuns, releaseClaims, type RunOutcome, type ScheduleRow } from './schedule-store.js';

export interface FireOptions {
  /** Schedules claimed per pass. */
  batchSize: number;
  leaseMs: number;
  /** Firing transactions in flight at once (one per protocol and environment of the batch). */
  concurrency: number;
  /** Checked before each group: a stopping worker hands unstarted rows back. */
  stopping?: () => boolean;
}

export const DEFAULT_FIRE_OPTIONS: FireOptions = { batchSize: 500, leaseMs: 30_000, concurrency: 8 };

interface Plan {
  row: ScheduleRow;
  occurrence: Date;
  next: Date | null;
  /** Set when the schedule cannot run at all (a stored cron expression the parser now refuses). */
  broken?: string;
}

type Result = { submission: Submission } | { error: string; quota: boolean };

const specs = new Map<string, CronSpec>();

function specOf(expression: string): CronSpec {
  let spec = specs.get(expression);
  if (!spec) {
    if (specs.size >= 10_000) specs.clear();
    spec = parseCron(expression);
    specs.set(expression, spec);
  }
  return spec;
}

function planRun(row: ScheduleRow, now: Date): Plan {
  const due = row.next_run_at;
  if (row.kind === 'once') return { row, occurrence: due, next: null };
  try {
    return { row, ...planCronFire(specOf(row.cron_expr!), row.timezone, due, now) };
  } catch (error) {
    if (!(error instanceof CronSyntaxError)) throw error;
    return { row, occurrence: due, next: null, broken: `cronExpr is no longer valid: ${error.message}` };
  }
}

/** The notification one occurrence sends; the key makes a second attempt at it a `duplicate`. */
function notificationFor({ row, occurrence }: Plan): NotifyInput {
  return {
    wallet: row.wallet,
    subject: row.subject,
    body: row.body,
    category: row.category as NotifyInput['category'],
    priority: row.priority as NotifyInput['priority'],
    ...(row.preferred_channel ? { preferredChannel: row.preferred_channel as NotifyInput['preferredChannel'] } : {}),
    receipt: row.write_receipt,
    ...(row.template_id ? { templateId: row.template_id } : {}),
    ...(row.template_variables ? { templateVariables: row.template_variables } : {}),
    idempotencyKey: `${row.id}:${occurrence.toISOString()}`,
  };
}

/**
 * A run's refusal, as recorded. A run is sent as a bulk call of one item (so an unregistered wallet
 * is an outcome, not an error), whose messages name the field `notifications[0].…`; a schedule has
 * no such array, so the field is named as a send or the schedule's creation names it.
 */
const refusal = (error: ApiError): Result => ({
  error: `${error.code}: ${error.message.replaceAll('notifications[0].', '')}`,
  quota: error.code === 'INSUFFICIENT_QUOTA',
});

/**
 * Sends the group's notifications through the normal send path. One bulk call serves the whole
 * group (bulk mode: an unregistered wallet is a `failed` item, not an error). Bulk is
 * all-or-nothing, so when it is refused (quota, a template gone, …) each schedule is sent on its
 * own and gets its own answer. submitNotifications takes one scheduleId per call, so the rows of
 * a bulk call get theirs from recordRuns, in the same transaction.
 */
async function submitPlans(deps: Deps, sender: Sender, plans: Plan[]): Promise<Result[]> {
  const one = async (plan: Plan): Promise<Result> => {
    try {
      const [submission] = await submitNotifications(deps, sender, [notificationFor(plan)], { mode: 'bulk', scheduleId: plan.row.id });
      return { submission };
    } catch (error) {
      if (error instanceof ApiError) return refusal(error);
      throw error;
    }
  };
  if (plans.length === 1) return [await one(plans[0])];
  let submissions: Submission[];
  try {
    submissions = await submitNotifications(deps, sender, plans.map(notificationFor), { mode: 'bulk' });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const results: Result[] = [];
    for (const plan of plans) results.push(await one(plan));
    return results;
  }
  return submissions.map((submission) => ({ submission }));
}

/**
 * The run to record and where the schedule goes next. A cron schedule moves on to its next
 * occurrence whatever this run's outcome (its failures are in its runs). A one-time schedule ends
 * COMPLETED when its notification was accepted (queued, opted out, or already sent) and FAILED,
 * with the reason, when it was refused or could not be queued.
 */
function outcomeOf(plan: Plan, result: Result, reasons: Map<string, string | null>): RunOutcome {
  const sent = 'submission' in result ? result.submission : undefined;
  const error = !sent ? (result as { error: string }).error : sent.status === 'failed' ? (reasons.get(sent.notificationId) ?? 'not queued') : null;
  const run = {
    scheduleId: plan.row.id,
    occurrence: plan.occurrence,
    notificationId: sent?.notificationId ?? null,
    outcome: sent && sent.status !== 'failed' ? sent.status : ('failed' as const),
    error,
  };
  if (plan.row.kind === 'cron') {
    if (plan.next) return { ...run, status: 'PENDING', nextRunAt: plan.next, failureReason: null };
    return { ...run, status: plan.broken ? 'FAILED' : 'COMPLETED', nextRunAt: plan.occurrence, failureReason: plan.broken ?? null };
  }
  return { ...run, status: error ? 'FAILED' : 'COMPLETED', nextRunAt: plan.occurrence, failureReason: error };
}

/**
 * Fires one protocol-and-environment group of claimed schedules in one transaction: lock the rows
 * (dropping any cancelled since the claim), send, record the runs and move the schedules on.
 *
 * Race-freedom: the notifications, the runs and the schedule updates commit together (the send
 * path joins this transaction through depsInTransaction). A cancel is one UPDATE … WHERE status =
 * 'PENDING': while this transaction holds the row it waits, then finds COMPLETED (a one-time
 * schedule: it answers cancelled: false) or PENDING after this run (cron: the cancel wins from
 * the next occurrence on); a cancel that commits first makes lockClaimed skip the row. Either way
 * a cancelled schedule sends nothing after the cancel. The idempotency key
 * `<scheduleId>:<occurrence>` is the second line of defence: should a row ever be fired twice for
 * one occurrence (a lease lost mid-fire), the unique index makes the second send a `duplicate`.
 */
async function fireGroup(deps: Deps, ids: string[], lease: Date, { again = false } = {}): Promise<{ queued: boolean; quota: boolean }> {
  const flags = { queued: false, quota: false };
  await deps.db.transaction(async (tx) => {
    // Fired again after a lost connection, the first try may still hold the rows on the server
    // until it notices the client is gone: wait a second at most, then leave them to the lease.
    if (again) await tx.query("SET LOCAL lock_timeout = '1s'");
    const rows = await lockClaimed(tx, ids, lease);
    if (rows.length === 0) return;
    const now = deps.now();
    const protocol = await findProtocol(tx, rows[0].protocol_id);
    if (!protocol) return;
    const plans = rows.map((row) => planRun(row, now));
    const runnable = plans.filter((plan) => !plan.broken);
    const sent = runnable.length ? await submitPlans(depsInTransaction(deps, tx), { protocol, environment: rows[0].environment }, runnable) : [];
    const results = new Map(runnable.map((plan, i) => [plan, sent[i]]));
    const failedIds = sent.flatMap((r) => ('submission' in r && r.submission.status === 'failed' ? [r.submission.notificationId] : []));
    const reasons = await failureReasons(tx, failedIds);
    const outcomes = plans.map((plan) => outcomeOf(plan, results.get(plan) ?? { error: plan.broken!, quota: false }, reasons));
    await recordRuns(tx, outcomes, now);
    flags.queued = sent.some((r) => 'submission' in r && r.submission.status === 'queued');
    flags.quota = sent.some((r) => 'quota' in r && r.quota);
  });
  return flags;
}

/**
 * fireGroup, again while the lease lasts when the database could not take it, rather than
 * waiting for the lease to run out (a try whose commit went through although its answer was lost
 * leaves rows that lockClaimed finds moved on: nothing is sent twice). Any other error is thrown.
 */
async function fireGroupUntilDone(deps: Deps, ids: string[], lease: Date, stopping: () => boolean) {
  let tries = 0;
  const flags = await untilDone(() => fireGroup(deps, ids, lease, { again: tries++ > 0 }), {
    stopping,
    retries: (error) => isDatabaseUnavailable(error) && deps.now() < lease,
    failed: (error, failures) => deps.log.warn({ err: error, schedules: ids.length, failures }, 'firing schedules: database unavailable; retrying'),
  });
  // A try whose answer was lost may have queued notifications that the last one found sent.
  return { ...flags, queued: flags.queued || tries > 1 };
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

/**
 * One firing pass: claims due PENDING schedules (due column next_run_at) and fires them, grouped
 * by protocol and environment. Returns how many were claimed. A group whose transaction fails
 * for good keeps its lease and is claimed again when the lease expires.
 */
export async function fireDueSchedules(deps: Deps, options: FireOptions = DEFAULT_FIRE_OPTIONS): Promise<number> {
  const claimed = await claimDue<ScheduleRow>(
    deps.db,
    { table: 'schedules', dueColumn: 'next_run_at', where: "status = 'PENDING'" },
    { limit: options.batchSize, leaseMs: options.leaseMs, now: deps.now() },
  );
  if (claimed.length === 0) return 0;
  const lease = claimed[0].locked_until!;
  // One transaction per protocol and environment: a protocol's sends serialise on its quota row
  // anyway, so splitting its share would add transactions waiting on one another, not speed.
  const groups = new Map<string, string[]>();
  for (const row of claimed) {
    const key = `${row.protocol_id}/${row.environment}`;
    const ids = groups.get(key);
    if (ids) ids.push(row.id);
    else groups.set(key, [row.id]);
  }
  let queued = false;
  let quota = false;
  await pool([...groups.values()], options.concurrency, async (ids) => {
    if (options.stopping?.()) return releaseClaims(deps.db, ids, lease);
    try {
      const flags = await fireGroupUntilDone(deps, ids, lease, () => options.stopping?.() ?? false);
      queued ||= flags.queued;
      quota ||= flags.quota;
    } catch (error) {
      deps.log.error({ err: error, schedules: ids.length }, 'firing schedules failed; they run again when their lease expires');
    }
  });
  if (queued) deps.wakeup.notify('notifications');
  if (quota) deps.wakeup.notify('webhooks');
  return claimed.length;
}
