import type { Deps } from '../deps.js';
import { answeredBefore, createOnce, type CreationKey, type Keyed } from '../creation-keys/creation-key.js';
import { ApiError } from '../http/errors.js';
import { walletNotRegistered } from '../wallet.js';
import { findIdentity } from '../identities/identity-store.js';
import { newId } from '../ids.js';
import type { NotifyInput } from '../notifications/schemas.js';
import { checkItems, type Sender } from '../notifications/submit-notifications.js';
import { CronSyntaxError, parseCron } from './cron-expression.js';
import { nextOccurrence } from './next-run.js';
import { insertSchedule, type NewSchedule } from './schedule-store.js';
import type { CronScheduleInput, OneTimeScheduleInput } from './schemas.js';
import { canonicalTimeZone, formatInstant, formatWallClock, instantOfWallClock, parseWallClock, writtenOffset } from './zone-time.js';

export interface CreatedSchedule {
  id: string;
  status: 'PENDING';
  nextRunAt: string;
}

/** A schedule due this soon wakes the scheduler, which then times its next pass to the due time. */
const WAKE_WITHIN_MS = 60_000;

/** Writes the schedule, with the request's idempotency key when it has one (createOnce). */
async function store(deps: Deps, row: NewSchedule, key: CreationKey | undefined): Promise<Keyed<CreatedSchedule>> {
  const created = await createOnce(deps.db, key, deps.now(), async (tx): Promise<CreatedSchedule> => {
    await insertSchedule(tx, row);
    return { id: row.id, status: 'PENDING', nextRunAt: formatInstant(row.next_run_at) };
  });
  if (!created.replayed && row.next_run_at.getTime() - deps.now().getTime() < WAKE_WITHIN_MS) deps.wakeup.notify('schedules');
  return created;
}

function zoneOf(timezone: string): string {
  const zone = canonicalTimeZone(timezone);
  if (!zone) throw new ApiError('VALIDATION_ERROR', `timezone must be an IANA time zone name such as America/New_York, got "${timezone}"`);
  return zone;
}

/**
 * What the send path would refuse for the whole request, checked now so a schedule that can never
 * send is refused at creation: body size for the tier, template tier gate, existence and variables (same
 * messages as POST /v1/notify), and an unregistered wallet (404, as a single send answers).
 * The send path checks all of it again at each run; the answers there become the run's outcome.
 */
async function checkSendable(deps: Deps, sender: Sender, input: NotifyInput): Promise<void> {
  await checkItems(deps, sender, [input], 'single');
  if (!(await findIdentity(deps.db, input.wallet))) throw walletNotRegistered(input.wallet);
}

function rowFor(deps: Deps, sender: Sender, input: NotifyInput, zone: string): Omit<NewSchedule, 'kind' | 'cron_expr' | 'scheduled_for' | 'next_run_at'> {
  return {
    id: newId.schedule(),
    protocol_id: sender.protocol.id,
    environment: sender.environment,
    wallet: input.wallet,
    subject: input.subject,
    body: input.body,
    category: input.category,
    priority: input.priority ?? 'normal',
    preferred_channel: input.preferredChannel ?? null,
    write_receipt: input.receipt ?? false,
    template_id: input.templateId ?? null,
    template_variables: input.templateVariables ?? null,
    timezone: zone,
    created_at: deps.now(),
  };
}

const LAST_INSTANT = Date.UTC(9999, 11, 31);

/**
 * POST /v1/schedule: one send at the wall-clock `scheduledFor` in `timezone`. Without a timezone,
 * `scheduledFor` means the instant it writes (its offset applies; none or `Z` is UTC).
 */
export async function createOneTimeSchedule(deps: Deps, sender: Sender, input: OneTimeScheduleInput, key?: CreationKey): Promise<Keyed<CreatedSchedule>> {
  const before = await answeredBefore<CreatedSchedule>(deps.db, key);
  if (before) return { answer: before, replayed: true };
  const zone = zoneOf(input.timezone ?? 'UTC');
  const written = parseWallClock(input.scheduledFor);
  if (written === undefined) {
    throw new ApiError('VALIDATION_ERROR', `scheduledFor must be an ISO 8601 date-time such as 2027-06-01T09:00:00, got "${input.scheduledFor}"`);
  }
  const local = input.timezone === undefined ? written - (writtenOffset(input.scheduledFor) ?? 0) : written;
  const runAt = instantOfWallClock(local, zone);
  // Past year 9999 neither the instant nor its wall clock can be stored or written in ISO 8601.
  if (Math.max(runAt.getTime(), local) >= LAST_INSTANT) {
    throw new ApiError('VALIDATION_ERROR', `scheduledFor must be before 9999-12-31T00:00:00Z, got "${input.scheduledFor}"`);
  }
  const now = deps.now();
  if (runAt <= now) {
    throw new ApiError('VALIDATION_ERROR', `scheduledFor must be in the future: ${input.scheduledFor} in ${zone} is ${formatInstant(runAt)}, now is ${formatInstant(now)}`);
  }
  await checkSendable(deps, sender, input);
  const row: NewSchedule = { ...rowFor(deps, sender, input, zone), kind: 'once', cron_expr: null, scheduled_for: formatWallClock(local), next_run_at: runAt };
  return store(deps, row, key);
}

/** POST /v1/schedule/cron: a send at every occurrence of `cronExpr` in `timezone`. */
export async function createCronSchedule(deps: Deps, sender: Sender, input: CronScheduleInput, key?: CreationKey): Promise<Keyed<CreatedSchedule>> {
  const before = await answeredBefore<CreatedSchedule>(deps.db, key);
  if (before) return { answer: before, replayed: true };
  const zone = zoneOf(input.timezone);
  let spec;
  try {
    spec = parseCron(input.cronExpr);
  } catch (error) {
    if (error instanceof CronSyntaxError) throw new ApiError('VALIDATION_ERROR', error.message);
    throw error;
  }
  const next = nextOccurrence(spec, zone, deps.now());
  // parseCron refuses expressions that never fire; this only guards the nine-year search horizon.
  if (!next) throw new ApiError('VALIDATION_ERROR', `cronExpr "${spec.source}" does not fire within nine years`);
  await checkSendable(deps, sender, input);
  const row: NewSchedule = { ...rowFor(deps, sender, input, zone), kind: 'cron', cron_expr: spec.source, scheduled_for: null, next_run_at: next };
  return store(deps, row, key);
}
