import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planContact } from './plan-contact.js';

describe('planContact', () => {
  const verified = { value: 'a@example.com', verified: true };
  const pending = { value: 'a@example.com', verified: false };
  const none = { value: null, verified: false };

  it('leaves an omitted contact, and any replacement in waiting, alone', () => {
    assert.deepEqual(planContact(verified, undefined), { value: undefined, verified: true, replacement: undefined, sendCodeTo: undefined });
    assert.deepEqual(planContact(pending, undefined), { value: undefined, verified: false, replacement: undefined, sendCodeTo: undefined });
  });

  it('removes a contact given as null, with its replacement', () => {
    assert.deepEqual(planContact(verified, null), { value: null, verified: false, replacement: null, sendCodeTo: undefined });
  });

  it('keeps a verified contact given again (withdrawing a replacement), and re-sends a code for a pending one', () => {
    assert.deepEqual(planContact(verified, 'a@example.com'), { value: 'a@example.com', verified: true, replacement: null, sendCodeTo: undefined });
    assert.deepEqual(planContact(pending, 'a@example.com'), { value: 'a@example.com', verified: false, replacement: null, sendCodeTo: 'a@example.com' });
  });

  it('reads a contact written in another case as the same one, keeping its verification and taking the new spelling', () => {
    assert.deepEqual(planContact(verified, 'A@Example.COM'), { value: 'A@Example.COM', verified: true, replacement: null, sendCodeTo: undefined });
    assert.deepEqual(planContact(pending, 'A@example.com'), { value: 'A@example.com', verified: false, replacement: null, sendCodeTo: 'A@example.com' });
  });

  it('makes a new contact, or one replacing an unverified contact, pending with a code', () => {
    assert.deepEqual(planContact(none, 'b@example.com'), { value: 'b@example.com', verified: false, replacement: null, sendCodeTo: 'b@example.com' });
    assert.deepEqual(planContact(pending, 'b@example.com'), { value: 'b@example.com', verified: false, replacement: null, sendCodeTo: 'b@example.com' });
  });

  it('keeps a verified contact serving while its replacement waits for a code', () => {
    assert.deepEqual(planContact(verified, 'b@example.com'), { value: undefined, verified: true, replacement: 'b@example.com', sendCodeTo: 'b@example.com' });
  });
});
