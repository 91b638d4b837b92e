import type { Queryable } from '../db/connection.js';
import { newId } from '../ids.js';
import type { ChannelProvider, OutboundMessage, SendOutcome } from './provider.js';

export interface CapturedMessage {
  id: string;
  message: OutboundMessage;
}

/**
 * Keeps the rendered message instead of sending it: used by sandbox keys and by channels with no
 * provider configured. The contact address is not stored, only the wallet it belongs to.
 */
export class CaptureProvider implements ChannelProvider {
  readonly name = 'capture';

  constructor(private readonly db: Queryable) {}

  async send(message: OutboundMessage): Promise<SendOutcome> {
    const captured = this.capture(message);
    await insertCaptured(this.db, [captured]);
    return captured.outcome;
  }

  /**
   * The capture of a message without writing it, so the delivery worker can store a batch of
   * captures in the transaction that records their outcomes.
   */
  capture(message: OutboundMessage): CapturedMessage & { outcome: SendOutcome } {
    const id = newId.capture();
    return { id, message, outcome: { kind: 'delivered', providerResponse: `captured ${id}` } };
  }
}

export async function insertCaptured(db: Queryable, captured: CapturedMessage[]): Promise<void> {
  if (captured.length === 0) return;
  const col = <T>(pick: (m: OutboundMessage) => T) => captured.map((c) => pick(c.message));
  await db.query(
    `INSERT INTO captured_messages (id, protocol_id, notification_id, environment, wallet, channel, subject, html, text)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
    [
      captured.map((c) => c.id),
      col((m) => m.meta.protocolId),
      col((m) => m.meta.notificationId ?? null),
      col((m) => m.meta.environment),
      col((m) => m.meta.wallet),
      col((m) => m.channel),
      col((m) => m.subject ?? null),
      col((m) => m.html ?? null),
      col((m) => m.text),
    ],
  );
}
