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

let lastPeriod: { from: number; to: number; startDate: string } | undefined;

/**
 * The first day (YYYY-MM-DD) of the UTC calendar month containing `now`, the `date` every usage row
 * is keyed by. Every send asks for it, and nearly always for the month it asked last: that
 * month's bounds and answer are kept.
 */
export function periodStartDate(now: Date): string {
  const time = now.getTime();
  if (!lastPeriod || time < lastPeriod.from || time >= lastPeriod.to) {
    const { start, next } = periodOf(now);
    lastPeriod = { from: start.getTime(), to: next.getTime(), startDate: start.toISOString().slice(0, 10) };
  }
  return lastPeriod.startDate;
}

/** A reservation of `count` sends in the protocol's period containing `now`. */
export interface QuotaReservation {
  protocol: QuotaProtocol;
  count: number;
  now: Date;
}

/**
 * The reservation statement, parameters named by the caller: protocol id, period start (date),
 * count, limit (null when overage is on). It returns a row only when the reservation fits: the row
 * lock makes concurrent reservations queue, and the limit sits in the statement's WHERE, so the
 * counter can never pass the quota.
 */
export const RESERVE_SENDS = (protocolId: string, period: string, count: string, limit: string) => `
     INSERT INTO usage_periods AS u (protocol_id, period_start, sends)
     SELECT ${protocolId}, ${period}::date, ${count}::int WHERE ${count}::int > 0 AND (${limit}::int IS NULL OR ${count}::int <= ${limit}::int)
     ON CONFLICT (protocol_id, period_start) DO UPDATE SET sends = u.sends + EXCLUDED.sends
       WHERE ${limit}::int IS NULL OR u.sends + EXCLUDED.sends <= ${limit}::int
     RETURNING sends`;

export function reservationParams({ protocol, count, now }: QuotaReservation): unknown[] {
  const limit = protocol.overage_enabled ? null : tierOf(protocol.tier).monthlySends;
  return [protocol.id, periodStartDate(now), count, limit];
}

/**
 * Reserves `count` sends in the protocol's current period in one statement (RESERVE_SENDS).
 * Returns false when the reservation does not fit. Run it inside the transaction that writes the
 * notifications so both commit or neither does.
 */
export async function reserveSends(db: Queryable, protocol: QuotaProtocol, count: number, now: Date): Promise<boolean> {
  if (count === 0) return true;
  const rows = await db.query(RESERVE_SENDS('$1', '$2', '$3', '$4'), reservationParams({ protocol, count, now }));
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
    [protocolId, periodStartDate(now), now],
  );
  return rows.length === 1;
}

export async function sendsThisPeriod(db: Queryable, protocolId: string, now: Date): Promise<number> {
  const [row] = await db.query<{ sends: number }>(
    'SELECT sends FROM usage_periods WHERE protocol_id = $1 AND period_start = $2::date',
    [protocolId, periodStartDate(now)],
  );
  return row?.sends ?? 0;
}

/** Thrown inside a send's transaction when its reservation does not fit: `needed` sends were asked. */
export class QuotaRefused extends Error {
  constructor(readonly needed: number) {
    super(`a reservation of ${needed} sends did not fit the monthly quota`);
  }
}

/** The 402 message: what was asked against the month's limit (what is left moves with other requests). */
export function quotaRefusal(limit: number, needed: number, what: 'request' | 'broadcast'): string {
  return `This ${what} needs ${needed} send${needed === 1 ? '' : 's'} and fewer are left of the monthly quota of ${limit}`;
}
