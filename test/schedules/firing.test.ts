import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, onPostgres, sleep, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { sendsThisPeriod } from '../../packages/server/src/limits/quota.js';
import { scheduleRecord } from '../../packages/server/src/schedules/schedule-views.js';
import { createCron, createOnce, notificationsOf, runsOf, startClockGateway, type ClockGateway } from './harness.js';

describe('firing schedules', () => {
  let gw: ClockGateway;
  let acme: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startClockGateway('2026-01-05T00:00:00Z');
    acme = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
  });
  after(() => gw.close());

  const record = async (id: string, key = acme.apiKey) => (await call(gw.url, key, 'GET', `/v1/schedule/${id}`)).body;
  /** The same view without HTTP, for Developer-tier protocols (2 requests per second). */
  const view = (protocolId: string, id: string) => scheduleRecord(gw.herald.deps, protocolId, id);
  /** Moves the clock on and returns an ISO date-time `ms` after the new now. */
  const soon = (ms = 60_000) => new Date(gw.advance(3_600_000).getTime() + ms).toISOString();

  it('fires a one-time schedule once through the send path and completes it', async () => {
    const at = soon();
    const created = await createOnce(gw, acme.apiKey, wallet, at);
    gw.setClock(new Date(Date.parse(at) - 1));
    assert.equal(await gw.fire(), 0, 'nothing is due a millisecond early');
    gw.setClock(at);
    assert.equal(await gw.fire(), 1);
    assert.equal(await gw.fire(), 0);
    const [notification] = await notificationsOf(gw, created.id);
    assert.equal(notification.idempotency_key, `${created.id}:${at}`);
    assert.equal(notification.schedule_id, created.id);
    assert.equal(notification.status, 'queued');
    assert.equal(notification.created_at.toISOString(), at);
    const body = await record(created.id);
    assert.equal(body.status, 'COMPLETED');
    assert.equal(body.runs[0].notificationId, notification.id);
  });

  it("sets each notification's schedule when a group fires together", async () => {
    const other = await gw.createProtocol({ tier: 3 });
    const at = soon();
    const mine = [await createOnce(gw, acme.apiKey, wallet, at), await createOnce(gw, acme.apiKey, wallet, at), await createCron(gw, acme.apiKey, wallet, '* * * * *')];
    const theirs = await createOnce(gw, other.apiKey, wallet, at);
    gw.setClock(at);
    assert.equal(await gw.fire(), 4);
    for (const created of [...mine, theirs]) {
      const rows = await notificationsOf(gw, created.id);
      assert.equal(rows.length, 1, created.id);
      assert.equal(rows[0].schedule_id, created.id);
    }
  });

  it('records opted_out for an unsubscribed wallet and completes', async () => {
    const w = await registeredWallet(gw.url, { email: 'gone@example.com' });
    const created = await createOnce(gw, acme.apiKey, w, soon());
    await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${w}`);
    gw.advance(60_000);
    await gw.fireAll();
    const body = await record(created.id);
    assert.equal(body.status, 'COMPLETED');
    assert.equal(body.runs[0].outcome, 'opted_out');
    assert.equal(body.failureReason, null);
  });

  it('fails a one-time schedule whose wallet was erased since, with the reason', async () => {
    const w = await registeredWallet(gw.url, { email: 'erased@example.com' });
    const created = await createOnce(gw, acme.apiKey, w, soon());
    await gw.herald.deps.db.query('DELETE FROM identities WHERE wallet = $1', [w]);
    gw.advance(60_000);
    await gw.fireAll();
    const body = await record(created.id);
    assert.equal(body.status, 'FAILED');
    assert.equal(body.failureReason, 'wallet not registered');
    assert.equal(body.runs[0].outcome, 'failed');
    assert.equal(body.runs[0].error, 'wallet not registered');
    const notification = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${body.runs[0].notificationId}`);
    assert.equal(notification.body.status, 'failed');
  });

  it('out of quota: a one-time schedule FAILS, a cron schedule records the failed run and moves on', async () => {
    const dev = await gw.createProtocol({ tier: 0 });
    soon();
    const every = await createCron(gw, dev.apiKey, wallet, '*/5 * * * *');
    const at = every.nextRunAt;
    const one = await createOnce(gw, dev.apiKey, wallet, at);
    const period = `${at.slice(0, 7)}-01`;
    await gw.herald.deps.db.query('INSERT INTO usage_periods (protocol_id, period_start, sends) VALUES ($1, $2, 1000)', [dev.id, period]);
    gw.setClock(at);
    await gw.fireAll();
    const failed = await view(dev.id, one.id);
    assert.equal(failed.status, 'FAILED');
    assert.match(failed.failureReason!, /^INSUFFICIENT_QUOTA: This request needs 1 send and fewer are left of the monthly quota of 1000$/);
    assert.equal(failed.runs[0].outcome, 'failed');
    assert.equal(failed.runs[0].notificationId, null);
    const recurring = await view(dev.id, every.id);
    assert.equal(recurring.status, 'PENDING');
    assert.equal(recurring.failureReason, null);
    assert.equal(recurring.runs[0].outcome, 'failed');
    assert.match(recurring.runs[0].error!, /^INSUFFICIENT_QUOTA/);
    assert.equal(Date.parse(recurring.nextRunAt!), Date.parse(recurring.runs[0].occurrence) + 300_000);
    assert.equal((await notificationsOf(gw, one.id)).length + (await notificationsOf(gw, every.id)).length, 0);
    const events = await gw.herald.deps.db.query(`SELECT 1 FROM events WHERE protocol_id = $1 AND type = 'quota.exceeded'`, [dev.id]);
    assert.equal(events.length, 1);
  });

  it('records a run refused by the send path with the field named as a send names it', async () => {
    const template = await call(gw.url, acme.apiKey, 'POST', '/v1/templates/email', {
      name: 'Digest', category: 'governance', subjectTemplate: 'Digest {{a}}', htmlSource: '<p>{{a}}</p>', textSource: '{{a}}',
    });
    assert.equal(template.status, 201, JSON.stringify(template.body));
    const every = await createCron(gw, acme.apiKey, wallet, '*/5 * * * *', { templateId: template.body.templateId, templateVariables: { a: '1' } });
    // A new version needs a variable the schedule does not have.
    const updated = await call(gw.url, acme.apiKey, 'PUT', `/v1/templates/email/${template.body.templateId}`, { htmlSource: '<p>{{a}} {{b}}</p>' });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    gw.setClock(every.nextRunAt);
    await gw.fireAll();
    const recurring = await view(acme.id, every.id);
    assert.equal(recurring.runs[0].outcome, 'failed');
    assert.match(recurring.runs[0].error!, /^VALIDATION_ERROR: templateVariables has no value for "b"/);
    assert.equal(recurring.status, 'PENDING');
  });

  it('sends as many of a group as the quota allows', async () => {
    const dev = await gw.createProtocol({ tier: 0 });
    const at = soon();
    const both = [await createOnce(gw, dev.apiKey, wallet, at), await createOnce(gw, dev.apiKey, wallet, at)];
    await gw.herald.deps.db.query('INSERT INTO usage_periods (protocol_id, period_start, sends) VALUES ($1, $2, 999)', [dev.id, `${at.slice(0, 7)}-01`]);
    gw.setClock(at);
    await gw.fireAll();
    const statuses = await Promise.all(both.map(async (s) => (await view(dev.id, s.id)).status));
    assert.deepEqual(statuses.sort(), ['COMPLETED', 'FAILED']);
    assert.equal(await sendsThisPeriod(gw.herald.deps.db, dev.id, gw.clock()), 1000);
  });

  it('keeps a cron schedule PENDING, its nextRunAt advancing on local time across DST', async () => {
    gw.setClock('2026-03-06T12:00:00Z');
    const created = await createCron(gw, acme.apiKey, wallet, '0 9 * * *', { timezone: 'America/New_York' });
    assert.equal(created.nextRunAt, '2026-03-06T14:00:00Z');
    const seen: string[] = [];
    let next = created.nextRunAt;
    for (let i = 0; i < 3; i++) {
      gw.setClock(new Date(Date.parse(next) + 150));
      await gw.fireAll();
      const body = await record(created.id);
      assert.equal(body.status, 'PENDING');
      next = body.nextRunAt;
      seen.push(next);
    }
    // Saturday 7 March 09:00 EST, Sunday 8 March 09:00 EDT (after the change), Monday 9 March.
    assert.deepEqual(seen, ['2026-03-07T14:00:00Z', '2026-03-08T13:00:00Z', '2026-03-09T13:00:00Z']);
    const body = await record(created.id);
    assert.deepEqual(
      body.runs.map((r: any) => r.occurrence),
      ['2026-03-08T13:00:00Z', '2026-03-07T14:00:00Z', '2026-03-06T14:00:00Z'],
    );
    assert.equal(body.runCount, 3);
    assert.equal((await notificationsOf(gw, created.id)).length, 3);
  });

  it('after downtime fires the latest missed occurrence once and jumps past now', async () => {
    gw.setClock('2026-04-01T10:01:00Z');
    const created = await createCron(gw, acme.apiKey, wallet, '*/5 * * * *');
    assert.equal(created.nextRunAt, '2026-04-01T10:05:00Z');
    gw.setClock('2026-04-01T13:07:30Z');
    await gw.fireAll();
    assert.equal(await gw.fire(), 0);
    const body = await record(created.id);
    assert.equal(body.nextRunAt, '2026-04-01T13:10:00Z');
    assert.deepEqual(body.runs.map((r: any) => r.occurrence), ['2026-04-01T13:05:00Z']);
    assert.equal((await notificationsOf(gw, created.id)).length, 1);
  });

  it('a one-time schedule fires once however late the worker is', async () => {
    gw.setClock('2026-04-02T00:00:00Z');
    const created = await createOnce(gw, acme.apiKey, wallet, '2026-04-02T00:05:00Z');
    gw.setClock('2026-04-09T00:00:00Z');
    await gw.fireAll();
    const body = await record(created.id);
    assert.equal(body.status, 'COMPLETED');
    assert.equal(body.runs[0].occurrence, '2026-04-02T00:05:00Z');
  });

  it('an occurrence fired a second time is a duplicate, never a second notification', async () => {
    gw.setClock('2026-04-03T00:00:00Z');
    const created = await createOnce(gw, acme.apiKey, wallet, '2026-04-03T00:01:00Z');
    gw.setClock('2026-04-03T00:01:00Z');
    await gw.fireAll();
    const [original] = await notificationsOf(gw, created.id);
    // As if a second worker had got the row for the same occurrence (a lost lease).
    await gw.herald.deps.db.query(
      `UPDATE schedules SET status = 'PENDING', next_run_at = '2026-04-03T00:01:00Z', locked_until = NULL WHERE id = $1`,
      [created.id],
    );
    await gw.herald.deps.db.query('DELETE FROM schedule_runs WHERE schedule_id = $1', [created.id]);
    gw.advance(10_000);
    await gw.fireAll();
    const rows = await notificationsOf(gw, created.id);
    assert.equal(rows.length, 1);
    const body = await record(created.id);
    assert.equal(body.status, 'COMPLETED');
    assert.equal(body.runs[0].outcome, 'duplicate');
    assert.equal(body.runs[0].notificationId, original.id);
  });

  it('two workers firing at once never send an occurrence twice', async () => {
    const other = await gw.createProtocol({ tier: 3 });
    gw.setClock('2026-05-01T00:00:00Z');
    const created = [];
    for (let i = 0; i < 30; i++) created.push(await createOnce(gw, i % 2 ? acme.apiKey : other.apiKey, wallet, '2026-05-01T00:01:00Z'));
    for (let i = 0; i < 6; i++) created.push(await createCron(gw, i % 2 ? acme.apiKey : other.apiKey, wallet, '*/2 * * * *'));
    for (const at of ['2026-05-01T00:02:00Z', '2026-05-01T00:04:00Z']) {
      gw.setClock(at);
      const claimed = await Promise.all([gw.fire({ batchSize: 7 }), gw.fire({ batchSize: 7 }), gw.fire({ batchSize: 7 })]);
      assert.ok(claimed.reduce((a, b) => a + b, 0) > 0);
      await Promise.all([gw.fireAll(), gw.fireAll()]);
    }
    for (const schedule of created) {
      const rows = await notificationsOf(gw, schedule.id);
      const runs = await runsOf(gw, schedule.id);
      const expected = schedule.nextRunAt === '2026-05-01T00:01:00Z' ? 1 : 2;
      assert.equal(rows.length, expected, schedule.id);
      assert.equal(runs.length, expected, schedule.id);
      assert.equal(new Set(rows.map((r) => r.idempotency_key)).size, expected);
    }
  });

  it('cancel racing a firing worker: either the run or the cancel wins, and a cancelled schedule never fires', async (t) => {
    const rounds = onPostgres ? 40 : 8;
    const tally = { onceCancelled: 0, onceFired: 0, cronFiredThenCancelled: 0, cronCancelled: 0 };
    const cancelled: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const at = soon();
      const single = await createOnce(gw, acme.apiKey, wallet, at);
      const recurring = await createCron(gw, acme.apiKey, wallet, '* * * * *');
      gw.setClock(new Date(Math.max(Date.parse(at), Date.parse(recurring.nextRunAt))));
      // Staggered starts, so both orders (and true overlap on PostgreSQL) occur.
      const cancel = async (id: string) => {
        await sleep(i % 3);
        return (await call(gw.url, acme.apiKey, 'DELETE', `/v1/schedule/${id}`)).body.cancelled as boolean;
      };
      const fire = async () => {
        await sleep(i % 2 ? 3 : 0);
        return gw.fire();
      };
      const [, onceCancelled, cronCancelled] = await Promise.all([fire(), cancel(single.id), cancel(recurring.id)]);

      const one = await record(single.id);
      const oneSent = await notificationsOf(gw, single.id);
      const oneRuns = await runsOf(gw, single.id);
      if (onceCancelled) {
        tally.onceCancelled++;
        assert.equal(one.status, 'CANCELLED');
        assert.equal(oneSent.length, 0, 'a one-time schedule cancelled in time sends nothing');
        assert.equal(oneRuns.length, 0);
        cancelled.push(single.id);
      } else {
        tally.onceFired++;
        assert.equal(one.status, 'COMPLETED');
        assert.equal(oneSent.length, 1);
        assert.equal(oneRuns.length, 1);
      }

      assert.equal(cronCancelled, true, 'a cron schedule stays PENDING until cancelled');
      assert.equal((await record(recurring.id)).status, 'CANCELLED');
      const cronSent = await notificationsOf(gw, recurring.id);
      assert.equal(cronSent.length, (await runsOf(gw, recurring.id)).length);
      assert.ok(cronSent.length <= 1);
      if (cronSent.length) tally.cronFiredThenCancelled++;
      else tally.cronCancelled++;
      cancelled.push(recurring.id);
    }
    const sentBefore = await Promise.all(cancelled.map(async (id) => (await notificationsOf(gw, id)).length));
    gw.advance(3_600_000);
    await gw.fireAll();
    const sentAfter = await Promise.all(cancelled.map(async (id) => (await notificationsOf(gw, id)).length));
    assert.deepEqual(sentAfter, sentBefore, 'nothing fires after a successful cancel');
    t.diagnostic(JSON.stringify(tally));
  });
});
