import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventEnvelope, notificationEventData, receiptConfirmedEventData } from './event-payloads.js';

const deliveredAt = new Date('2026-03-02T10:00:00.123Z');

describe('webhook event payloads', () => {
  it('notification.delivered carries notification_id, wallet, channel, delivered_at and the environment', () => {
    assert.deepEqual(notificationEventData('notification.delivered', { notificationId: 'n1', wallet: 'W', channel: 'telegram', deliveredAt, environment: 'production' }), {
      notification_id: 'n1',
      wallet: 'W',
      channel: 'telegram',
      delivered_at: '2026-03-02T10:00:00.123Z',
      environment: 'production',
    });
  });

  it('refuses a delivered event without its time', () => {
    assert.throws(() => notificationEventData('notification.delivered', { notificationId: 'n1', wallet: 'W', channel: 'sms', environment: 'production' }), RangeError);
  });

  it('bounced and failed carry delivered_at null, reason and attempts', () => {
    for (const type of ['notification.bounced', 'notification.failed'] as const) {
      assert.deepEqual(notificationEventData(type, { notificationId: 'n2', wallet: 'W', channel: 'email', deliveredAt, reason: '550 no such user', attempts: 2, environment: 'sandbox' }), {
        notification_id: 'n2',
        wallet: 'W',
        channel: 'email',
        delivered_at: null,
        environment: 'sandbox',
        reason: '550 no such user',
        attempts: 2,
      });
    }
    assert.deepEqual(notificationEventData('notification.failed', { notificationId: 'n3', wallet: 'W', channel: null, environment: 'production' }), {
      notification_id: 'n3',
      wallet: 'W',
      channel: null,
      delivered_at: null,
      environment: 'production',
      reason: null,
      attempts: 0,
    });
  });

  it('receipt.confirmed adds receipt_tx and confirmed_at', () => {
    const data = receiptConfirmedEventData({
      notificationId: 'n4',
      wallet: 'W',
      channel: 'email',
      deliveredAt,
      receiptTx: '5xTx',
      confirmedAt: new Date('2026-03-02T10:05:00Z'),
      environment: 'production',
    });
    assert.deepEqual(data, {
      notification_id: 'n4',
      wallet: 'W',
      channel: 'email',
      delivered_at: '2026-03-02T10:00:00.123Z',
      environment: 'production',
      receipt_tx: '5xTx',
      confirmed_at: '2026-03-02T10:05:00.000Z',
    });
  });

  it('wraps an event as {id, type, created (Unix seconds), data}', () => {
    const envelope = eventEnvelope({ id: 'evt_1', type: 'quota.exceeded', data: { limit: 1000 }, created_at: new Date('2026-03-02T10:00:00.999Z') });
    assert.deepEqual(envelope, { id: 'evt_1', type: 'quota.exceeded', created: 1772445600, data: { limit: 1000 } });
    assert.deepEqual(Object.keys(envelope), ['id', 'type', 'created', 'data']);
  });

  it("sends data fields in the contract's order whatever order storage gave them (jsonb: shortest key first)", () => {
    const stored = { wallet: 'W', channel: 'email', attempts: 2, reason: 'r', environment: 'sandbox', delivered_at: null, notification_id: 'n', extra: 1 };
    const envelope = eventEnvelope({ id: 'evt_2', type: 'notification.bounced', data: stored, created_at: new Date(0) });
    assert.deepEqual(Object.keys(envelope.data), ['notification_id', 'wallet', 'channel', 'delivered_at', 'environment', 'reason', 'attempts', 'extra']);
    const receipt = eventEnvelope({ id: 'evt_3', type: 'receipt.confirmed', data: { confirmed_at: 'c', receipt_tx: 't', wallet: 'W', notification_id: 'n', channel: 'sms', delivered_at: 'd' }, created_at: new Date(0) });
    assert.deepEqual(Object.keys(receipt.data), ['notification_id', 'wallet', 'channel', 'delivered_at', 'receipt_tx', 'confirmed_at']);
  });
});
