import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

describe('a schedule end to end (real clock, every background loop running)', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50' } });
    acme = await gw.createProtocol({ tier: 2 });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com', telegramChatId: '77' });
  });
  after(() => gw.close());

  it('a schedule two seconds ahead produces a delivered notification', async () => {
    const due = new Date(Date.now() + 2000);
    const created = await call(gw.url, acme.apiKey, 'POST', '/v1/schedule', {
      wallet,
      subject: 'Vote closes soon',
      body: 'Proposal **42** closes in one hour.',
      category: 'governance',
      preferredChannel: 'email',
      scheduledFor: due.toISOString(),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(Date.parse(created.body.nextRunAt), due.getTime());

    const pending = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.body.id}`);
    assert.equal(pending.body.status, 'PENDING');
    assert.deepEqual(pending.body.runs, []);

    const done = await waitFor(async () => {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${created.body.id}`);
      return res.body.status === 'PENDING' ? undefined : res.body;
    }, 15_000);
    assert.equal(done.status, 'COMPLETED');
    assert.equal(done.runs.length, 1);
    assert.equal(Date.parse(done.runs[0].occurrence), due.getTime());
    assert.ok(Date.parse(done.runs[0].firedAt) >= due.getTime(), 'never early');

    const notificationId = done.runs[0].notificationId;
    const delivered = await waitFor(async () => {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${notificationId}`);
      return res.body.status === 'delivered' ? res.body : undefined;
    }, 15_000);
    assert.equal(delivered.schedule_id, created.body.id);
    assert.equal(delivered.delivery_channel, 'email');
    assert.equal(delivered.attempts[0].provider, 'capture');
    assert.ok(Date.parse(delivered.created_at) >= due.getTime());

    const captured = await call(gw.url, acme.apiKey, 'GET', `/v1/sandbox/messages?wallet=${wallet}`);
    assert.ok(captured.body.data.some((m: any) => m.notificationId === notificationId && m.subject === 'Vote closes soon'));
  });
});
