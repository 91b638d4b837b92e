import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, atNextSecond, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { legacyPayloadHash } from '../../packages/server/src/notifications/payload-hash.js';
import { importIdentity, makeWallet, registeredWallet } from '../support/wallets.js';
import { unsubscribe, upsertSubscription } from '../../packages/server/src/subscriptions/subscription-store.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('POST /v1/notify', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let other: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startGateway({ env: { HERALD_BODY_LIMIT: '524288' } });
    acme = await gw.createProtocol({ tier: 3 });
    other = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'a@example.com' });
  });
  after(() => gw.close());

  const send = (body: unknown, key = acme.apiKey) => call(gw.url, key, 'POST', '/v1/notify', body);
  const valid = () => ({ wallet, subject: 'Liquidation warning', body: 'Your **health factor** is 1.05', category: 'defi' });

  it('queues a notification to a registered wallet', async () => {
    const res = await send(valid());
    assert.equal(res.status, 202);
    assert.deepEqual(Object.keys(res.body).sort(), ['deliveryChannel', 'environment', 'estimatedDeliveryMs', 'notificationId', 'recipientRegistered', 'status']);
    assert.match(res.body.notificationId, ULID);
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.recipientRegistered, true);
    assert.equal(res.body.deliveryChannel, 'email');
    assert.equal(res.body.environment, 'production');
    assert.ok(Number.isInteger(res.body.estimatedDeliveryMs) && res.body.estimatedDeliveryMs > 0);
  });

  it('marks sandbox keys as sandbox', async () => {
    const res = await send(valid(), acme.sandboxApiKey);
    assert.equal(res.status, 202);
    assert.equal(res.body.environment, 'sandbox');
  });

  it('answers 404 WALLET_NOT_REGISTERED for an unknown wallet and stores nothing', async () => {
    const stranger = makeWallet().address;
    const res = await send({ ...valid(), wallet: stranger });
    assert.equal(res.status, 404);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'WALLET_NOT_REGISTERED');
    const rows = await gw.herald.deps.db.query('SELECT 1 FROM notifications WHERE wallet = $1', [stranger]);
    assert.equal(rows.length, 0);
  });

  describe('validation', () => {
    const cases: [string, (b: any) => any, RegExp][] = [
      ['missing wallet', ({ wallet: _w, ...b }) => b, /^wallet is required$/],
      ['missing subject', ({ subject: _s, ...b }) => b, /^subject is required$/],
      ['missing body', ({ body: _b, ...b }) => b, /^body is required$/],
      ['missing category', ({ category: _c, ...b }) => b, /^category is required$/],
      ['wallet not base58', (b) => ({ ...b, wallet: '0OIl'.repeat(10) }), /^wallet must be a Solana wallet address/],
      ['wallet too short', (b) => ({ ...b, wallet: '11111111111111111111111111111' }), /^wallet must be a Solana wallet address/],
      ['wallet of 33 bytes', (b) => ({ ...b, wallet: '14vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi' }), /^wallet must be a Solana wallet address/],
      ['wallet a number', (b) => ({ ...b, wallet: 12345 }), /^wallet must be a string$/],
      ['subject a number', (b) => ({ ...b, subject: 5 }), /^subject must be a string$/],
      ['empty subject', (b) => ({ ...b, subject: '' }), /^subject/],
      ['unknown category', (b) => ({ ...b, category: 'spam' }), /^category must be one of: defi, governance, system, marketing, security$/],
      ['unknown priority', (b) => ({ ...b, priority: 'urgent' }), /^priority must be one of: normal, important, critical$/],
      ['unknown channel', (b) => ({ ...b, preferredChannel: 'fax' }), /^preferredChannel must be one of: email, telegram, sms$/],
      ['receipt a string', (b) => ({ ...b, receipt: 'yes' }), /^receipt must be a boolean$/],
      ['templateVariables an array', (b) => ({ ...b, templateVariables: [1] }), /^templateVariables must be an object$/],
      ['idempotencyKey too long', (b) => ({ ...b, idempotencyKey: 'k'.repeat(256) }), /^idempotencyKey must be at most 255 characters long$/],
      ['idempotencyKey a number', (b) => ({ ...b, idempotencyKey: 7 }), /^idempotencyKey must be a string$/],
      ['body null', (b) => ({ ...b, body: null }), /^body must be a string$/],
    ];
    for (const [name, mutate, message] of cases) {
      it(`refuses ${name}`, async () => {
        const res = await send(mutate(valid()));
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'VALIDATION_ERROR');
        assert.match(res.body.message, message);
      });
    }

    it('accepts an idempotencyKey of exactly 255 characters', async () => {
      const res = await send({ ...valid(), idempotencyKey: 'k'.repeat(255) });
      assert.equal(res.status, 202);
    });

    it('limits the body size by tier', async () => {
      const dev = await gw.createProtocol({ tier: 0 });
      const res = await send({ ...valid(), body: 'x'.repeat(10 * 1024 + 1) }, dev.apiKey);
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, /^body is 10241 bytes; the Developer tier allows 10240$/);
      const ok = await send({ ...valid(), body: 'x'.repeat(10 * 1024) }, dev.apiKey);
      assert.equal(ok.status, 202);
    });

    it('refuses a subject or body that is blank once spaces and control characters are dropped, charging nothing', async () => {
      const p = await gw.createProtocol({ tier: 3 });
      for (const [field, value] of [
        ['subject', '   '],
        ['subject', '\u202e'],
        ['subject', '\n\t \u0007'],
        ['body', '   '],
        ['body', '\n\n\t'],
        ['body', '\u0008 \u2066'],
        ['body', '\u200b\u2060\ufeff \u3164'],
        ['subject', '\u200d'],
        ['subject', '\u00ad\ufe0f\u2800'],
      ]) {
        const res = await send({ ...valid(), [field]: value }, p.apiKey);
        assert.equal(res.status, 400, `${field} ${JSON.stringify(value)}`);
        assert.equal(res.body.code, 'VALIDATION_ERROR');
        assert.equal(res.body.message, `${field} is blank: it must hold something to show, not only spaces, control or zero-width characters`);
      }
      assert.equal((await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body.usage, 0);
      const shown = await send({ ...valid(), subject: ' \u202eHi ', body: '\n.' }, p.apiKey);
      assert.equal(shown.status, 202);
    });

    it('answers 413 for a body over the server limit', async () => {
      const res = await send({ ...valid(), body: 'x'.repeat(600 * 1024) });
      assert.equal(res.status, 413);
      assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
    });

    it('refuses templates below the Growth tier with 403 and unknown templates with 404', async () => {
      const dev = await gw.createProtocol({ tier: 0 });
      const gated = await send({ ...valid(), templateId: 'tmpl_x' }, dev.apiKey);
      assert.equal(gated.status, 403);
      assert.equal(gated.body.code, 'TIER_REQUIRED');
      const unknown = await send({ ...valid(), templateId: 'tmpl_nope' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'TEMPLATE_NOT_FOUND');
    });
  });

  describe('channel choice', () => {
    it('prefers the preferred channel when verified, else telegram > email > sms', async () => {
      const all = await registeredWallet(gw.url);
      const cases: [string | undefined, string][] = [
        [undefined, 'telegram'],
        ['sms', 'sms'],
        ['email', 'email'],
      ];
      for (const [preferredChannel, expected] of cases) {
        const res = await send({ ...valid(), wallet: all, preferredChannel });
        assert.equal(res.body.deliveryChannel, expected, `preferred ${preferredChannel}`);
      }
      const smsOnly = await registeredWallet(gw.url, { phone: '+4915112345678' });
      const res = await send({ ...valid(), wallet: smsOnly, preferredChannel: 'email' });
      assert.equal(res.body.deliveryChannel, 'sms');
    });

    it('narrows to the subscription channels, and opts out after unsubscribe', async () => {
      const w = await registeredWallet(gw.url);
      const sub = await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: w, channels: ['sms', 'email'] });
      assert.equal(sub.status, 201);
      assert.equal((await send({ ...valid(), wallet: w })).body.deliveryChannel, 'email');
      assert.equal((await send({ ...valid(), wallet: w, preferredChannel: 'telegram' })).body.deliveryChannel, 'email');
      // other protocols are unaffected by acme's subscription
      assert.equal((await send({ ...valid(), wallet: w }, other.apiKey)).body.deliveryChannel, 'telegram');

      assert.equal((await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${w}`)).status, 200);
      const res = await send({ ...valid(), wallet: w });
      assert.equal(res.status, 202);
      assert.deepEqual(
        { status: res.body.status, ch: res.body.deliveryChannel, est: res.body.estimatedDeliveryMs, reg: res.body.recipientRegistered },
        { status: 'opted_out', ch: null, est: null, reg: true },
      );
      const record = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${res.body.notificationId}`);
      assert.equal(record.body.status, 'opted_out');
    });

    it('gives an opt-out of a wallet that never subscribed no subscribedAt; an ended subscription keeps its own', async () => {
      const w = await registeredWallet(gw.url);
      const path = `/v1/subscriptions/${w}`;
      const never = await call(gw.url, acme.apiKey, 'GET', path);
      assert.deepEqual(never.body, { walletAddress: w, subscribed: false, channels: [], subscribedAt: null, unsubscribedAt: null });
      const optOut = await call(gw.url, acme.apiKey, 'DELETE', path);
      assert.equal(optOut.status, 200);
      assert.deepEqual({ ...optOut.body, unsubscribedAt: typeof optOut.body.unsubscribedAt }, { walletAddress: w, subscribed: false, channels: [], subscribedAt: null, unsubscribedAt: 'string' });
      assert.deepEqual((await call(gw.url, acme.apiKey, 'GET', path)).body, optOut.body);

      const sub = await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: w, channels: ['email'] });
      assert.equal(typeof sub.body.subscribedAt, 'string');
      assert.equal(sub.body.unsubscribedAt, null);
      const ended = await call(gw.url, acme.apiKey, 'DELETE', path);
      assert.equal(ended.body.subscribedAt, sub.body.subscribedAt);
      assert.equal(typeof ended.body.unsubscribedAt, 'string');
    });

    it('keeps subscribedAt and unsubscribedAt in the order the changes committed, whatever their clocks say', async () => {
      // Two racing requests read their clocks before their writes commit, possibly in the other order.
      const w = await registeredWallet(gw.url);
      const { db } = gw.herald.deps;
      const at = (ms: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, 0, ms));
      const subscribed = await upsertSubscription(db, acme.id, w, ['email'], at(867));
      const ended = await unsubscribe(db, acme.id, w, at(866));
      assert.deepEqual([ended?.subscribed_at, ended?.unsubscribed_at], [at(867), at(867)]);
      assert.deepEqual(subscribed?.subscribed_at, at(867));
      const again = await upsertSubscription(db, acme.id, w, ['email'], at(865));
      assert.deepEqual([again?.subscribed, again?.subscribed_at, again?.unsubscribed_at], [true, at(867), null]);
      // In order, each keeps its own time.
      assert.deepEqual((await unsubscribe(db, acme.id, w, at(900)))?.unsubscribed_at, at(900));
      assert.deepEqual((await upsertSubscription(db, acme.id, w, ['email'], at(950)))?.subscribed_at, at(950));
    });

    it('fails a wallet whose subscription leaves no verified channel', async () => {
      const w = await registeredWallet(gw.url, { email: 'only@example.com' });
      await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: w, channels: ['sms'] });
      const res = await send({ ...valid(), wallet: w });
      assert.equal(res.status, 202);
      assert.equal(res.body.status, 'failed');
      assert.equal(res.body.deliveryChannel, null);
      assert.equal(res.body.estimatedDeliveryMs, null);
    });
  });

  describe('idempotency', () => {
    it('answers duplicate with the original id for the same payload, 409 for another', async () => {
      const body = { ...valid(), idempotencyKey: 'order-1' };
      const first = await send(body);
      assert.equal(first.body.status, 'queued');
      const again = await send(body);
      assert.equal(again.status, 202);
      assert.equal(again.body.status, 'duplicate');
      assert.equal(again.body.notificationId, first.body.notificationId);
      const changed = await send({ ...body, subject: 'Something else' });
      assert.equal(changed.status, 409);
      assert.ok(isErrorBody(changed.body));
      assert.equal(changed.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
      // keys are per protocol
      const elsewhere = await send(body, other.apiKey);
      assert.equal(elsewhere.body.status, 'queued');
    });

    it('keeps sandbox and live keys apart: the same key queues once in each environment', async () => {
      const p = await gw.createProtocol({ tier: 3 });
      const body = { ...valid(), idempotencyKey: 'order-env' };
      const test = await send(body, p.sandboxApiKey);
      assert.equal(test.body.status, 'queued');
      assert.equal(test.body.environment, 'sandbox');
      const live = await send(body, p.apiKey);
      assert.equal(live.status, 202);
      assert.equal(live.body.status, 'queued', 'a sandbox send never stands in for a live one');
      assert.equal(live.body.environment, 'production');
      assert.notEqual(live.body.notificationId, test.body.notificationId);
      assert.equal((await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body.usage, 1, 'the live send is charged');
      // each environment still answers its own duplicate and conflict
      assert.equal((await send(body, p.apiKey)).body.notificationId, live.body.notificationId);
      const again = await send(body, p.sandboxApiKey);
      assert.deepEqual([again.body.status, again.body.notificationId], ['duplicate', test.body.notificationId]);
      assert.equal((await send({ ...body, subject: 'Other' }, p.sandboxApiKey)).status, 409);
    });

    it('compares only the fields a send has: unknown fields are ignored, empty templateVariables equal none', async () => {
      const body = { ...valid(), idempotencyKey: 'order-fields' };
      const first = await send(body);
      assert.equal(first.body.status, 'queued');
      for (const retry of [
        { ...body, foo: 1 },
        { ...body, templateVariables: {} },
        { ...body, priority: 'normal', receipt: false, nested: { a: [1] } },
      ]) {
        const again = await send(retry);
        assert.equal(again.status, 202, JSON.stringify(again.body));
        assert.deepEqual([again.body.status, again.body.notificationId], ['duplicate', first.body.notificationId]);
      }
      assert.equal((await send({ ...body, templateVariables: { a: 1 } })).status, 409);
    });

    it('still recognises a send whose key was stored with the earlier hash (every field as sent)', async () => {
      const body = { ...valid(), idempotencyKey: 'order-legacy', source: 'v1-client', templateVariables: {} };
      const first = await send(body);
      assert.equal(first.body.status, 'queued');
      // as a gateway before 2026-11-25 stored it
      await gw.herald.deps.db.query('UPDATE notifications SET payload_hash = $1 WHERE id = $2', [legacyPayloadHash(body as any), first.body.notificationId]);
      const again = await send(body);
      assert.deepEqual([again.status, again.body.status, again.body.notificationId], [202, 'duplicate', first.body.notificationId]);
      assert.equal((await send({ ...body, subject: 'Other' })).status, 409);
    });

    it('answers a retry after the wallet was erased as the original send, not as an unknown wallet', async () => {
      const holder = makeWallet();
      await importIdentity(gw.url, holder.address, { email: 'erased@example.com' });
      const body = { ...valid(), wallet: holder.address, idempotencyKey: 'order-erased' };
      const first = await send(body);
      assert.equal(first.body.status, 'queued');
      const { message, nonce } = (await call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet: holder.address, purpose: 'delete' })).body;
      const erased = await call(gw.url, undefined, 'DELETE', `/v1/identities/${holder.address}`, { nonce, signature: holder.sign(message) });
      assert.equal(erased.status, 200, JSON.stringify(erased.body));

      const again = await send(body);
      assert.equal(again.status, 202, JSON.stringify(again.body));
      assert.deepEqual(again.body, {
        notificationId: first.body.notificationId,
        status: 'duplicate',
        recipientRegistered: false,
        estimatedDeliveryMs: null,
        deliveryChannel: null,
        environment: 'production',
      });
      const changed = await send({ ...body, subject: 'Other' });
      assert.equal(changed.status, 409);
      assert.equal(changed.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
      // a new key for the erased wallet is an unknown wallet again
      const fresh = await send({ ...body, idempotencyKey: 'order-erased-2' });
      assert.equal(fresh.status, 404);
      assert.equal(fresh.body.code, 'WALLET_NOT_REGISTERED');
    });

    it('answers a retry as the original send after its template changed, was deleted or its tier went down', async () => {
      const p = await gw.createProtocol({ tier: 2 });
      const created = await call(gw.url, p.apiKey, 'POST', '/v1/templates/email', {
        name: 'Order',
        category: 'defi',
        subjectTemplate: 'Order {{a}}',
        htmlSource: '<p>{{a}}</p>',
        textSource: '{{a}}',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const templateId = created.body.templateId;
      const body = { ...valid(), templateId, templateVariables: { a: '1' }, idempotencyKey: 'order-templated' };
      const first = await send(body, p.apiKey);
      assert.equal(first.body.status, 'queued', JSON.stringify(first.body));
      const duplicate = { notificationId: first.body.notificationId, status: 'duplicate', recipientRegistered: true, estimatedDeliveryMs: null, deliveryChannel: null, environment: 'production' };
      const bulkBody = { notifications: [{ ...body, idempotencyKey: 'bulk-templated-1' }, { ...body, idempotencyKey: 'bulk-templated-2' }] };
      const bulk = await call(gw.url, p.apiKey, 'POST', '/v1/notify/bulk', bulkBody);
      assert.equal(bulk.status, 202, JSON.stringify(bulk.body));
      const bulkIds = bulk.body.results.map((r: any) => r.notificationId);

      const changed = await call(gw.url, p.apiKey, 'PUT', `/v1/templates/email/${templateId}`, { textSource: '{{a}} {{c}}' });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      const afterChange = await send(body, p.apiKey);
      assert.deepEqual([afterChange.status, afterChange.body], [202, duplicate]);
      // A new key, or the same key with another payload, is judged as a new send.
      assert.equal((await send({ ...body, idempotencyKey: 'order-templated-2' }, p.apiKey)).status, 400);
      assert.equal((await send({ ...body, templateVariables: { a: '2' } }, p.apiKey)).status, 400);
      const bulkAgain = await call(gw.url, p.apiKey, 'POST', '/v1/notify/bulk', bulkBody);
      assert.equal(bulkAgain.status, 202, JSON.stringify(bulkAgain.body));
      assert.deepEqual(bulkAgain.body.results.map((r: any) => [r.notificationId, r.status]), bulkIds.map((id: string) => [id, 'duplicate']));
      // One new item among the retried ones: the request is refused as a whole, naming it.
      const mixed = await call(gw.url, p.apiKey, 'POST', '/v1/notify/bulk', { notifications: [...bulkBody.notifications, { ...body, idempotencyKey: 'bulk-templated-3' }] });
      assert.equal(mixed.status, 400);
      assert.match(mixed.body.message, /^notifications\[0\]\.templateVariables has no value for "c"/);

      assert.equal((await call(gw.url, p.apiKey, 'DELETE', `/v1/templates/email/${templateId}`)).status, 204);
      const afterDelete = await send(body, p.apiKey);
      assert.deepEqual([afterDelete.status, afterDelete.body], [202, duplicate]);
      assert.equal((await send({ ...body, idempotencyKey: 'order-templated-3' }, p.apiKey)).body.code, 'TEMPLATE_NOT_FOUND');

      const downgraded = await call(gw.url, ADMIN_TOKEN, 'PATCH', `/v1/admin/protocols/${p.id}`, { tier: 0 });
      assert.equal(downgraded.status, 200, JSON.stringify(downgraded.body));
      await atNextSecond(); // the Developer tier allows 2 requests a second
      const afterDowngrade = await send(body, p.apiKey);
      assert.deepEqual([afterDowngrade.status, afterDowngrade.body], [202, duplicate]);
      assert.equal((await send({ ...body, idempotencyKey: 'order-templated-4' }, p.apiKey)).body.code, 'TIER_REQUIRED');
      const rows = await gw.herald.deps.db.query('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [p.id]);
      assert.equal(rows[0].n, 3, 'the retries wrote nothing');
    });

    it('lets exactly one of 50 concurrent identical requests queue', async () => {
      const p = await gw.createProtocol({ tier: 3 });
      const before = (await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body.usage;
      const body = { ...valid(), idempotencyKey: 'concurrent-1' };
      const results = await Promise.all(Array.from({ length: 50 }, () => send(body, p.apiKey)));
      assert.ok(results.every((r) => r.status === 202), JSON.stringify(results.find((r) => r.status !== 202)?.body));
      const queued = results.filter((r) => r.body.status === 'queued');
      assert.equal(queued.length, 1);
      assert.equal(results.filter((r) => r.body.status === 'duplicate').length, 49);
      assert.equal(new Set(results.map((r) => r.body.notificationId)).size, 1);
      assert.equal((await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body.usage, before + 1);
    });
  });

  describe('quota', () => {
    /** Sets the protocol's sends this month, as if they had been made. */
    const usedThisMonth = (protocolId: string, sends: number) =>
      gw.herald.deps.db.query(`INSERT INTO usage_periods (protocol_id, period_start, sends) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, $2)`, [protocolId, sends]);
    it('never overshoots under concurrency and writes one quota.exceeded event', async () => {
      const p = await gw.createProtocol({ tier: 3 });
      const db = gw.herald.deps.db;
      await usedThisMonth(p.id, 999_990);
      const results = await Promise.all(Array.from({ length: 30 }, () => send(valid(), p.apiKey)));
      assert.equal(results.filter((r) => r.status === 202).length, 10);
      const refused = results.filter((r) => r.status === 402);
      assert.equal(refused.length, 20);
      for (const r of refused) {
        assert.ok(isErrorBody(r.body));
        assert.equal(r.body.code, 'INSUFFICIENT_QUOTA');
        assert.equal(r.body.error, 'Payment Required');
      }
      const usage = (await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body;
      assert.equal(usage.usage, 1_000_000);
      assert.equal(usage.remaining, 0);
      const stored = await db.query('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [p.id]);
      assert.equal(stored[0].n, 10);
      const events = await db.query(`SELECT data FROM events WHERE protocol_id = $1 AND type = 'quota.exceeded'`, [p.id]);
      assert.equal(events.length, 1);
      assert.equal(events[0].data.limit, 1_000_000);
      assert.equal(events[0].data.requested, 1);
    });

    it('names in quota.exceeded what the refused request needed, which may be more than is left', async () => {
      const p = await gw.createProtocol({ tier: 3 });
      const db = gw.herald.deps.db;
      await usedThisMonth(p.id, 999_998);
      const bulk = await call(gw.url, p.apiKey, 'POST', '/v1/notify/bulk', { notifications: [valid(), valid(), valid()] });
      assert.equal(bulk.status, 402, JSON.stringify(bulk.body));
      const events = await db.query(`SELECT data FROM events WHERE protocol_id = $1 AND type = 'quota.exceeded'`, [p.id]);
      assert.equal(events.length, 1);
      assert.equal(events[0].data.usage, 999_998);
      assert.equal(events[0].data.requested, 3);
      // Smaller sends still pass.
      assert.equal((await send(valid(), p.apiKey)).status, 202);
    });

    it('lets overage protocols go past the quota', async () => {
      const p = await gw.createProtocol({ tier: 0, overageEnabled: true });
      await usedThisMonth(p.id, 1_000);
      const res = await send(valid(), p.apiKey);
      assert.equal(res.status, 202);
      assert.equal((await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body.usage, 1001);
    });

    it('does not bill sandbox sends', async () => {
      const p = await gw.createProtocol({ tier: 3 });
      await send(valid(), p.sandboxApiKey);
      assert.equal((await call(gw.url, p.apiKey, 'GET', '/v1/usage')).body.usage, 0);
    });
  });
});
