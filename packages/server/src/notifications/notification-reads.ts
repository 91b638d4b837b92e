import type { Channel } from '../channels/provider.js';
import { countAndPage, type Statement } from '../db/count-and-page.js';
import type { Queryable } from '../db/connection.js';
import type { NotificationStatus } from './notification-store.js';

export interface NotificationRow {
  id: string;
  protocol_id: string;
  environment: string;
  wallet: string;
  subject: string;
  body: string;
  category: string;
  priority: string;
  preferred_channel: string | null;
  channel: Channel | null;
  fallback_channel: Channel | null;
  status: NotificationStatus;
  template_id: string | null;
  template_version: number | null;
  template_variables: Record<string, unknown> | null;
  broadcast_id: string | null;
  schedule_id: string | null;
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  write_receipt: boolean;
  receipt_status: string;
  receipt_requested_at: Date | null;
  receipt_tx: string | null;
  receipt_failure_reason: string | null;
  last_receipt_attempt_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  attempt: number;
  channel: string;
  provider: string;
  outcome: string;
  error: string | null;
  provider_response: string | null;
  duration_ms: number;
  created_at: Date;
}

export async function findNotification(db: Queryable, protocolId: string, id: string): Promise<NotificationRow | undefined> {
  const [row] = await db.query<NotificationRow>('SELECT * FROM notifications WHERE id = $1 AND protocol_id = $2', [id, protocolId]);
  return row;
}

export async function listAttempts(db: Queryable, notificationId: string): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT attempt, channel, provider, outcome, error, provider_response, duration_ms, created_at
     FROM delivery_attempts WHERE notification_id = $1 ORDER BY id`,
    [notificationId],
  );
}

export interface ListQuery {
  protocolId: string;
  page: number;
  limit: number;
  status?: string;
  wallet?: string;
}

/** The two statements of a listing (the total, then the page): a protocol's notifications, newest first. */
export function listStatements(q: ListQuery): { count: Statement; page: Statement } {
  const where = ['protocol_id = $1'];
  const params: unknown[] = [q.protocolId];
  if (q.status) {
    params.push(q.status);
    where.push(`status = $${params.length}`);
  }
  if (q.wallet) {
    params.push(q.wallet);
    where.push(`wallet = $${params.length}`);
  }
  const filter = where.join(' AND ');
  return {
    count: { text: `SELECT count(*)::int AS total FROM notifications WHERE ${filter}`, params },
    page: {
      text: `SELECT id, wallet, subject, status, channel, fallback_channel, receipt_status, receipt_tx, created_at FROM notifications WHERE ${filter}
     ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      params: [...params, q.limit, (q.page - 1) * q.limit],
    },
  };
}

export async function listNotifications(db: Queryable, q: ListQuery) {
  const { count, page } = listStatements(q);
  return countAndPage<NotificationRow>(db, count, page);
}
