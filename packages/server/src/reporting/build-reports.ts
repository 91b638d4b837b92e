/**
 * The three reports. Each covers the caller's protocol only; analytics and engagement also only
 * the caller key's environment (a live key reports production traffic, a sandbox key sandbox
 * traffic). Every rate is a fraction in [0, 1], 0 when its denominator is 0:
 * - delivery_rate = delivered / (delivered + bounced + failed): of the sends that reached a final
 *   delivery outcome, the share delivered. Opted-out sends were never attempted and queued or
 *   sending ones have no outcome yet, so neither counts (they are in total_sends).
 * - bounce_rate = bounced / (delivered + bounced + failed).
 * - openRate, clickRate, unsubscribeRate = delivered emails (created in the range) that were
 *   opened (open pixel loaded), clicked (a tracked link followed), unsubscribed from (one-click
 *   unsubscribe), each email counted once / delivered emails created in the range.
 * Counters are kept per UTC hour, so ranges are whole hours: a period is the current hour and the
 * hours before it (7d: 168 hours), and date-time bounds are widened to the hour.
 */
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { countAudience, countEngagement, countSendsByStatus, countSubscriptionsByDay } from './report-store.js';
import { lastDays, parseDateRange, periodStart, rate, RangeProblem, type Period } from './report-range.js';

type Caller = { protocolId: string; environment: 'production' | 'sandbox' };

export async function buildAnalytics(deps: Pick<Deps, 'db' | 'now'>, caller: Caller, period: Period) {
  const byStatus = await countSendsByStatus(deps.db, caller.protocolId, caller.environment, periodStart(period, deps.now()));
  const count = (status: Parameters<typeof byStatus.get>[0]) => byStatus.get(status) ?? 0;
  const breakdown = { delivered: count('delivered'), failed: count('failed'), opted_out: count('opted_out'), bounced: count('bounced') };
  const settled = breakdown.delivered + breakdown.bounced + breakdown.failed;
  return {
    period,
    total_sends: [...byStatus.values()].reduce((sum, n) => sum + n, 0),
    delivery_rate: rate(breakdown.delivered, settled),
    bounce_rate: rate(breakdown.bounced, settled),
    breakdown,
  };
}

export async function buildEngagement(deps: Pick<Deps, 'db' | 'now'>, caller: Caller, query: { startDate?: string; endDate?: string }) {
  let range: { start: Date; end: Date };
  try {
    range = parseDateRange(query.startDate, query.endDate, deps.now());
  } catch (error) {
    if (error instanceof RangeProblem) throw new ApiError('VALIDATION_ERROR', error.message);
    throw error;
  }
  const counts = await countEngagement(deps.db, caller.protocolId, caller.environment, range.start, range.end);
  return {
    openRate: rate(counts.opened, counts.delivered),
    clickRate: rate(counts.clicked, counts.delivered),
    unsubscribeRate: rate(counts.unsubscribed, counts.delivered),
    deliveredEmails: counts.delivered,
    startDate: range.start.toISOString(),
    endDate: range.end.toISOString(),
  };
}

const TREND_DAYS = 30;

export async function buildAudience(deps: Pick<Deps, 'db' | 'now'>, protocolId: string) {
  const days = lastDays(deps.now(), TREND_DAYS);
  const [audience, byDay] = await Promise.all([
    countAudience(deps.db, protocolId),
    countSubscriptionsByDay(deps.db, protocolId, days[0]),
  ]);
  return {
    totalRegistered: audience.totalRegistered,
    broadcastableSubscribers: audience.broadcastable,
    channelCoverage: { email: audience.email, telegram: audience.telegram, sms: audience.sms },
    registrationTrend: days.map((date) => ({ date, count: byDay.get(date) ?? 0 })),
  };
}
