import type { Database } from '../db/connection.js';
import { recordEvent } from '../events/record-event.js';
import { tierOf } from '../tiers.js';
import { markQuotaExceeded, periodOf, sendsThisPeriod, type QuotaProtocol } from './quota.js';

/**
 * Writes the period's single quota.exceeded event, the first time a send is refused for quota.
 * `requested` is what the refused request needed: usage may still be under the limit (a bulk of
 * 3 with 2 sends left is refused whole), and the event says why it was refused.
 */
export async function recordQuotaExceeded(db: Database, protocol: QuotaProtocol, now: Date, requested: number): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await markQuotaExceeded(tx, protocol.id, now))) return;
    const { start, next } = periodOf(now);
    await recordEvent(tx, {
      protocolId: protocol.id,
      type: 'quota.exceeded',
      now,
      data: {
        protocol_id: protocol.id,
        period: start.toISOString().slice(0, 7),
        period_start: start.toISOString(),
        resets_at: next.toISOString(),
        limit: tierOf(protocol.tier).monthlySends,
        usage: await sendsThisPeriod(tx, protocol.id, now),
        requested,
        exceeded_at: now.toISOString(),
      },
    });
  });
}
