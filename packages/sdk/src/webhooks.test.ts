import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { runInNewContext } from 'node:vm';
import Stripe from 'stripe';
import { signWebhookPayload, verifyWebhookSignature } from './webhooks.js';

const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64url');
const body = '{"id":"evt_01","type":"notification.delivered","created":1772000000,"data":{"wallet":"Ünïcødé"}}';
const t = 1_772_000_000;
const now = t * 1000;
const hex = (payload: string, key = secret) => createHmac('sha256', key).update(payload).digest('hex');

describe('verifyWebhookSignature', () => {
  it('accepts the header Herald sends', () => {
    assert.equal(verifyWebhookSignature(body, `t=${t},v1=${hex(`${t}.${body}`)}`, secret, { now }), true);
  });

  it('accepts the raw body as bytes, the same as the string', () => {
    const header = signWebhookPayload(body, secret, t);
    assert.equal(verifyWebhookSignature(new TextEncoder().encode(body), header, secret, { now }), true);
    assert.equal(verifyWebhookSignature(Buffer.from(body), header, secret, { now: new Date(now) }), true);
  });

  it('signs bytes that are not valid UTF-8 as they are', () => {
    const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    const header = signWebhookPayload(bytes, secret, t);
    assert.equal(verifyWebhookSignature(bytes, header, secret, { now }), true);
    assert.equal(verifyWebhookSignature(new TextDecoder().decode(bytes), header, secret, { now }), false);
  });

  it('rejects a tampered body', () => {
    const header = signWebhookPayload(body, secret, t);
    assert.equal(verifyWebhookSignature(body.replace('delivered', 'bounced'), header, secret, { now }), false);
    assert.equal(verifyWebhookSignature(body + ' ', header, secret, { now }), false);
    assert.equal(verifyWebhookSignature(JSON.stringify(JSON.parse(body), null, 2), header, secret, { now }), false);
  });

  it('rejects another secret and a tampered timestamp', () => {
    const header = signWebhookPayload(body, secret, t);
    assert.equal(verifyWebhookSignature(body, header, secret + 'x', { now }), false);
    assert.equal(verifyWebhookSignature(body, header.replace(`t=${t}`, `t=${t + 1}`), secret, { now }), false);
  });

  it('rejects stale and future timestamps beyond the tolerance, either side', () => {
    const header = signWebhookPayload(body, secret, t);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now + 300_000 }), true);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now + 301_000 }), false);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now - 300_000 }), true);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now - 301_000 }), false);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now + 3_600_000, toleranceSeconds: 3600 }), true);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now + 5_000, toleranceSeconds: 4 }), false);
  });

  it('uses the clock when no time is given', () => {
    assert.equal(verifyWebhookSignature(body, signWebhookPayload(body, secret), secret), true);
    assert.equal(verifyWebhookSignature(body, signWebhookPayload(body, secret, t), secret), false);
  });

  it('accepts any of several v1 entries and ignores other schemes', () => {
    const good = hex(`${t}.${body}`);
    const other = hex(`${t}.${body}`, 'whsec_old');
    assert.equal(verifyWebhookSignature(body, `t=${t},v1=${other},v1=${good}`, secret, { now }), true);
    assert.equal(verifyWebhookSignature(body, `t=${t}, v0=abc, v1=${good}`, secret, { now }), true);
    assert.equal(verifyWebhookSignature(body, `t=${t},v0=${good}`, secret, { now }), false);
  });

  const malformed: [string, string | undefined | null][] = [
    ['missing header', undefined],
    ['null header', null],
    ['empty header', ''],
    ['no timestamp', `v1=${hex(`${t}.${body}`)}`],
    ['no signature', `t=${t}`],
    ['two timestamps', `t=${t},t=${t},v1=${hex(`${t}.${body}`)}`],
    ['non-numeric timestamp', `t=abc,v1=${hex(`abc.${body}`)}`],
    ['upper-case hex', `t=${t},v1=${hex(`${t}.${body}`).toUpperCase()}`],
    ['short signature', `t=${t},v1=${hex(`${t}.${body}`).slice(0, 63)}`],
    ['garbage', 'hello world'],
  ];
  for (const [name, header] of malformed) {
    it(`returns false for a ${name}`, () => assert.equal(verifyWebhookSignature(body, header, secret, { now }), false));
  }

  it('throws a TypeError without a secret (a programming error, not a bad request)', () => {
    assert.throws(() => verifyWebhookSignature(body, signWebhookPayload(body, secret, t), ''), TypeError);
  });

  it('throws a TypeError for a tolerance that is not a finite, non-negative number', () => {
    const header = signWebhookPayload(body, secret, t);
    for (const toleranceSeconds of [NaN, Infinity, -Infinity, -1, '300' as unknown as number]) {
      assert.throws(() => verifyWebhookSignature(body, header, secret, { now: now + 3_600_000, toleranceSeconds }), TypeError, String(toleranceSeconds));
    }
    assert.equal(verifyWebhookSignature(body, header, secret, { now, toleranceSeconds: 0 }), true);
    assert.equal(verifyWebhookSignature(body, header, secret, { now: now + 1000, toleranceSeconds: 0 }), false);
  });

  it('signs the timestamp exactly as written in the header', () => {
    const written = `0${t}`;
    assert.equal(verifyWebhookSignature(body, `t=${written},v1=${hex(`${written}.${body}`)}`, secret, { now }), true);
    assert.equal(verifyWebhookSignature(body, `t=${written},v1=${hex(`${t}.${body}`)}`, secret, { now }), false);
  });

  it('returns false for a body that is neither a string nor bytes', () => {
    const header = signWebhookPayload(body, secret, t);
    for (const parsed of [JSON.parse(body), undefined, null, 42, [body], new Uint16Array(4)]) {
      assert.equal(verifyWebhookSignature(parsed as string, header, secret, { now }), false);
    }
  });

  it('takes bytes made in another realm (a test runner VM) as bytes', () => {
    const foreign = runInNewContext('new Uint8Array(length)', { length: Buffer.byteLength(body) }) as Uint8Array;
    foreign.set(Buffer.from(body));
    assert.equal(foreign instanceof Uint8Array, false);
    assert.equal(verifyWebhookSignature(foreign, signWebhookPayload(body, secret, t), secret, { now }), true);
  });

  it('throws a TypeError for an invalid clock, which would disable the age check', () => {
    const header = signWebhookPayload(body, secret, t);
    for (const bad of [NaN, new Date('nope'), Infinity]) {
      assert.throws(() => verifyWebhookSignature(body, header, secret, { now: bad }), TypeError, String(bad));
    }
  });

  it('says what it needs where node:crypto cannot be had', () => {
    const original = process.getBuiltinModule;
    try {
      (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
      assert.throws(() => verifyWebhookSignature(body, signWebhookPayload(body, secret, t), secret), /node:crypto/);
    } finally {
      process.getBuiltinModule = original;
    }
  });

  it("agrees with stripe's constructEvent in both directions", () => {
    const stripe = new Stripe('sk_test_unused');
    const ours = signWebhookPayload(body, secret, t);
    assert.equal((stripe.webhooks.constructEvent(body, ours, secret, 300, undefined, now) as unknown as { id: string }).id, 'evt_01');
    const theirs = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: t });
    assert.equal(verifyWebhookSignature(body, theirs, secret, { now }), true);
  });
});
