import type { Queryable } from '../db/connection.js';
import { newId } from '../ids.js';
import type { ChannelProvider, OutboundMessage, SendOutcome } from './provider.js';

/**
 * Keeps the rendered message instead of sending it: used by sandbox keys and by channels with no
 * provider configured. The contact address is not stored, only the wallet it belongs to.
 */
export class CaptureProvider implements ChannelProvider {
  readonly name = 'capture';

  constructor(private readonly db: Queryable) {}

  async send(message: OutboundMessage): Promise<SendOutcome> {
    const id = newId.capture();
    await this.db.query(
      `INSERT INTO captured_messages (id, protocol_id, notification_id, environment, wallet, channel, subject, html, text)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        id,
        message.meta.protocolId,
        message.meta.notificationId ?? null,
        message.meta.environment,
        message.meta.wallet,
        message.channel,
        message.subject ?? null,
        message.html ?? null,
        message.text,
      ],
    );
    return { kind: 'delivered', providerResponse: `captured ${id}` };
  }
}
