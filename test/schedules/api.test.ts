import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';
import { createCron, createOnce, message, notificationsOf, runsOf, startClockGateway, type ClockGateway } from './harness.js';

const SCHEDULE_ID = /^sched_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('schedules API', () => {
  let gw: ClockGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startClockGateway('2026-01-01T00:00:00Z');
    acme = await gw.createProtocol({ tier: 3 });
    rival = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
  });
  after(() => gw.close());

  const post = (path: string, body: unknown, key = acme.apiKey) => call(gw.url, key, 'POST', path, body);
  const once = (extra: Record<string, unknown> = {}) => ({ wallet, ...message(), scheduledFor: '2026-06-01T09:00:00Z', ...extra });
  const cron = (extra: Record<string, unknown> = {}) => ({ wallet, ...message(), cronExpr: '0 9 * * MON-FRI', ...extra });
  const countSchedules = async () => (await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules'))[0].n;

  describe('creation', () => {
    it('takes the wall clock of scheduledFor in the timezone (the contract example)', async () => {
      const res = await post('/v1/schedule', once({ timezone: 'America/New_York' }));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ['id', 'nextRunAt', 'status']);
      assert.match(res.body.id, SCHEDULE_ID);
      assert.equal(res.body.status, 'PENDING');
      assert.equal(res.body.nextRunAt, '2026-06-01T13:00:00Z');
    });

    it('without a timezone, takes scheduledFor as the instant it writes; with one, ignores its offset', async () => {
      assert.equal((await post('/v1/schedule', once())).body.nextRunAt, '2026-06-01T09:00:00Z');
      assert.equal((await post('/v1/schedule', once({ scheduledFor: '2026-06-01T09:00:00' }))).body.nextRunAt, '2026-06-01T09:00:00Z');
      const offset = await post('/v1/schedule', once({ scheduledFor: '2026-06-01T09:00:00+02:00' }));
      assert.equal(offset.body.nextRunAt, '2026-06-01T07:00:00Z');
      assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${offset.body.id}`)).body.timezone, 'UTC');
      assert.equal((await post('/v1/schedule', once({ scheduledFor: '2026-06-01T09:30:00-0530' }))).body.nextRunAt, '2026-06-01T15:00:00Z');
      assert.equal((await post('/v1/schedule', once({ scheduledFor: '2026-06-01T09:00:00+02:00', timezone: 'UTC' }))).body.nextRunAt, '2026-06-01T09:00:00Z');
      assert.equal((await post('/v1/schedule', once({ scheduledFor: '2026-06-01T09:00', timezone: 'Europe/Berlin' }))).body.nextRunAt, '2026-06-01T07:00:00Z');
      assert.equal((await post('/v1/schedule', once({ scheduledFor: '2026-06-01T09:00+02:00', timezone: 'Europe/Berlin' }))).body.nextRunAt, '2026-06-01T07:00:00Z');
    });

    it('runs a time skipped by spring-forward when the gap ends', async () => {
      const res = await post('/v1/schedule', once({ scheduledFor: '2026-03-08T02:30:00', timezone: 'America/New_York' }));
      assert.equal(res.body.nextRunAt, '2026-03-08T07:00:00Z');
    });

    it('creates a cron schedule whose first run is the next occurrence in the zone', async () => {
      // 1 January 2026 is a Thursday; 09:00 in New York is 14:00Z in winter.
      const res = await post('/v1/schedule/cron', cron({ timezone: 'America/New_York' }));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ['id', 'nextRunAt', 'status']);
      assert.match(res.body.id, SCHEDULE_ID);
      assert.equal(res.body.status, 'PENDING');
      assert.equal(res.body.nextRunAt, '2026-01-01T14:00:00Z');
      const record = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${res.body.id}`);
      assert.equal(record.body.kind, 'cron');
      assert.equal(record.body.cronExpr, '0 9 * * MON-FRI');
      assert.equal(record.body.scheduledFor, null);
    });

    it('keeps every notify field and shows the schedule with GET', async () => {
      const res = await post('/v1/schedule', once({ timezone: 'america/new_york', priority: 'critical', preferredChannel: 'email', receipt: true }));
      const record = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${res.body.id}`);
      assert.equal(record.status, 200);
      assert.deepEqual(record.body, {
        id: res.body.id,
        kind: 'once',
        wallet,
        subject: 'Rewards ready',
        body: 'Claim your **staking rewards**.',
        category: 'defi',
        priority: 'critical',
        preferredChannel: 'email',
        receipt: true,
        templateId: null,
        environment: 'production',
        status: 'PENDING',
        nextRunAt: '2026-06-01T13:00:00Z',
        cronExpr: null,
        timezone: 'America/New_York',
        scheduledFor: '2026-06-01T09:00:00',
        lastRunAt: null,
        failureReason: null,
        createdAt: '2026-01-01T00:00:00Z',
        runs: [],
        runCount: 0,
      });
    });

    it('records the environment of the key', async () => {
      const res = await post('/v1/schedule', once(), acme.sandboxApiKey);
      const record = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${res.body.id}`);
      assert.equal(record.body.environment, 'sandbox');
    });
  });

  describe('validation', () => {
    const shared: [string, (b: any) => any, RegExp][] = [
      ['missing wallet', ({ wallet: _w, ...b }) => b, /^wallet is required$/],
      ['missing subject', ({ subject: _s, ...b }) => b, /^subject is required$/],
      ['missing body', ({ body: _b, ...b }) => b, /^body is required$/],
      ['missing category', ({ category: _c, ...b }) => b, /^category is required$/],
      ['a bad wallet', (b) => ({ ...b, wallet: 'not-a-wallet' }), /^wallet must be a Solana wallet address/],
      ['an empty subject', (b) => ({ ...b, subject: '' }), /^subject/],
      ['an unknown category', (b) => ({ ...b, category: 'spam' }), /^category must be one of: defi, governance, system, marketing, security$/],
      ['an unknown priority', (b) => ({ ...b, priority: 'urgent' }), /^priority must be one of: normal, important, critical$/],
      ['an unknown channel', (b) => ({ ...b, preferredChannel: 'fax' }), /^preferredChannel must be one of: email, telegram, sms$/],
      ['receipt as a string', (b) => ({ ...b, receipt: 'yes' }), /^receipt must be a boolean$/],
      ['templateVariables as an array', (b) => ({ ...b, templateVariables: [1] }), /^templateVariables must be an object$/],
      ['an unknown timezone', (b) => ({ ...b, timezone: 'Mars/Base' }), /^timezone must be an IANA time zone name such as America\/New_York, got "Mars\/Base"$/],
      ['a fixed-offset timezone', (b) => ({ ...b, timezone: '+03:00' }), /^timezone must be an IANA time zone name/],
      ['timezone as a number', (b) => ({ ...b, timezone: 5 }), /^timezone must be a string$/],
      ['an empty timezone', (b) => ({ ...b, timezone: '' }), /^timezone must not be empty$/],
    ];
    const oneTime: [string, (b: any) => any, RegExp][] = [
      ['missing scheduledFor', ({ scheduledFor: _s, ...b }) => b, /^scheduledFor is required$/],
      ['scheduledFor as a number', (b) => ({ ...b, scheduledFor: 1780000000 }), /^scheduledFor must be a string$/],
      ['scheduledFor in words', (b) => ({ ...b, scheduledFor: 'tomorrow' }), /^scheduledFor must be an ISO 8601 date-time such as 2027-06-01T09:00:00, got "tomorrow"$/],
      ['scheduledFor as a date only', (b) => ({ ...b, scheduledFor: '2026-06-01' }), /^scheduledFor must be an ISO 8601 date-time/],
      ['scheduledFor on 30 February', (b) => ({ ...b, scheduledFor: '2026-02-30T09:00:00Z' }), /^scheduledFor must be an ISO 8601 date-time/],
      ['scheduledFor at 24:00', (b) => ({ ...b, scheduledFor: '2026-06-01T24:00:00Z' }), /^scheduledFor must be an ISO 8601 date-time/],
      ['scheduledFor with a 99-hour offset', (b) => ({ ...b, scheduledFor: '2026-06-01T09:00:00+99:00' }), /^scheduledFor must be an ISO 8601 date-time/],
      ['scheduledFor with a 75-minute offset', (b) => ({ ...b, scheduledFor: '2026-06-01T09:00:00+05:75' }), /^scheduledFor must be an ISO 8601 date-time/],
      ['scheduledFor past year 9999', (b) => ({ ...b, scheduledFor: '9999-12-31T23:00:00-05:00' }), /^scheduledFor must be before 9999-12-31T00:00:00Z/],
      ['scheduledFor past year 9999 in its zone', (b) => ({ ...b, scheduledFor: '9999-12-31T23:00:00', timezone: 'America/New_York' }), /^scheduledFor must be before 9999-12-31/],
      [
        'scheduledFor in the past',
        (b) => ({ ...b, scheduledFor: '2025-12-31T23:59:59Z' }),
        /^scheduledFor must be in the future: 2025-12-31T23:59:59Z in UTC is 2025-12-31T23:59:59Z, now is 2026-01-01T00:00:00Z$/,
      ],
      [
        'scheduledFor in the first century',
        (b) => ({ ...b, scheduledFor: '0050-06-01T09:00:00Z' }),
        /^scheduledFor must be in the future: 0050-06-01T09:00:00Z in UTC is 0050-06-01T09:00:00Z, now is 2026-01-01T00:00:00Z$/,
      ],
      ['scheduledFor exactly now', (b) => ({ ...b, scheduledFor: '2026-01-01T00:00:00' }), /^scheduledFor must be in the future/],
      [
        'scheduledFor in the past once taken in the zone',
        (b) => ({ ...b, scheduledFor: '2026-01-01T05:00:00', timezone: 'Asia/Tokyo' }),
        /^scheduledFor must be in the future: 2026-01-01T05:00:00 in Asia\/Tokyo is 2025-12-31T20:00:00Z/,
      ],
    ];
    const recurring: [string, string | number | undefined, RegExp][] = [
      ['missing cronExpr', undefined, /^cronExpr is required$/],
      ['cronExpr as a number', 5, /^cronExpr must be a string$/],
      ['four fields', '0 9 * *', /^cronExpr must have exactly 5 fields \(minute hour day-of-month month day-of-week\), got 4$/],
      ['six fields', '0 0 9 * * *', /^cronExpr must have exactly 5 fields .*got 6; seconds and years are not supported$/],
      ['a macro', '@daily', /^cronExpr must have exactly 5 fields .*got 1; macros such as @daily are not supported/],
      ['minute 60', '60 9 * * *', /^cronExpr minute field: 60 is out of range \(0-59\)$/],
      ['hour 24', '0 24 * * *', /^cronExpr hour field: 24 is out of range \(0-23\)$/],
      ['day 32', '0 9 32 * *', /^cronExpr day-of-month field: 32 is out of range \(1-31\)$/],
      ['month 13', '0 9 * 13 *', /^cronExpr month field: 13 is out of range \(1-12\)$/],
      ['weekday 8', '0 9 * * 8', /^cronExpr day-of-week field: 8 is out of range \(0-7\)$/],
      ['step 0', '*/0 9 * * *', /^cronExpr minute field: step "0" must be a whole number from 1 to 59$/],
      ['a step that is not a number', '0 */two * * *', /^cronExpr hour field: step "two" must be a whole number from 1 to 23$/],
      ['two steps', '0 1/2/3 * * *', /^cronExpr hour field: "1\/2\/3" has more than one step \(\/\)$/],
      ['an unknown month name', '0 9 * JANUARY *', /^cronExpr month field: unknown name "JANUARY" \(use JAN-DEC or 1-12\)$/],
      ['an unknown day name', '0 9 * * FUNDAY', /^cronExpr day-of-week field: unknown name "FUNDAY" \(use SUN-SAT or 0-7\)$/],
      ['a name in the hour field', '0 noon * * *', /^cronExpr hour field: "noon" is not a number \(0-23\)$/],
      ['a Quartz L', '0 9 L * *', /^cronExpr day-of-month field: "L" is not a number \(1-31\)$/],
      ['a backwards range', '0 22-2 * * *', /^cronExpr hour field: range 22-2 runs backwards/],
      ['an empty list item', '0 9,,10 * * *', /^cronExpr hour field: "9,,10" has an empty list item$/],
      ['a date that never comes', '0 9 30 2 *', /^cronExpr never fires: no month in "2" has a day "30"$/],
    ];

    const refuses = async (path: string, body: unknown, pattern: RegExp) => {
      const before = await countSchedules();
      const res = await post(path, body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, pattern);
      assert.equal(await countSchedules(), before);
    };

    for (const [name, mutate, pattern] of [...shared, ...oneTime]) {
      it(`POST /v1/schedule refuses ${name}`, () => refuses('/v1/schedule', mutate(once()), pattern));
    }
    for (const [name, mutate, pattern] of shared) {
      it(`POST /v1/schedule/cron refuses ${name}`, () => refuses('/v1/schedule/cron', mutate(cron()), pattern));
    }
    for (const [name, expression, pattern] of recurring) {
      it(`POST /v1/schedule/cron refuses ${name}`, () => {
        const { cronExpr: _c, ...body } = cron();
        return refuses('/v1/schedule/cron', expression === undefined ? body : { ...body, cronExpr: expression }, pattern);
      });
    }

    it("refuses the other kind's defining field, which would otherwise make a schedule of the wrong kind", async () => {
      await refuses('/v1/schedule', { ...once(), cronExpr: '0 9 * * *' }, /^cronExpr: a recurring schedule is created with POST \/v1\/schedule\/cron; this route sends once, at scheduledFor$/);
      await refuses('/v1/schedule/cron', { ...cron(), scheduledFor: '2030-01-01T09:00:00Z' }, /^scheduledFor: a one-time schedule is created with POST \/v1\/schedule; this route sends at every occurrence of cronExpr$/);
    });

    it('accepts a wall clock that is past in UTC but future in the zone', async () => {
      const res = await post('/v1/schedule', once({ scheduledFor: '2025-12-31T20:00:00', timezone: 'America/Los_Angeles' }));
      assert.equal(res.status, 201);
      assert.equal(res.body.nextRunAt, '2026-01-01T04:00:00Z');
    });

    it('limits the body size by tier, as a send does', async () => {
      const dev = await gw.createProtocol({ tier: 0 });
      const res = await post('/v1/schedule', once({ body: 'x'.repeat(10 * 1024 + 1) }), dev.apiKey);
      assert.equal(res.status, 400);
      assert.equal(res.body.message, 'body is 10241 bytes; the Developer tier allows 10240');
    });

    it('refuses a blank subject or body, as a send does', async () => {
      for (const [field, value] of [['subject', ' \u200b '], ['body', '\n\t']]) {
        const res = await post('/v1/schedule', once({ [field]: value }));
        assert.equal(res.status, 400, field);
        assert.match(res.body.message, new RegExp(`^${field} is blank: `));
      }
    });

    it('answers 404 WALLET_NOT_REGISTERED for a wallet with no identity, storing nothing', async () => {
      const before = await countSchedules();
      const stranger = makeWallet().address;
      for (const [path, body] of [['/v1/schedule', once({ wallet: stranger })], ['/v1/schedule/cron', cron({ wallet: stranger })]] as const) {
        const res = await post(path, body);
        assert.equal(res.status, 404);
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'WALLET_NOT_REGISTERED');
      }
      assert.equal(await countSchedules(), before);
    });

    it('gates templates by tier (403) and refuses unknown templates (404)', async () => {
      const dev = await gw.createProtocol({ tier: 0 });
      for (const path of ['/v1/schedule', '/v1/schedule/cron']) {
        const body = path === '/v1/schedule' ? once({ templateId: 'tmpl_x' }) : cron({ templateId: 'tmpl_x' });
        const gated = await post(path, body, dev.apiKey);
        assert.equal(gated.status, 403);
        assert.equal(gated.body.code, 'TIER_REQUIRED');
        const unknown = await post(path, body);
        assert.equal(unknown.status, 404);
        assert.equal(unknown.body.code, 'TEMPLATE_NOT_FOUND');
        assert.equal(unknown.body.message, 'Template tmpl_x does not exist');
      }
    });

    it('documents every schedule route in the OpenAPI document', async () => {
      const doc = (await call(gw.url, undefined, 'GET', '/openapi.json')).body;
      for (const [path, method] of [
        ['/v1/schedule', 'post'],
        ['/v1/schedule/cron', 'post'],
        ['/v1/schedule', 'get'],
        ['/v1/schedule/{id}', 'get'],
        ['/v1/schedule/{id}', 'delete'],
      ]) {
        const operation = doc.paths[path]?.[method];
        assert.ok(operation, `${method} ${path}`);
        assert.deepEqual(operation.tags, ['schedules']);
        assert.ok(operation.summary);
      }
    });

    it('needs an API key', async () => {
      const res = await post('/v1/schedule', once(), 'hrld_live_nope');
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'INVALID_API_KEY');
    });
  });

  describe('listing', () => {
    it('pages newest first, counts the total, and shows only the caller’s schedules', async () => {
      const lister = await gw.createProtocol({ tier: 3 });
      const ids: string[] = [];
      for (let i = 0; i < 23; i++) {
        const created = i % 3 === 0 ? await createCron(gw, lister.apiKey, wallet, `${i} 9 * * *`) : await createOnce(gw, lister.apiKey, wallet, `2026-07-01T09:${String(i).padStart(2, '0')}:00`);
        ids.push(created.id);
      }
      const newestFirst = [...ids].reverse();
      const first = await call(gw.url, lister.apiKey, 'GET', '/v1/schedule');
      assert.equal(first.status, 200);
      assert.deepEqual(Object.keys(first.body).sort(), ['items', 'total']);
      assert.equal(first.body.total, 23);
      assert.deepEqual(first.body.items.map((item: any) => item.id), newestFirst.slice(0, 20));
      assert.deepEqual(Object.keys(first.body.items[0]).sort(), ['id', 'nextRunAt', 'status', 'subject', 'wallet']);
      assert.deepEqual(first.body.items[1], { id: newestFirst[1], wallet, subject: 'Rewards ready', status: 'PENDING', nextRunAt: '2026-01-01T09:21:00Z' });
      assert.deepEqual(first.body.items[2], { id: newestFirst[2], wallet, subject: 'Rewards ready', status: 'PENDING', nextRunAt: '2026-07-01T09:20:00Z' });
      const second = await call(gw.url, lister.apiKey, 'GET', '/v1/schedule?page=2');
      assert.deepEqual(second.body.items.map((item: any) => item.id), newestFirst.slice(20));
      assert.equal(second.body.total, 23);
      const small = await call(gw.url, lister.apiKey, 'GET', '/v1/schedule?page=3&limit=5');
      assert.deepEqual(small.body.items.map((item: any) => item.id), newestFirst.slice(10, 15));
      assert.equal((await call(gw.url, lister.apiKey, 'GET', '/v1/schedule?page=9')).body.items.length, 0);
      assert.equal((await call(gw.url, lister.apiKey, 'GET', '/v1/schedule?limit=100')).body.items.length, 23);
      const theirs = await call(gw.url, rival.apiKey, 'GET', '/v1/schedule');
      assert.ok(theirs.body.items.every((item: any) => !ids.includes(item.id)));
    });

    it('refuses bad page parameters', async () => {
      for (const query of ['limit=101', 'limit=0', 'page=0', 'page=x']) {
        const res = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule?${query}`);
        assert.equal(res.status, 400, query);
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'VALIDATION_ERROR');
      }
    });
  });

  describe('runs and cancelling', () => {
    it('shows the run history of a fired schedule', async () => {
      gw.setClock('2026-02-01T00:00:00Z');
      const created = await createOnce(gw, acme.apiKey, wallet, '2026-02-01T00:00:30Z');
      gw.setClock('2026-02-01T00:00:30.250Z');
      await gw.fireAll();
      const record = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.id}`);
      assert.equal(record.body.status, 'COMPLETED');
      assert.equal(record.body.nextRunAt, '2026-02-01T00:00:30Z', 'an ended schedule keeps the run it was due for');
      assert.equal(record.body.lastRunAt, '2026-02-01T00:00:30.250Z');
      assert.equal(record.body.failureReason, null);
      assert.equal(record.body.runCount, 1);
      const [run] = record.body.runs;
      assert.deepEqual(Object.keys(run).sort(), ['error', 'firedAt', 'notificationId', 'occurrence', 'outcome']);
      assert.equal(run.occurrence, '2026-02-01T00:00:30Z');
      assert.equal(run.outcome, 'queued');
      assert.equal(run.error, null);
      assert.equal(run.firedAt, '2026-02-01T00:00:30.250Z');
      const notification = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${run.notificationId}`);
      assert.equal(notification.status, 200);
      assert.equal(notification.body.schedule_id, created.id);
      assert.equal(notification.body.subject, 'Rewards ready');
      const list = await call(gw.url, acme.apiKey, 'GET', '/v1/schedule?limit=100');
      assert.deepEqual(
        list.body.items.find((item: any) => item.id === created.id),
        { id: created.id, wallet, subject: 'Rewards ready', status: 'COMPLETED', nextRunAt: '2026-02-01T00:00:30Z' },
      );
    });

    it('cancels once: true, then false; the schedule never fires', async () => {
      gw.setClock('2026-03-01T00:00:00Z');
      const created = await createCron(gw, acme.apiKey, wallet, '*/5 * * * *');
      const first = await call(gw.url, acme.apiKey, 'DELETE', `/v1/schedule/${created.id}`);
      assert.equal(first.status, 200);
      assert.deepEqual(first.body, { cancelled: true });
      const second = await call(gw.url, acme.apiKey, 'DELETE', `/v1/schedule/${created.id}`);
      assert.equal(second.status, 200);
      assert.deepEqual(second.body, { cancelled: false });
      const record = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.id}`);
      assert.equal(record.body.status, 'CANCELLED');
      assert.equal(record.body.nextRunAt, '2026-03-01T00:05:00Z', 'the occurrence cancelling called off: a timestamp, as the contract types it');
      gw.advance(3_600_000);
      await gw.fireAll();
      assert.equal((await notificationsOf(gw, created.id)).length, 0);
      assert.equal((await runsOf(gw, created.id)).length, 0);
      const listed = (await call(gw.url, acme.apiKey, 'GET', '/v1/schedule?limit=100')).body.items.find((item: any) => item.id === created.id);
      assert.deepEqual([listed.status, listed.nextRunAt], ['CANCELLED', '2026-03-01T00:05:00Z']);

      // A schedule that ended while an ended schedule's next run was cleared shows its last change.
      await gw.herald.deps.db.query("UPDATE schedules SET next_run_at = NULL, updated_at = '2026-03-01T00:01:00Z' WHERE id = $1", [created.id]);
      assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.id}`)).body.nextRunAt, '2026-03-01T00:01:00Z');
      const legacy = (await call(gw.url, acme.apiKey, 'GET', '/v1/schedule?limit=100')).body.items.find((item: any) => item.id === created.id);
      assert.equal(legacy.nextRunAt, '2026-03-01T00:01:00Z');
    });

    it("lets a sandbox key cancel a sandbox schedule, not a production one (403), and an unknown id is still 404", async () => {
      gw.setClock('2026-03-01T00:00:00Z');
      const live = await createCron(gw, acme.apiKey, wallet, '*/5 * * * *');
      const test = await createCron(gw, acme.sandboxApiKey, wallet, '*/5 * * * *');
      const refused = await call(gw.url, acme.sandboxApiKey, 'DELETE', `/v1/schedule/${live.id}`);
      assert.equal(refused.status, 403);
      assert.deepEqual([refused.body.code, refused.body.message], ['FORBIDDEN', 'Cancelling a production schedule needs a live key (hrld_live_…): it sends live messages']);
      assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${live.id}`)).body.status, 'PENDING');
      assert.deepEqual((await call(gw.url, acme.sandboxApiKey, 'DELETE', `/v1/schedule/${test.id}`)).body, { cancelled: true });
      assert.equal((await call(gw.url, acme.sandboxApiKey, 'DELETE', '/v1/schedule/sched_missing')).status, 404);
      assert.deepEqual((await call(gw.url, acme.apiKey, 'DELETE', `/v1/schedule/${live.id}`)).body, { cancelled: true });
    });

    it('answers cancelled: false for a one-time schedule that has already run, and leaves it COMPLETED', async () => {
      gw.setClock('2026-03-02T00:00:00Z');
      const created = await createOnce(gw, acme.apiKey, wallet, '2026-03-02T00:01:00Z');
      gw.setClock('2026-03-02T00:01:00Z');
      await gw.fireAll();
      const res = await call(gw.url, acme.apiKey, 'DELETE', `/v1/schedule/${created.id}`);
      assert.deepEqual(res.body, { cancelled: false });
      assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.id}`)).body.status, 'COMPLETED');
    });

    it('answers 404 SCHEDULE_NOT_FOUND for unknown ids and for another protocol’s schedule', async () => {
      gw.setClock('2026-03-03T00:00:00Z');
      const created = await createOnce(gw, acme.apiKey, wallet, '2026-04-01T00:00:00Z');
      for (const [key, id] of [
        [acme.apiKey, 'sched_01HZZZZZZZZZZZZZZZZZZZZZZZ'],
        [acme.apiKey, 'nope'],
        [rival.apiKey, created.id],
      ]) {
        for (const method of ['GET', 'DELETE']) {
          const res = await call(gw.url, key, method, `/v1/schedule/${id}`);
          assert.equal(res.status, 404, `${method} ${id}`);
          assert.ok(isErrorBody(res.body));
          assert.equal(res.body.code, 'SCHEDULE_NOT_FOUND');
          assert.equal(res.body.message, `Schedule ${id} not found`);
        }
      }
      assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.id}`)).body.status, 'PENDING');
    });

    it('answers every other method on /v1/schedule/cron with 405 and Allow: POST, with or without a key', async () => {
      for (const key of [acme.apiKey, undefined]) {
        for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
          const res = await call(gw.url, key, method, '/v1/schedule/cron', method.startsWith('P') ? {} : undefined);
          assert.equal(res.status, 405, method);
          assert.ok(isErrorBody(res.body));
          assert.equal(res.body.code, 'METHOD_NOT_ALLOWED');
          assert.equal(res.body.message, `${method} is not allowed on /v1/schedule/cron; it answers POST`);
          assert.equal(res.headers.get('allow'), 'POST');
        }
      }
      // As a path the router does not know with that method: no key needed to learn the methods.
      const put = await call(gw.url, undefined, 'PUT', '/v1/schedule');
      assert.equal(put.status, 405);
      assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
    });
  });
});
