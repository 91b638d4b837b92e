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

/** One INSERT for the batch, its messages sent as one JSON parameter (cheaper to encode than text arrays of whole emails). */
export async function insertCaptured(db: Queryable, captured: CapturedMessage[]): Promise<void> {
  if (captured.length === 0) return;
  const rows = captured.map(({ id, message: m }) => ({
    id,
    protocol_id: m.meta.protocolId,
    notification_id: m.meta.notificationId ?? null,
    environment: m.meta.environment,
    wallet: m.meta.wallet,
    channel: m.channel,
    subject: m.subject ?? null,
    html: m.html ?? null,
    text: m.text,
  }));
  await db.query(
    `INSERT INTO captured_messages (id, protocol_id, notification_id, environment, wallet, channel, subject, html, text)
     SELECT id, protocol_id, notification_id, environment, wallet, channel, subject, html, text
     FROM json_to_recordset($1::json)
       AS r(id text, protocol_id text, notification_id text, environment text, wallet text, channel text, subject text, html text, text text)`,
    [JSON.stringify(rows)],
  );
}
