/**
 * A gateway on a hand-moved clock for schedule tests. It runs the api role only, so no background
 * loop fires anything behind the test's back: the test moves the clock and calls the firing pass.
 */
import { fireDueSchedules, DEFAULT_FIRE_OPTIONS, type FireOptions } from '../../packages/server/src/schedules/fire-schedules.js';
import { call, startGateway, type TestGateway } from '../support/gateway.js';

export interface ClockGateway extends TestGateway {
  /** The gateway's now(). */
  clock(): Date;
  setClock(iso: string | Date): void;
  advance(ms: number): Date;
  /** One firing pass at the current clock; returns how many schedules it claimed. */
  fire(options?: Partial<FireOptions>): Promise<number>;
  /** Passes until nothing is due. */
  fireAll(): Promise<number>;
}

export async function startClockGateway(startIso: string, env: Record<string, string> = {}): Promise<ClockGateway> {
  let now = new Date(startIso);
  const gw = await startGateway({ now: () => now, env: { HERALD_ROLE: 'api', ...env } });
  const fire = (options: Partial<FireOptions> = {}) => fireDueSchedules(gw.herald.deps, { ...DEFAULT_FIRE_OPTIONS, ...options });
  return {
    ...gw,
    clock: () => now,
    setClock(iso) {
      now = new Date(iso);
    },
    advance(ms) {
      now = new Date(now.getTime() + ms);
      return now;
    },
    fire,
    async fireAll() {
      let total = 0;
      for (let n = await fire(); n > 0; n = await fire()) total += n;
      return total;
    },
  };
}

export const message = (category = 'defi') => ({ subject: 'Rewards ready', body: 'Claim your **staking rewards**.', category });

export async function createOnce(gw: TestGateway, key: string, wallet: string, scheduledFor: string, extra: Record<string, unknown> = {}) {
  const res = await call(gw.url, key, 'POST', '/v1/schedule', { wallet, ...message(), scheduledFor, ...extra });
  if (res.status !== 201) throw new Error(`creating a schedule failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; status: string; nextRunAt: string };
}

export async function createCron(gw: TestGateway, key: string, wallet: string, cronExpr: string, extra: Record<string, unknown> = {}) {
  const res = await call(gw.url, key, 'POST', '/v1/schedule/cron', { wallet, ...message(), cronExpr, ...extra });
  if (res.status !== 201) throw new Error(`creating a cron schedule failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; status: string; nextRunAt: string };
}

/** The notifications a schedule has produced, by its idempotency keys. */
export async function notificationsOf(gw: TestGateway, scheduleId: string) {
  return gw.herald.deps.db.query<{ id: string; idempotency_key: string; schedule_id: string | null; status: string; created_at: Date }>(
    `SELECT id, idempotency_key, schedule_id, status, created_at FROM notifications WHERE idempotency_key LIKE $1 ORDER BY idempotency_key`,
    [`${scheduleId}:%`],
  );
}

export async function runsOf(gw: TestGateway, scheduleId: string) {
  return gw.herald.deps.db.query<{ occurrence: Date; notification_id: string | null; outcome: string; error: string | null }>(
    'SELECT occurrence, notification_id, outcome, error FROM schedule_runs WHERE schedule_id = $1 ORDER BY occurrence',
    [scheduleId],
  );
}
