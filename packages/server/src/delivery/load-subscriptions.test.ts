import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { subscriptionRefusal } from './load-subscriptions.js';

describe('subscriptionRefusal', () => {
  it('lets a wallet without a subscription, or one that lists the channel, be sent to', () => {
    assert.equal(subscriptionRefusal(undefined, 'email', false), undefined);
    assert.equal(subscriptionRefusal({ subscribed: true, channels: ['email', 'sms'] }, 'email', false), undefined);
  });

  it('ends every message of an opted-out wallet opted_out, its SMS fallback included', () => {
    for (const isFallback of [false, true]) {
      assert.deepEqual(subscriptionRefusal({ subscribed: false, channels: ['email'] }, isFallback ? 'sms' : 'email', isFallback), {
        status: 'opted_out',
        reason: "the wallet opted out of this protocol's messages before delivery",
      });
    }
  });

  it('fails a first choice the subscription does not list, but not the SMS fallback', () => {
    assert.deepEqual(subscriptionRefusal({ subscribed: true, channels: ['telegram'] }, 'email', false), {
      status: 'failed',
      reason: "the wallet's subscription does not include email",
    });
    assert.equal(subscriptionRefusal({ subscribed: true, channels: ['telegram'] }, 'sms', true), undefined);
  });
});
