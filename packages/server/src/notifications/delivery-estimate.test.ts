import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busyThroughout, estimateDeliveryMs, MAX_ESTIMATE_MS, nextRate, nextSampleDelayMs } from './delivery-estimate.js';

describe('estimateDeliveryMs', () => {
  it('is one hand-off when the queue is empty', () => {
    assert.equal(estimateDeliveryMs('email', { depth: 0, ratePerSecond: 100, latencyMs: 250 }), 250);
  });

  it('grows with the queue ahead and shrinks with throughput', () => {
    assert.equal(estimateDeliveryMs('email', { depth: 1000, ratePerSecond: 100, latencyMs: 250 }), 10_250);
    assert.equal(estimateDeliveryMs('email', { depth: 1000, ratePerSecond: 1000, latencyMs: 250 }), 1_250);
  });

  it('is at most a day, however slow the queue', () => {
    assert.equal(estimateDeliveryMs('sms', { depth: 10, ratePerSecond: 1e-12, latencyMs: 250 }), MAX_ESTIMATE_MS);
    assert.ok(Number.isSafeInteger(estimateDeliveryMs('sms', { depth: 10, ratePerSecond: Number.MIN_VALUE, latencyMs: 250 })));
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

describe('nextRate', () => {
  it('takes a busy window as what the workers can do, weighted with what came before', () => {
    assert.equal(nextRate(0, 200, true, 50), 200);
    assert.equal(nextRate(100, 200, true, 50), 130);
    assert.equal(nextRate(100, 0, true, 50), 70, 'a queue that does not move slows the estimate');
  });

  it('never lowers the rate after a window in which the queue emptied: deliveries were bounded by arrivals', () => {
    assert.equal(nextRate(100, 2, false, 50), 100);
    assert.equal(nextRate(0, 2, false, 50), 0, 'the default stays in place of a rate never measured');
  });

  it('raises it when even such a window delivered faster', () => {
    assert.equal(nextRate(100, 200, false, 50), 130);
    assert.equal(nextRate(0, 300, false, 50), 300);
    assert.equal(nextRate(0, 40, false, 50), 0);
  });
});

describe('busyThroughout', () => {
  it('is a backlog the workers did not get through: due at both ends, and fewer delivered than were due at the start', () => {
    assert.equal(busyThroughout(5000, 300, 4800), true);
    assert.equal(busyThroughout(1, 0, 1), true, 'a message that did not move');
  });

  it('is not light traffic: each window starts and ends with the one message just sent', () => {
    assert.equal(busyThroughout(1, 1, 1), false);
    assert.equal(busyThroughout(2, 2, 2), false);
  });

  it('is not a window that ended with nothing due', () => {
    assert.equal(busyThroughout(500, 100, 0), false);
  });
});
