/**
 * A webhook chain's writes are made again when the database's answer does not come (see
 * jobs/until-done.ts). A write that committed although its answer was lost must not be counted
 * twice, and a stop must not wait for a database that is gone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Queryable } from '../../packages/server/src/db/connection.js';
import { webhookLoop } from '../../packages/server/src/webhooks/webhook-loop.js';
import { connectionLost } from '../support/database.js';
import { call, sleep, waitFor, type TestProtocol } from '../support/gateway.js';
import { deliveriesOf, recordNotificationEvent, registerHook, startHarness, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

describe('webhook chains when the database answer is lost', () => {
  let h: Harness;
  let receiver: Receiver;
  let acme: TestProtocol;
  let db: Queryable;
  let realQuery: Queryable['query'];

  before(async () => {
    [h, receiver] = await Promise.all([startHarness(), startReceiver()]);
    acme = await h.gw.createProtocol({ tier: 3 });
    db = h.gw.herald.deps.db;
    realQuery = db.query;
  });
  after(async () => {
    db.query = realQuery;
    await receiver.close();
    await h.close();
  });

  /**
   * Drains the due deliveries while the first record of an attempt is committed and then loses its
   * answer, as when the connection drops right after the commit.
   */
  async function drainLosingOneAnswer(): Promise<void> {
    let lost = false;
    db.query = (async (sql: string, params?: unknown[]) => {
      const result = await realQuery.call(db, sql, params);
      if (!lost && sql.includes('INSERT INTO webhook_attempts')) {
        lost = true;
        throw connectionLost();
      }
      return result;
    }) as Queryable['query'];
    try {
      await h.drain();
    } finally {
      db.query = realQuery;
    }
  }

  for (const [outcome, status] of [
    ['delivered', 200],
    ['failed', 500],
  ] as const) {
    it(`lists one attempt for one request when the record of a ${outcome} request lost its answer`, async () => {
      receiver.answer = () => ({ status, body: 'x' });
      const hook = await registerHook(h, acme.apiKey, `${receiver.url}/${outcome}`, ['notification.delivered']);
      await recordNotificationEvent(h, acme.id, 'notification.delivered', `n_lost_${outcome}`);
      await drainLosingOneAnswer();
      assert.equal(receiver.requests.filter((r) => r.path === `/${outcome}`).length, 1);
      const [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
      assert.equal(delivery.status, status === 200 ? 'succeeded' : 'pending');
      assert.equal(delivery.attempts.length, 1, JSON.stringify(delivery.attempts));
    });
  }

  it('still ends the chain when the record that deactivated the endpoint lost its answer', async () => {
    receiver.answer = () => ({ status: 500, body: 'down' });
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/failing`, ['notification.bounced']);
    // Failing for more than five days: the next failure deactivates it.
    await realQuery.call(db, 'UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1', [hook.id, new Date(h.clock.now.getTime() - 6 * 86_400_000)]);
    await recordNotificationEvent(h, acme.id, 'notification.bounced', 'n_deactivating_1');
    await recordNotificationEvent(h, acme.id, 'notification.bounced', 'n_deactivating_2');
    await drainLosingOneAnswer();
    assert.equal(receiver.requests.filter((r) => r.path === '/failing').length, 1, 'the second event is not sent to the deactivated endpoint');
    const endpoint = (await call(h.gw.url, acme.apiKey, 'GET', `/v1/webhooks/${hook.id}`)).body;
    assert.equal(endpoint.isActive, false);
    const deliveries = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    assert.deepEqual(deliveries.map((d: any) => [d.status, d.attempts.length]).sort(), [['failed', 0], ['pending', 1]].sort(), JSON.stringify(deliveries));
  });

  it('stops at once while a pass waits for room and the database is gone', async () => {
    receiver.answer = () => ({ status: 200, body: 'ok', delayMs: 300 });
    // One endpoint at a time: the pass after the first chain waits for that chain to end.
    const loop = webhookLoop(h.gw.herald.deps, { maxEndpoints: 1 });
    await registerHook(h, acme.apiKey, `${receiver.url}/room-a`, ['notification.failed']);
    await registerHook(h, acme.apiKey, `${receiver.url}/room-b`, ['notification.failed']);
    await recordNotificationEvent(h, acme.id, 'notification.failed', 'n_room');
    loop.start();
    await waitFor(async () => receiver.requests.some((r) => r.path.startsWith('/room-')), 5000, 10);
    await sleep(50);
    db.query = (async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    }) as Queryable['query'];
    const started = Date.now();
    const stopping = loop.stop();
    const stoppedIn = await Promise.race([stopping.then(() => Date.now() - started), sleep(8000).then(() => undefined)]);
    db.query = realQuery;
    await stopping;
    // Four tries of the chain's last write (0.2 + 0.4 + 0.8 s apart) at most, not the lease's minute.
    assert.ok(stoppedIn !== undefined && stoppedIn < 5000, `stopped in ${stoppedIn ?? 'over 8000'} ms`);
  });
});
