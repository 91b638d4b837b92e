import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../packages/server/src/ids.js';
import { countNewNotifications } from '../../packages/server/src/reporting/notification-counts.js';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

const NOW = new Date('2025-06-15T12:00:00Z');
const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);

interface Row {
  status: string;
  at: Date;
  channel?: string;
  fallback?: string;
  environment?: string;
}

describe('reports: analytics, engagement, audience', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' }, now: () => new Date(NOW) });
    acme = await gw.createProtocol({ tier: 2, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 2, name: 'Rival' });
  });
  after(() => gw.close());

  const get = (path: string, key = acme.apiKey) => call(gw.url, key, 'GET', path);

  /** Notifications written straight into the table and counted, as the send path and the worker would leave them. */
  async function seed(protocolId: string, rows: Row[]): Promise<string[]> {
    const ids = rows.map(() => newId.notification());
    await gw.herald.deps.db.query(
      `INSERT INTO notifications (id, protocol_id, environment, wallet, subject, body, category, channel, fallback_channel, status, payload_hash, created_at, updated_at)
       SELECT id, $2, env, 'wallet', 's', 'b', 'defi', channel, fallback, status, 'h', at, at
       FROM unnest($1::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) AS r(id, env, channel, fallback, status, at)`,
      [
        ids,
        protocolId,
        rows.map((r) => r.environment ?? 'production'),
        rows.map((r) => r.channel ?? 'email'),
        rows.map((r) => r.fallback ?? null),
        rows.map((r) => r.status),
        rows.map((r) => r.at.toISOString()),
      ],
    );
    // Counted as the writers count what they write (a delivered fallback counts on its channel).
    await countNewNotifications(
      gw.herald.deps.db,
      rows.map((r) => ({
        protocolId,
        environment: r.environment ?? 'production',
        createdAt: r.at,
        status: r.status,
        channel: r.fallback ?? r.channel ?? 'email',
        broadcastId: null,
        count: 1,
      })),
    );
    return ids;
  }
  const times = (count: number, row: Row): Row[] => Array.from({ length: count }, () => row);
  const event = (protocolId: string, notificationId: string, kind: string, at: Date) =>
    gw.herald.deps.db.query(`INSERT INTO engagement_events (protocol_id, notification_id, wallet, kind, created_at) VALUES ($1, $2, 'wallet', $3, $4)`, [
      protocolId,
      notificationId,
      kind,
      at,
    ]);

  describe('GET /v1/analytics', () => {
    let seeded: TestProtocol;
    before(async () => {
      seeded = await gw.createProtocol({ tier: 1, name: 'Seeded' });
      await seed(seeded.id, [
        ...times(5, { status: 'delivered', at: daysAgo(3) }),
        ...times(2, { status: 'failed', at: daysAgo(3) }),
        { status: 'bounced', at: daysAgo(3) },
        { status: 'opted_out', at: daysAgo(3) },
        { status: 'queued', at: daysAgo(3) },
        ...times(3, { status: 'delivered', at: daysAgo(20) }),
        { status: 'bounced', at: daysAgo(20) },
        ...times(4, { status: 'failed', at: daysAgo(60) }),
        { status: 'sending', at: daysAgo(60) },
        ...times(10, { status: 'delivered', at: daysAgo(100) }),
        ...times(7, { status: 'delivered', at: daysAgo(3), environment: 'sandbox' }),
      ]);
      await seed(rival.id, times(9, { status: 'delivered', at: daysAgo(3) }));
    });

    it('counts the period by status and derives the rates from settled sends', async () => {
      const expectations: [string, object][] = [
        ['7d', { period: '7d', total_sends: 10, delivery_rate: 5 / 8, bounce_rate: 1 / 8, breakdown: { delivered: 5, failed: 2, opted_out: 1, bounced: 1 } }],
        ['30d', { period: '30d', total_sends: 14, delivery_rate: 8 / 12, bounce_rate: 2 / 12, breakdown: { delivered: 8, failed: 2, opted_out: 1, bounced: 2 } }],
        ['90d', { period: '90d', total_sends: 19, delivery_rate: 8 / 16, bounce_rate: 2 / 16, breakdown: { delivered: 8, failed: 6, opted_out: 1, bounced: 2 } }],
      ];
      for (const [period, expected] of expectations) {
        const res = await get(`/v1/analytics?period=${period}`, seeded.apiKey);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, expected, period);
      }
      assert.deepEqual((await get('/v1/analytics', seeded.apiKey)).body, expectations[1][1], 'default period is 30d');
    });

    it("reports the key's environment and the caller's protocol only", async () => {
      const sandbox = await get('/v1/analytics?period=7d', seeded.sandboxApiKey);
      assert.deepEqual(sandbox.body, { period: '7d', total_sends: 7, delivery_rate: 1, bounce_rate: 0, breakdown: { delivered: 7, failed: 0, opted_out: 0, bounced: 0 } });
      assert.equal((await get('/v1/analytics?period=7d', rival.apiKey)).body.total_sends, 9);
      const empty = await get('/v1/analytics', acme.apiKey);
      assert.deepEqual(empty.body, { period: '30d', total_sends: 0, delivery_rate: 0, bounce_rate: 0, breakdown: { delivered: 0, failed: 0, opted_out: 0, bounced: 0 } });
    });

    it('refuses any other period', async () => {
      for (const period of ['1y', '7', '30D', '']) {
        const res = await get(`/v1/analytics?period=${period}`);
        assert.equal(res.status, 400, period);
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.message, 'period must be one of: 7d, 30d, 90d');
      }
    });
  });

  describe('GET /v1/engagement', () => {
    let eng: TestProtocol;
    before(async () => {
      eng = await gw.createProtocol({ tier: 1, name: 'Engaging' });
      const march10 = new Date('2025-03-10T12:00:00Z');
      const march11 = new Date('2025-03-11T08:00:00Z');
      const emails = await seed(eng.id, times(10, { status: 'delivered', at: march10 }));
      const [telegram, failed, april, fallback, sandbox] = await seed(eng.id, [
        { status: 'delivered', at: march10, channel: 'telegram' },
        { status: 'failed', at: march10 },
        { status: 'delivered', at: new Date('2025-04-02T00:00:00Z') },
        { status: 'delivered', at: march10, fallback: 'sms' },
        { status: 'delivered', at: march10, environment: 'sandbox' },
      ]);
      const [recentOpened] = await seed(eng.id, times(2, { status: 'delivered', at: daysAgo(5) }));
      const events: [string, string, Date][] = [
        [emails[0], 'open', march11],
        [emails[0], 'open', march11],
        [emails[1], 'open', march11],
        [emails[2], 'open', march11],
        [emails[3], 'open', new Date('2025-05-01T00:00:00Z')],
        [emails[0], 'click', march11],
        [emails[0], 'click', march11],
        [emails[0], 'click', march11],
        [emails[1], 'click', march11],
        // A click without the pixel (images blocked) is an open too.
        [emails[4], 'click', march11],
        [emails[2], 'unsubscribe', march11],
        [telegram, 'open', march11],
        [failed, 'click', march11],
        [april, 'open', new Date('2025-04-03T00:00:00Z')],
        [fallback, 'open', march11],
        [sandbox, 'open', march11],
        [recentOpened, 'open', daysAgo(4)],
      ];
      for (const [id, kind, at] of events) await event(eng.id, id, kind, at);
    });

    const engagement = (query: string, key = eng.apiKey) => get(`/v1/engagement${query}`, key);
    const rates = (body: any) => ({ openRate: body.openRate, clickRate: body.clickRate, unsubscribeRate: body.unsubscribeRate, deliveredEmails: body.deliveredEmails });

    it('divides engaged delivered emails by delivered emails, each email counted once', async () => {
      const march = await engagement('?startDate=2025-03-01&endDate=2025-03-31');
      assert.equal(march.status, 200);
      assert.deepEqual(rates(march.body), { openRate: 0.5, clickRate: 0.3, unsubscribeRate: 0.1, deliveredEmails: 10 });
      assert.equal(march.body.startDate, '2025-03-01T00:00:00.000Z');
      assert.equal(march.body.endDate, '2025-04-01T00:00:00.000Z', 'the end date is included');
      assert.deepEqual(rates((await engagement('?startDate=2025-03-10&endDate=2025-03-10')).body), rates(march.body));
      assert.deepEqual(rates((await engagement('?startDate=2025-03-01&endDate=2025-03-09')).body), { openRate: 0, clickRate: 0, unsubscribeRate: 0, deliveredEmails: 0 });
      assert.deepEqual(rates((await engagement('?startDate=2025-03-10T13:00:00Z&endDate=2025-04-30')).body), {
        openRate: 1,
        clickRate: 0,
        unsubscribeRate: 0,
        deliveredEmails: 1,
      });
      const widened = await engagement('?startDate=2025-03-10T12:30:00Z&endDate=2025-03-10T12:30:00%2B00:00');
      assert.deepEqual(rates(widened.body), rates(march.body), 'date-times are widened to their hour');
      assert.equal(widened.body.startDate, '2025-03-10T12:00:00.000Z');
      assert.equal(widened.body.endDate, '2025-03-10T13:00:00.000Z');
      const sameDay = await engagement('?startDate=2025-03-10T12:30:00Z&endDate=2025-03-10');
      assert.equal(sameDay.status, 200, 'a date ends with its day, after a start earlier that day');
      assert.deepEqual(rates(sameDay.body), rates(march.body));
      assert.equal(sameDay.body.endDate, '2025-03-11T00:00:00.000Z');
      assert.deepEqual(rates((await engagement('?startDate=2025-03-01&endDate=2025-03-31', eng.sandboxApiKey)).body), {
        openRate: 1,
        clickRate: 0,
        unsubscribeRate: 0,
        deliveredEmails: 1,
      });
      assert.equal((await engagement('?startDate=2025-03-01&endDate=2025-03-31', rival.apiKey)).body.deliveredEmails, 0);
    });

    it('defaults to the last 30 days', async () => {
      const res = await engagement('');
      assert.deepEqual(rates(res.body), { openRate: 0.5, clickRate: 0, unsubscribeRate: 0, deliveredEmails: 2 });
      assert.equal(res.body.startDate, '2025-05-16T13:00:00.000Z');
      assert.equal(res.body.endDate, '2025-06-15T13:00:00.000Z', 'up to the end of the current hour');
    });

    it('refuses bad dates and an end before the start', async () => {
      const cases: [string, RegExp][] = [
        ['?startDate=2025-03-10&endDate=2025-03-09', /^endDate \(2025-03-09\) is before startDate \(2025-03-10\)$/],
        ['?startDate=2025-02-30', /^startDate must be an ISO 8601 date/],
        ['?startDate=yesterday', /^startDate must be an ISO 8601 date/],
        ['?endDate=2025-13-01', /^endDate must be an ISO 8601 date/],
        ['?startDate=2025-03-01T10:00', /^startDate must be an ISO 8601 date/],
        ['?startDate=2030-01-01', /^startDate \(2030-01-01\) is after the current hour$/],
        ['?startDate=0000-01-01', /^startDate \(0000-01-01\) must be in 1970 or later$/],
        ['?startDate=0001-01-01T00:00:00%2B01:00', /^startDate .* must be in 1970 or later$/],
        ['?endDate=0001-01-15', /^endDate \(0001-01-15\) must leave the 30 days before it in 1970 or later$/],
      ];
      for (const [query, message] of cases) {
        const res = await engagement(query);
        assert.equal(res.status, 400, query);
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'VALIDATION_ERROR');
        assert.match(res.body.message, message, query);
      }
    });
  });

  describe('GET /v1/audience', () => {
    let aud: TestProtocol;
    const w: Record<string, string> = {};
    before(async () => {
      aud = await gw.createProtocol({ tier: 1, name: 'Audience' });
      const all = { email: 'all@example.com', phone: '+15555550199', telegramChatId: '9' };
      const subscribe = (key: string, wallet: string, channels: string[]) => call(gw.url, key, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels });
      const since = (wallet: string, at: Date) =>
        gw.herald.deps.db.query('UPDATE subscriptions SET subscribed_at = $3 WHERE protocol_id = $1 AND wallet = $2', [aud.id, wallet, at]);
      w.a = await registeredWallet(gw.url, { email: 'a@example.com', telegramChatId: '1' });
      await subscribe(aud.apiKey, w.a, ['email', 'telegram']);
      w.b = await registeredWallet(gw.url, { phone: '+15555550111' });
      await subscribe(aud.apiKey, w.b, ['sms', 'email']);
      await since(w.b, daysAgo(3));
      w.c = await registeredWallet(gw.url, { email: 'c@example.com' });
      await subscribe(aud.apiKey, w.c, ['telegram']);
      await since(w.c, new Date('2025-05-17T00:00:00Z'));
      w.d = await registeredWallet(gw.url, all);
      await subscribe(aud.apiKey, w.d, ['email']);
      await call(gw.url, aud.apiKey, 'DELETE', `/v1/subscriptions/${w.d}`);
      await since(w.d, new Date('2025-05-16T23:59:59Z'));
      w.e = await registeredWallet(gw.url, all);
      await call(gw.url, aud.apiKey, 'DELETE', `/v1/subscriptions/${w.e}`);
      w.f = await registeredWallet(gw.url, all);
      await subscribe(rival.apiKey, w.f, ['email']);
    });

    it('counts the audience, its reach per channel and the daily trend', async () => {
      const res = await get('/v1/audience', aud.apiKey);
      assert.equal(res.status, 200);
      const { registrationTrend, ...counts } = res.body;
      assert.deepEqual(counts, { totalRegistered: 4, broadcastableSubscribers: 2, channelCoverage: { email: 1, telegram: 1, sms: 1 } });
      assert.equal(registrationTrend.length, 30);
      assert.equal(registrationTrend[0].date, '2025-05-17');
      assert.equal(registrationTrend[29].date, '2025-06-15');
      const nonZero = registrationTrend.filter((d: any) => d.count > 0);
      assert.deepEqual(nonZero, [
        { date: '2025-05-17', count: 1 },
        { date: '2025-06-12', count: 1 },
        { date: '2025-06-15', count: 1 },
      ]);
      for (let i = 1; i < 30; i++) assert.equal(Date.parse(registrationTrend[i].date) - Date.parse(registrationTrend[i - 1].date), DAY);
    });

    it('matches what a broadcast would queue, and covers the caller only', async () => {
      const sent = await call(gw.url, aud.apiKey, 'POST', '/v1/broadcast', { subject: 's', body: 'b', category: 'system' });
      assert.equal(sent.body.queued_count, 2);
      assert.equal(sent.body.total_subscribers, 3);
      const theirs = await get('/v1/audience', rival.apiKey);
      assert.deepEqual(
        { ...theirs.body, registrationTrend: theirs.body.registrationTrend.filter((d: any) => d.count) },
        { totalRegistered: 1, broadcastableSubscribers: 1, channelCoverage: { email: 1, telegram: 0, sms: 0 }, registrationTrend: [{ date: '2025-06-15', count: 1 }] },
      );
      const none = await get('/v1/audience', acme.apiKey);
      assert.equal(none.body.totalRegistered, 0);
      assert.ok(none.body.registrationTrend.every((d: any) => d.count === 0));
    });
  });
});
