import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BASE_BACKOFF_MS, MAX_BACKOFF_MS, MAX_RETRY_AFTER_MS, isRetryable, parseRetryAfter, retryDelay } from './retry.js';

describe('isRetryable', () => {
  it('retries 429 for any method, with or without an idempotency key', () => {
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) assert.equal(isRetryable({ status: 429 }, method, false), true);
  });

  it('retries 5xx only when repeating is harmless', () => {
    assert.equal(isRetryable({ status: 503 }, 'GET', false), true);
    assert.equal(isRetryable({ status: 500 }, 'DELETE', false), true);
    assert.equal(isRetryable({ status: 503 }, 'POST', false), false);
    assert.equal(isRetryable({ status: 502 }, 'PATCH', false), false);
    assert.equal(isRetryable({ status: 503 }, 'POST', true), true);
  });

  it('never retries other 4xx', () => {
    for (const status of [400, 401, 402, 403, 404, 409, 413, 415]) {
      assert.equal(isRetryable({ status }, 'GET', true), false, String(status));
    }
  });

  it('retries refused connections and DNS failures always, timeouts and resets when safe', () => {
    assert.equal(isRetryable({ network: 'connection_refused' }, 'POST', false), true);
    assert.equal(isRetryable({ network: 'dns' }, 'POST', false), true);
    assert.equal(isRetryable({ network: 'timeout' }, 'POST', false), false);
    assert.equal(isRetryable({ network: 'timeout' }, 'GET', false), true);
    assert.equal(isRetryable({ network: 'connection_reset' }, 'POST', true), true);
    assert.equal(isRetryable({ network: 'network' }, 'PATCH', false), false);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delta seconds', () => {
    assert.equal(parseRetryAfter('2', now), 2000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('1.5', now), 1500);
  });
  it('reads an HTTP date, never negative', () => {
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now), 0);
  });
  it('ignores missing or unreadable values', () => {
    assert.equal(parseRetryAfter(null, now), undefined);
    assert.equal(parseRetryAfter('', now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-3', now), undefined);
  });
});

describe('retryDelay', () => {
  it('doubles the backoff ceiling each retry, with equal jitter, up to the maximum', () => {
    assert.equal(retryDelay(0, undefined, () => 0), BASE_BACKOFF_MS / 2);
    assert.equal(retryDelay(0, undefined, () => 0.999999), BASE_BACKOFF_MS);
    assert.equal(retryDelay(1, undefined, () => 0), BASE_BACKOFF_MS);
    assert.equal(retryDelay(2, undefined, () => 0.5), Math.round(BASE_BACKOFF_MS * 4 * 0.75));
    assert.equal(retryDelay(30, undefined, () => 1), MAX_BACKOFF_MS);
  });

  it('honours Retry-After, adding at most 10%', () => {
    assert.equal(retryDelay(0, 2000, () => 0), 2000);
    assert.equal(retryDelay(5, 2000, () => 1), 2200);
    assert.equal(retryDelay(0, 0, () => 1), 0);
  });

  it('gives up on a Retry-After too long to wait out', () => {
    assert.equal(retryDelay(0, MAX_RETRY_AFTER_MS + 1, () => 0), undefined);
    assert.equal(retryDelay(0, MAX_RETRY_AFTER_MS, () => 0), MAX_RETRY_AFTER_MS);
  });
});
