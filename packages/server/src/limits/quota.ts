import type { Queryable } from '../db/connection.js';
import { tierOf } from '../tiers.js';

export interface QuotaProtocol {
  id: string;
  tier: number;
  overage_enabled: boolean;
}

/** First instant of the UTC calendar month containing `now`, and of the next one. */
export function periodOf(now: Date): { start: Date; next: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, next };
}

const isoDate = (date: Date) => date.toISOString().slice(0, 10);

/**
 * Reserves `count` sends in the protocol's current period in one statement: the row lock makes
 * concurrent reservations queue, and the limit sits in the statement's WHERE, so the counter can
 * never pass the quota (unless overage is on). Returns false when the reservation does not fit.
 * Run it inside the transaction that writes the notifications so both commit or neither does.
 */
export async function reserveSends(db: Queryable, protocol: QuotaProtocol, count: number, now: Date): Promise<boolean> {
  if (count === 0) return true;
  const limit = protocol.overage_enabled ? null : tierOf(protocol.tier).monthlySends;
  const period = isoDate(periodOf(now).start);
  const rows = await db.query(
    `INSERT INTO usage_periods AS u (protocol_id, period_start, sends)
     SELECT $1, $2::date, $3::int WHERE $4::int IS NULL OR $3::int <= $4::int
     ON CONFLICT (protocol_id, period_start) DO UPDATE SET sends = u.sends + EXCLUDED.sends
       WHERE $4::int IS NULL OR u.sends + EXCLUDED.sends <= $4::int
     RETURNING sends`,
    [protocol.id, period, count, limit],
  );
  return rows.length === 1;
}

/**
 * Marks the period as exceeded; true only for the first caller of the period, who then writes
 * the one quota.exceeded event.
 */
export async function markQuotaExceeded(db: Queryable, protocolId: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO usage_periods AS u (protocol_id, period_start, sends, quota_exceeded_at)
     VALUES ($1, $2::date, 0, $3)
     ON CONFLICT (protocol_id, period_start) DO UPDATE SET quota_exceeded_at = EXCLUDED.quota_exceeded_at
       WHERE u.quota_exceeded_at IS NULL
     RETURNING quota_exceeded_at`,
    [protocolId, isoDate(periodOf(now).start), now],
  );
  return rows.length === 1;
}

export async function sendsThisPeriod(db: Queryable, protocolId: string, now: Date): Promise<number> {
  const [row] = await db.query<{ sends: number }>(
    'SELECT sends FROM usage_periods WHERE protocol_id = $1 AND period_start = $2::date',
    [protocolId, isoDate(periodOf(now).start)],
  );
  return row?.sends ?? 0;
}
