import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import Stripe from 'stripe';
import { signatureHeader } from './sign-payload.js';
import { newWebhookSecret } from './webhook-secret.js';

describe('webhook signature', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'notification.delivered', created: 1_772_000_000, data: { wallet: 'é✓' } });

  it('has the form t=<unix>,v1=<64 lowercase hex>', () => {
    assert.match(signatureHeader(body, 'whsec_abc', 1_772_000_000), /^t=1772000000,v1=[0-9a-f]{64}$/);
  });

  it('is HMAC-SHA256 of "<t>.<body>" keyed with the secret string', () => {
    const secret = newWebhookSecret();
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(`1772000000.${body}`, 'utf8')).digest('hex');
    assert.equal(signatureHeader(body, secret, 1_772_000_000), `t=1772000000,v1=${expected}`);
  });

  it("is accepted by the stripe package's constructEvent", () => {
    const secret = newWebhookSecret();
    const t = Math.floor(Date.now() / 1000);
    const event = new Stripe('sk_test_unused').webhooks.constructEvent(body, signatureHeader(body, secret, t), secret);
    assert.equal((event as unknown as { id: string }).id, 'evt_1');
  });

  it('makes secrets of whsec_ and 32 random bytes in base64url', () => {
    const a = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(a.slice(6), 'base64url').length, 32);
    assert.notEqual(a, newWebhookSecret());
  });
});
