import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../packages/server/src/db/connection.js';
import { reserveSends, sendsThisPeriod, type QuotaProtocol } from '../../packages/server/src/limits/quota.js';
import { recordQuotaExceeded } from '../../packages/server/src/limits/record-quota-exceeded.js';
import { atNextSecond, call, startGateway, type TestGateway } from '../support/gateway.js';

const JAN = new Date('2026-01-31T23:59:59.999Z');
const FEB = new Date('2026-02-01T00:00:00.000Z');

describe('monthly quota', () => {
  let gw: TestGateway;
  let db: Database;
  // The gateway reads this clock, so a test can move it into another month.
  let clock: Date | undefined;

  before(async () => {
    gw = await startGateway({ now: () => clock ?? new Date() });
    db = gw.herald.deps.db;
  });
  after(() => gw.close());

  async function protocolRow(id: string): Promise<QuotaProtocol> {
    const [row] = await db.query<QuotaProtocol>('SELECT id, tier, overage_enabled FROM protocols WHERE id = $1', [id]);
    return row;
  }

  it('never lets concurrent reservations overshoot: 50 x 30 against 1,000 -> 33 succeed, 990 used', async () => {
    const dev = await protocolRow((await gw.createProtocol({ tier: 0 })).id);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => db.transaction((tx) => reserveSends(tx, dev, 30, JAN))),
    );
    assert.equal(outcomes.filter(Boolean).length, 33);
    assert.equal(await sendsThisPeriod(db, dev.id, JAN), 990);
    // What is left (10) can still be taken, exactly, and not one more.
    assert.equal(await reserveSends(db, dev, 11, JAN), false);
    assert.equal(await reserveSends(db, dev, 10, JAN), true);
    assert.equal(await reserveSends(db, dev, 1, JAN), false);
    assert.equal(await sendsThisPeriod(db, dev.id, JAN), 1000);
  });

  it('refuses a first reservation larger than the whole quota without creating a counter', async () => {
    const dev = await protocolRow((await gw.createProtocol({ tier: 0 })).id);
    assert.equal(await reserveSends(db, dev, 1001, JAN), false);
    assert.equal(await sendsThisPeriod(db, dev.id, JAN), 0);
  });

  it('rolls a reservation back with the transaction it was made in', async () => {
    const dev = await protocolRow((await gw.createProtocol({ tier: 0 })).id);
    await assert.rejects(
      db.transaction(async (tx) => {
        assert.equal(await reserveSends(tx, dev, 30, JAN), true);
        throw new Error('the notification insert failed');
      }),
      /insert failed/,
    );
    assert.equal(await sendsThisPeriod(db, dev.id, JAN), 0);
  });

  it('lets every reservation through when overage is on', async () => {
    const dev = await protocolRow((await gw.createProtocol({ tier: 0, overageEnabled: true })).id);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => db.transaction((tx) => reserveSends(tx, dev, 30, JAN))),
    );
    assert.ok(outcomes.every(Boolean));
    assert.equal(await sendsThisPeriod(db, dev.id, JAN), 1500);
  });

  it('records one quota.exceeded event per period, however often the quota is hit', async () => {
    const dev = await protocolRow((await gw.createProtocol({ tier: 0 })).id);
    await reserveSends(db, dev, 1000, JAN);
    await Promise.all([recordQuotaExceeded(db, dev, JAN, 1), recordQuotaExceeded(db, dev, JAN, 1)]);
    await recordQuotaExceeded(db, dev, new Date(JAN.getTime() - 3_600_000), 1);
    const events = await db.query<{ type: string; data: any }>('SELECT type, data FROM events WHERE protocol_id = $1', [dev.id]);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'quota.exceeded');
    assert.equal(events[0].data.limit, 1000);
    assert.equal(events[0].data.usage, 1000);
    assert.equal(events[0].data.resets_at, FEB.toISOString());
    // A new period may have its own event.
    await recordQuotaExceeded(db, dev, FEB, 1);
    const [{ n }] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE protocol_id = $1 AND type = 'quota.exceeded'", [dev.id]);
    assert.equal(n, 2);
  });

  it('starts every UTC month at zero', async () => {
    const dev = await protocolRow((await gw.createProtocol({ tier: 0 })).id);
    assert.equal(await reserveSends(db, dev, 1000, JAN), true);
    assert.equal(await reserveSends(db, dev, 1, JAN), false);
    assert.equal(await sendsThisPeriod(db, dev.id, FEB), 0);
    assert.equal(await reserveSends(db, dev, 1000, FEB), true);
    assert.equal(await sendsThisPeriod(db, dev.id, JAN), 1000, 'January keeps its own count');
  });

  it('shows the counter in GET /v1/usage and GET /v1/protocols/me, and resets it with the month', async () => {
    const created = await gw.createProtocol({ tier: 0, name: 'Quota Labs' });
    const dev = await protocolRow(created.id);
    await reserveSends(db, dev, 990, JAN);
    clock = JAN;
    try {
      await atNextSecond();
      const usage = await call(gw.url, created.apiKey, 'GET', '/v1/usage');
      const me = await call(gw.url, created.apiKey, 'GET', '/v1/protocols/me');
      assert.equal(usage.status, 200);
      assert.deepEqual(usage.body, { tier: 0, usage: 990, remaining: 10, overageEnabled: false, resetsAt: '2026-02-01T00:00:00.000Z' });
      assert.equal(me.status, 200);
      assert.equal(me.body.id, created.id);
      assert.equal(me.body.name, 'Quota Labs');
      assert.equal(me.body.sends_this_period, 990);

      clock = FEB;
      await atNextSecond();
      const feb = await call(gw.url, created.apiKey, 'GET', '/v1/usage');
      assert.deepEqual(feb.body, { tier: 0, usage: 0, remaining: 1000, overageEnabled: false, resetsAt: '2026-03-01T00:00:00.000Z' });
      assert.equal((await call(gw.url, created.apiKey, 'GET', '/v1/protocols/me')).body.sends_this_period, 0);

      clock = new Date('2026-12-15T10:00:00.000Z');
      await atNextSecond();
      assert.equal((await call(gw.url, created.apiKey, 'GET', '/v1/usage')).body.resetsAt, '2027-01-01T00:00:00.000Z');
    } finally {
      clock = undefined;
    }
  });

  it('measures Retry-After on the rate limiter\'s clock, whatever the injected clock says', async () => {
    const created = await gw.createProtocol({ tier: 0 });
    clock = JAN;
    try {
      await atNextSecond();
      const statuses = [];
      let limited;
      for (let i = 0; i < 3; i++) {
        limited = await call(gw.url, created.apiKey, 'GET', '/v1/usage');
        statuses.push(limited.status);
      }
      assert.deepEqual(statuses, [200, 200, 429]);
      assert.equal(limited!.headers.get('retry-after'), '1');
    } finally {
      clock = undefined;
    }
  });

  it('describes every tier in /v1/protocols/me and /v1/usage', async () => {
    const names = ['Developer', 'Growth', 'Scale', 'Enterprise'];
    const sends = [1_000, 50_000, 250_000, 1_000_000];
    for (const tier of [0, 1, 2, 3]) {
      const created = await gw.createProtocol({ tier, overageEnabled: tier === 2 });
      await reserveSends(db, await protocolRow(created.id), 7, new Date());
      const me = await call(gw.url, created.apiKey, 'GET', '/v1/protocols/me');
      assert.equal(me.status, 200);
      assert.deepEqual(Object.keys(me.body).sort(), ['id', 'name', 'sends_this_period', 'subscription_expires_at', 'tier', 'tier_name']);
      assert.equal(me.body.tier, tier);
      assert.equal(me.body.tier_name, names[tier]);
      assert.equal(me.body.sends_this_period, 7);
      assert.match(me.body.subscription_expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(me.body.subscription_expires_at) > Date.now());

      const usage = await call(gw.url, created.sandboxApiKey, 'GET', '/v1/usage');
      assert.equal(usage.status, 200);
      assert.deepEqual(Object.keys(usage.body).sort(), ['overageEnabled', 'remaining', 'resetsAt', 'tier', 'usage']);
      assert.equal(usage.body.tier, tier);
      assert.equal(usage.body.usage, 7);
      assert.equal(usage.body.remaining, sends[tier] - 7);
      assert.equal(usage.body.overageEnabled, tier === 2);
      const next = new Date();
      assert.equal(usage.body.resetsAt, new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 1)).toISOString());
    }
  });
});
