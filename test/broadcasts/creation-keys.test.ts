import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { periodOf } from '../../packages/server/src/limits/quota.js';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

/** The Idempotency-Key header of POST /v1/broadcast, /v1/schedule and /v1/schedule/cron. */
describe('Idempotency-Key on the calls that create a broadcast or a schedule', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 3, name: 'Rival' });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    for (const protocol of [acme, rival]) {
      const res = await call(gw.url, protocol.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
  });
  after(() => gw.close());

  const db = () => gw.herald.deps.db;
  const count = async (sql: string, params: unknown[]) => (await db().query<{ n: number }>(sql, params))[0].n;
  const broadcastsOf = (protocol: TestProtocol) => count('SELECT count(*)::int AS n FROM broadcasts WHERE protocol_id = $1', [protocol.id]);
  const schedulesOf = (protocol: TestProtocol) => count('SELECT count(*)::int AS n FROM schedules WHERE protocol_id = $1', [protocol.id]);
  const notificationsOf = (protocol: TestProtocol) => count('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [protocol.id]);

  /** POST with node:http, which sends header values as given (repeated, or raw bytes). */
  const rawPost = (path: string, body: unknown, headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(`${gw.url}${path}`, { method: 'POST' }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.setHeader('authorization', `Bearer ${acme.apiKey}`);
      req.setHeader('content-type', 'application/json');
      for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
      req.end(JSON.stringify(body));
    });

  const broadcastBody = { subject: 'Upgrade', body: 'We upgrade **tonight**.', category: 'governance' };
  const post = (path: string, body: unknown, key: string | undefined, apiKey = acme.apiKey) =>
    call(gw.url, apiKey, 'POST', path, body, key === undefined ? {} : { 'idempotency-key': key });

  describe('POST /v1/broadcast', () => {
    it('answers a repeated key and body with the first answer, marked replayed, and sends once', async () => {
      const key = `bcast-${randomUUID()}`;
      const before = await notificationsOf(acme);
      const first = await post('/v1/broadcast', broadcastBody, key);
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.equal(first.headers.get('idempotent-replayed'), null);
      assert.equal(first.body.queued_count, 1);

      // Key order, omitted defaults and unknown fields do not make another payload.
      const again = await post('/v1/broadcast', { category: 'governance', body: broadcastBody.body, subject: 'Upgrade', receipt: false, note: 'x' }, key);
      assert.equal(again.status, 202, JSON.stringify(again.body));
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
      assert.equal(await broadcastsOf(acme), 1);
      assert.equal(await notificationsOf(acme), before + 1, 'one message for the one subscriber');
    });

    it('refuses the key with another body (409) and writes nothing', async () => {
      const key = `bcast-${randomUUID()}`;
      assert.equal((await post('/v1/broadcast', broadcastBody, key)).status, 202);
      const broadcasts = await broadcastsOf(acme);
      const notifications = await notificationsOf(acme);
      for (const body of [{ ...broadcastBody, subject: 'Other' }, { ...broadcastBody, receipt: true }]) {
        const res = await post('/v1/broadcast', body, key);
        assert.equal(res.status, 409, JSON.stringify(res.body));
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
        assert.match(res.body.message, /Idempotency-Key ".+" was already used with another request/);
      }
      assert.equal(await broadcastsOf(acme), broadcasts);
      assert.equal(await notificationsOf(acme), notifications);
    });

    it('lets 20 concurrent requests with one key create exactly one broadcast, all answered alike', async () => {
      const key = `bcast-${randomUUID()}`;
      const broadcasts = await broadcastsOf(acme);
      const answers = await Promise.all(Array.from({ length: 20 }, () => post('/v1/broadcast', broadcastBody, key)));
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([202]));
      assert.equal(new Set(answers.map((a) => a.body.broadcast_id)).size, 1);
      assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === null).length, 1, 'one request created it');
      assert.equal(await broadcastsOf(acme), broadcasts + 1);
    });

    it('keeps keys apart per protocol and per environment', async () => {
      const key = `shared-${randomUUID()}`;
      const live = await post('/v1/broadcast', broadcastBody, key);
      const sandbox = await post('/v1/broadcast', broadcastBody, key, acme.sandboxApiKey);
      const other = await post('/v1/broadcast', { ...broadcastBody, subject: 'Theirs' }, key, rival.apiKey);
      for (const res of [live, sandbox, other]) {
        assert.equal(res.status, 202, JSON.stringify(res.body));
        assert.equal(res.headers.get('idempotent-replayed'), null);
      }
      assert.equal(new Set([live, sandbox, other].map((r) => r.body.broadcast_id)).size, 3);
    });

    it('does not keep the key of a request that failed: a retry after the cause is gone creates', async () => {
      const tight = await gw.createProtocol({ tier: 1, name: 'Tight' });
      await call(gw.url, tight.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] });
      const period = periodOf(new Date()).start.toISOString().slice(0, 10);
      const setUsage = (sends: number) =>
        db().query(
          `INSERT INTO usage_periods (protocol_id, period_start, sends) VALUES ($1, $2, $3)
           ON CONFLICT (protocol_id, period_start) DO UPDATE SET sends = EXCLUDED.sends`,
          [tight.id, period, sends],
        );
      const key = `bcast-${randomUUID()}`;
      await setUsage(50_000);
      const refused = await post('/v1/broadcast', broadcastBody, key, tight.apiKey);
      assert.equal(refused.status, 402, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'INSUFFICIENT_QUOTA');
      assert.equal(await count('SELECT count(*)::int AS n FROM creation_keys WHERE protocol_id = $1', [tight.id]), 0);

      await setUsage(0);
      const created = await post('/v1/broadcast', broadcastBody, key, tight.apiKey);
      assert.equal(created.status, 202, JSON.stringify(created.body));
      assert.equal(created.headers.get('idempotent-replayed'), null);
      assert.equal(await broadcastsOf(tight), 1);
    });

    it('validates the header: empty, longer than 255 characters, not printable ASCII, or sent twice is a 400', async () => {
      const broadcasts = await broadcastsOf(acme);
      for (const [key, message] of [
        ['', 'Idempotency-Key must not be empty'],
        ['k'.repeat(256), 'Idempotency-Key must be at most 255 characters long'],
      ]) {
        const res = await post('/v1/broadcast', broadcastBody, key);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.ok(isErrorBody(res.body));
        assert.deepEqual([res.body.code, res.body.message], ['VALIDATION_ERROR', message]);
      }
      // UTF-8 bytes in a header (fetch refuses to send them; a raw client can).
      const utf8 = await rawPost('/v1/broadcast', broadcastBody, { 'idempotency-key': Buffer.from('ключ').toString('latin1') });
      assert.equal(utf8.status, 400);
      assert.deepEqual([utf8.body.code, utf8.body.message], ['VALIDATION_ERROR', 'Idempotency-Key must be printable ASCII (letters, digits, punctuation and inner spaces)']);
      const twice = await rawPost('/v1/broadcast', broadcastBody, { 'idempotency-key': ['a', 'b'] });
      assert.equal(twice.status, 400);
      assert.deepEqual([twice.body.code, twice.body.message], ['VALIDATION_ERROR', 'Idempotency-Key must be sent once']);
      assert.equal(await broadcastsOf(acme), broadcasts);

      assert.equal((await post('/v1/broadcast', broadcastBody, 'k'.repeat(255))).status, 202);
      assert.equal((await post('/v1/broadcast', broadcastBody, `with inner spaces ${randomUUID()}`)).status, 202);
      assert.equal(await broadcastsOf(acme), broadcasts + 2);
    });
  });

  describe('POST /v1/schedule and /v1/schedule/cron', () => {
    const later = () => new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const message = { subject: 'Vote closes', body: 'Vote **today**.', category: 'governance' };

    it('answers a repeated one-time schedule with the first answer and creates one schedule', async () => {
      const key = `sched-${randomUUID()}`;
      const body = { wallet, ...message, scheduledFor: later(), timezone: 'Europe/Berlin' };
      const schedules = await schedulesOf(acme);
      const first = await post('/v1/schedule', body, key);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const again = await post('/v1/schedule', { ...body, priority: 'normal' }, key);
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(again.body, first.body);
      assert.equal(await schedulesOf(acme), schedules + 1);

      const other = await post('/v1/schedule', { ...body, subject: 'Another' }, key);
      assert.equal(other.status, 409);
      assert.equal(other.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
      // The same key on another call is another request.
      const cron = await post('/v1/schedule/cron', { wallet, ...message, cronExpr: '0 9 * * *' }, key);
      assert.equal(cron.status, 409);
      assert.equal(await schedulesOf(acme), schedules + 1);
    });

    it('answers a retry with the first answer even once the request would be refused', async () => {
      const key = `sched-${randomUUID()}`;
      const soon = new Date(Date.now() + 1_500).toISOString();
      const first = await post('/v1/schedule', { wallet, ...message, scheduledFor: soon }, key);
      assert.equal(first.status, 201, JSON.stringify(first.body));
      await new Promise((resolve) => setTimeout(resolve, 1_600));
      const late = await post('/v1/schedule', { wallet, ...message, scheduledFor: soon }, key);
      assert.equal(late.status, 201, JSON.stringify(late.body));
      assert.deepEqual(late.body, first.body);
      const fresh = await post('/v1/schedule', { wallet, ...message, scheduledFor: soon }, `sched-${randomUUID()}`);
      assert.equal(fresh.status, 400, 'the time has passed for a new request');
    });

    it('creates one cron schedule for 20 concurrent requests with one key', async () => {
      const key = `cron-${randomUUID()}`;
      const schedules = await schedulesOf(acme);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post('/v1/schedule/cron', { wallet, ...message, cronExpr: '30 8 * * MON', timezone: 'UTC' }, key)),
      );
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([201]));
      assert.equal(new Set(answers.map((a) => a.body.id)).size, 1);
      assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length, 19);
      assert.equal(await schedulesOf(acme), schedules + 1);
      // timezone defaults to UTC: omitting it is the same request.
      const omitted = await post('/v1/schedule/cron', { wallet, ...message, cronExpr: '30 8 * * MON' }, key);
      assert.equal(omitted.status, 201);
      assert.equal(omitted.body.id, answers[0].body.id);
    });

    it('refuses a key in the body, where sends take theirs: it would be ignored and every retry create again', async () => {
      const [broadcasts, schedules] = [await broadcastsOf(acme), await schedulesOf(acme)];
      const cases: [string, Record<string, unknown>][] = [
        ['/v1/broadcast', { ...broadcastBody, idempotencyKey: 'body-key' }],
        ['/v1/schedule', { wallet, ...message, scheduledFor: later(), idempotencyKey: 'body-key' }],
        ['/v1/schedule/cron', { wallet, ...message, cronExpr: '0 12 * * *', idempotencyKey: 'body-key' }],
      ];
      for (const [path, body] of cases) {
        for (const key of [undefined, 'header-key']) {
          const res = await post(path, body, key);
          assert.equal(res.status, 400, `${path} ${JSON.stringify(res.body)}`);
          assert.ok(isErrorBody(res.body));
          assert.deepEqual([res.body.code, res.body.message], ['VALIDATION_ERROR', `idempotencyKey: POST ${path} takes its key in the Idempotency-Key header; a key in the body would be ignored`]);
        }
      }
      assert.deepEqual([await broadcastsOf(acme), await schedulesOf(acme)], [broadcasts, schedules]);
    });

    it('without a key, every request creates', async () => {
      const schedules = await schedulesOf(acme);
      const body = { wallet, ...message, cronExpr: '0 12 * * *' };
      const [a, b] = [await post('/v1/schedule/cron', body, undefined), await post('/v1/schedule/cron', body, undefined)];
      assert.notEqual(a.body.id, b.body.id);
      assert.equal(await schedulesOf(acme), schedules + 2);
    });
  });

  describe('POST /v1/notify and /v1/notify/bulk', () => {
    it('refuse an Idempotency-Key header (they take the key in the body), and bulk a key beside its list', async () => {
      const before = await notificationsOf(acme);
      const send = { wallet, subject: 's', body: 'b', category: 'defi' };
      const single = await post('/v1/notify', send, 'header-key');
      assert.equal(single.status, 400);
      assert.deepEqual([single.body.code, single.body.message], ['VALIDATION_ERROR', 'Idempotency-Key: POST /v1/notify takes its key in the body field idempotencyKey; this header would be ignored']);
      const bulk = await post('/v1/notify/bulk', { notifications: [send] }, 'header-key');
      assert.equal(bulk.status, 400);
      assert.match(bulk.body.message, /^Idempotency-Key: POST \/v1\/notify\/bulk takes its key in the body field idempotencyKey of each notification/);
      const beside = await post('/v1/notify/bulk', { notifications: [send], idempotencyKey: 'k' }, undefined);
      assert.equal(beside.status, 400);
      assert.equal(beside.body.message, 'idempotencyKey: a bulk request takes a key on each notification (notifications[i].idempotencyKey); this one would be ignored');
      assert.equal(await notificationsOf(acme), before);
      // The key where it belongs works as ever.
      const keyed = await post('/v1/notify', { ...send, idempotencyKey: `k-${randomUUID()}` }, undefined);
      assert.equal(keyed.status, 202);
    });
  });
});
