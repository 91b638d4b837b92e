import type { Environment } from '../auth/api-keys.js';
import type { Deps } from '../deps.js';
import { recordEvent } from '../events/record-event.js';
import { newId } from '../ids.js';
import { insertLeasedDelivery } from './delivery-log-store.js';
import { recordAttempt } from './delivery-store.js';
import type { EndpointRow } from './endpoint-store.js';
import { eventEnvelope, notificationEventData } from './event-payloads.js';
import { signingSecrets } from './webhook-secret.js';
import type { WebhookSender } from './webhook-sender.js';

/** The wallet of the synthetic event: the all-ones address (Solana's system program), never a recipient. */
export const TEST_WALLET = '11111111111111111111111111111111';

/**
 * Sends a synthetic `notification.delivered` to this endpoint only, at once, signed like any
 * other event, whatever its subscriptions or active flag. The event and its delivery are kept
 * (visible in the delivery log, replayable) but never fanned out nor retried on their own; the
 * endpoint's failure streak is left alone. Answers whether the receiver answered 2xx in time.
 */
export async function sendTestEvent(deps: Deps, sender: WebhookSender, endpoint: EndpointRow, environment: Environment): Promise<{ sent: boolean }> {
  const now = deps.now();
  const deliveryId = newId.webhookDelivery();
  const lease = new Date(now.getTime() + sender.options.timeoutMs + 60_000);
  const data = notificationEventData('notification.delivered', {
    notificationId: `test_${newId.notification()}`,
    wallet: TEST_WALLET,
    channel: 'email',
    deliveredAt: now,
    // The environment of the key that asked for the test.
    environment,
  });
  const eventId = await deps.db.transaction(async (tx) => {
    const id = await recordEvent(tx, { protocolId: endpoint.protocol_id, type: 'notification.delivered', data, now });
    await tx.query('UPDATE events SET fanned_out_at = $2 WHERE id = $1', [id, now]);
    await insertLeasedDelivery(tx, { id: deliveryId, endpointId: endpoint.id, eventId: id, protocolId: endpoint.protocol_id, now, lease });
    return id;
  });
  const body = JSON.stringify(eventEnvelope({ id: eventId, type: 'notification.delivered', data, created_at: now }));
  const result = await sender.send(await sender.target(endpoint.url), signingSecrets(deps.secrets, endpoint, deps.now()), body);
  const finished = deps.now();
  await recordAttempt(deps.db, {
    deliveryId,
    endpointId: endpoint.id,
    lease,
    result,
    attempts: 1,
    status: result.ok ? 'succeeded' : 'failed',
    nextAttemptAt: null,
    now: finished,
    trackEndpointHealth: false,
    deactivateIfFailingSince: null,
    deactivationReason: '',
  });
  return { sent: result.ok };
}
