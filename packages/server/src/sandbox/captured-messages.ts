import { Type } from '@sinclair/typebox';
import { countAndPage } from '../db/count-and-page.js';
import type { Queryable } from '../db/connection.js';
import type { Channel } from '../channels/provider.js';

export const CapturedMessage = Type.Object({
  id: Type.String(),
  notificationId: Type.Union([Type.String(), Type.Null()]),
  environment: Type.String(),
  wallet: Type.String(),
  channel: Type.String(),
  subject: Type.Union([Type.String(), Type.Null()]),
  html: Type.Union([Type.String(), Type.Null()]),
  text: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

export interface CapturedFilter {
  /** One protocol's messages (`herald`: the gateway's own, such as verification codes); all when undefined. */
  protocolId?: string;
  wallet?: string;
  channel?: Channel;
}

interface CapturedRow {
  id: string;
  protocol_id: string;
  notification_id: string | null;
  environment: string;
  wallet: string;
  channel: string;
  subject: string | null;
  html: string | null;
  text: string;
  created_at: Date;
}

/** A page of what the capture provider kept, newest first, with each message's protocol. */
export async function listCapturedMessages(db: Queryable, filter: CapturedFilter, page: number, limit: number) {
  const params: unknown[] = [filter.protocolId ?? null, filter.wallet ?? null, filter.channel ?? null];
  const where = '($1::text IS NULL OR protocol_id = $1) AND ($2::text IS NULL OR wallet = $2) AND ($3::text IS NULL OR channel = $3)';
  const { rows, total } = await countAndPage<CapturedRow>(
    db,
    { text: `SELECT count(*)::int AS total FROM captured_messages WHERE ${where}`, params },
    { text: `SELECT * FROM captured_messages WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`, params: [...params, limit, (page - 1) * limit] },
  );
  return {
    data: rows.map((r) => ({
      protocolId: r.protocol_id,
      id: r.id,
      notificationId: r.notification_id,
      environment: r.environment,
      wallet: r.wallet,
      channel: r.channel,
      subject: r.subject,
      html: r.html,
      text: r.text,
      createdAt: r.created_at.toISOString(),
    })),
    total,
    page,
  };
}
