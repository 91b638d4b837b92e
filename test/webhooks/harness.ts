/**
 * A gateway on a fake clock with no background loops (HERALD_ROLE=api), plus a dispatcher the test
 * drives by hand: every pass is explicit, so retries are checked without sleeping or racing.
 */
import assert from 'node:assert/strict';
import type { EventType } from '../../packages/server/src/events/record-event.js';
import { recordEvent } from '../../packages/server/src/events/record-event.js';
import { WebhookDispatcher } from '../../packages/server/src/webhooks/dispatcher.js';
import { notificationEventData } from '../../packages/server/src/webhooks/event-payloads.js';
import { WebhookSender } from '../../packages/server/src/webhooks/webhook-sender.js';
import { call, startGateway, type TestGateway } from '../support/gateway.js';

export const TIMEOUT_MS = 400;
export const WALLET = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';

export interface Harness {
  gw: TestGateway;
  clock: { now: Date; advance(ms: number): void };
  dispatcher: WebhookDispatcher;
  /** Passes until nothing is due, waiting for every request in flight. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const clock = {
    now: new Date('2026-03-02T10:00:00.000Z'),
    advance(ms: number) {
      clock.now = new Date(clock.now.getTime() + ms);
    },
  };
  const now = () => clock.now;
  const gw = await startGateway({
    env: { HERALD_ROLE: 'api', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true', HERALD_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), ...env },
    now,
  });
  const config = gw.herald.deps.config;
  const sender = new WebhookSender({ allowPrivate: config.allowPrivateWebhooks, timeoutMs: config.webhookTimeoutMs, now });
  const dispatcher = new WebhookDispatcher(gw.herald.deps, { sender, batchSize: 50 });
  return {
    gw,
    clock,
    dispatcher,
    async drain() {
      for (;;) {
        const handled = await dispatcher.pass();
        await dispatcher.idle();
        if (handled === 0) return;
      }
    },
    async close() {
      await dispatcher.stop();
      sender.close();
      await gw.close();
    },
  };
}

export async function registerHook(h: Harness, key: string, url: string, events: EventType[]): Promise<{ id: string; secret: string }> {
  const res = await call(h.gw.url, key, 'POST', '/v1/webhooks', { url, events });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** A notification event written the way the delivery worker writes it. */
export async function recordNotificationEvent(
  h: Harness,
  protocolId: string,
  type: 'notification.delivered' | 'notification.bounced' | 'notification.failed' = 'notification.delivered',
  notificationId = `n${Date.now()}${Math.random().toString(36).slice(2, 8)}`,
): Promise<string> {
  const data = notificationEventData(type, {
    notificationId,
    wallet: WALLET,
    channel: 'email',
    deliveredAt: h.clock.now,
    reason: type === 'notification.delivered' ? undefined : 'mailbox full',
    attempts: type === 'notification.delivered' ? undefined : 3,
  });
  return recordEvent(h.gw.herald.deps.db, { protocolId, type, data, now: h.clock.now });
}

export async function deliveriesOf(h: Harness, key: string, hookId: string, query = ''): Promise<any> {
  const res = await call(h.gw.url, key, 'GET', `/v1/webhooks/${hookId}/deliveries${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}
