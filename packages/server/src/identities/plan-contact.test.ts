import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planContact } from './plan-contact.js';

describe('planContact', () => {
  const verified = { value: 'a@example.com', verified: true };
  const pending = { value: 'a@example.com', verified: false };
  const none = { value: null, verified: false };

  it('leaves an omitted contact alone', () => {
    assert.deepEqual(planContact(verified, undefined), { value: undefined, verified: true, sendCode: false });
    assert.deepEqual(planContact(pending, undefined), { value: undefined, verified: false, sendCode: false });
  });

  it('removes a contact given as null', () => {
    assert.deepEqual(planContact(verified, null), { value: null, verified: false, sendCode: false });
  });

  it('keeps a verified contact given again, and re-sends a code for a pending one', () => {
    assert.deepEqual(planContact(verified, 'a@example.com'), { value: 'a@example.com', verified: true, sendCode: false });
    assert.deepEqual(planContact(pending, 'a@example.com'), { value: 'a@example.com', verified: false, sendCode: true });
  });

  it('reads a contact written in another case as the same one, keeping its verification and taking the new spelling', () => {
    assert.deepEqual(planContact(verified, 'A@Example.COM'), { value: 'A@Example.COM', verified: true, sendCode: false });
    assert.deepEqual(planContact(pending, 'A@example.com'), { value: 'A@example.com', verified: false, sendCode: true });
  });

  it('makes a new or changed contact pending with a code', () => {
    assert.deepEqual(planContact(none, 'b@example.com'), { value: 'b@example.com', verified: false, sendCode: true });
    assert.deepEqual(planContact(verified, 'b@example.com'), { value: 'b@example.com', verified: false, sendCode: true });
  });
});
