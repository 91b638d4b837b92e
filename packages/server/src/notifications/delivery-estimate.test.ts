import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateDeliveryMs, nextSampleDelayMs } from './delivery-estimate.js';

describe('estimateDeliveryMs', () => {
  it('is one hand-off when the queue is empty', () => {
    assert.equal(estimateDeliveryMs('email', { depth: 0, ratePerSecond: 100, latencyMs: 250 }), 250);
  });

  it('grows with the queue ahead and shrinks with throughput', () => {
    assert.equal(estimateDeliveryMs('email', { depth: 1000, ratePerSecond: 100, latencyMs: 250 }), 10_250);
    assert.equal(estimateDeliveryMs('email', { depth: 1000, ratePerSecond: 1000, latencyMs: 250 }), 1_250);
  });

  it('falls back to per-channel defaults before anything was observed', () => {
    const sms = estimateDeliveryMs('sms', { depth: 20, ratePerSecond: 0, latencyMs: 0 });
    const telegram = estimateDeliveryMs('telegram', { depth: 20, ratePerSecond: 0, latencyMs: 0 });
    assert.ok(sms > telegram);
  });
});

describe('nextSampleDelayMs', () => {
  it('samples every second while the queue is short', () => {
    assert.equal(nextSampleDelayMs(0), 1000);
    assert.equal(nextSampleDelayMs(40_000), 1000);
  });

  it('waits longer the more rows a count reads', () => {
    assert.equal(nextSampleDelayMs(200_000), 5000);
    assert.equal(nextSampleDelayMs(1_000_000), 25_000);
  });
});
